import CDRM
import Foundation
import Glibc
import MediaDevices
import Synchronization
import XCTest

/// A camera frame's DMA-BUF offered to the rig's virtio-gpu (`--display virtio` boot): what the
/// GPU driver allows. Linux 6.1's virtio-gpu imports only its own buffers (and blob resources on
/// hosts that offer them); a vivid (vmalloc) DMA-BUF is refused with ENODEV. The test records
/// which, and checks the export itself end to end.
final class DMABufVirtioTests: XCTestCase {
    override func setUpWithError() throws { try Rig.require() }

    /// Takes the DMA-BUF descriptor of one frame (duplicated: the frame's is the source's).
    final class FirstExport: VideoFrameConsumer, @unchecked Sendable {
        let descriptor = Mutex<(fd: Int32, export: DMABufFrame?)>((-1, nil))
        let done = DispatchSemaphore(value: 0)
        func consumeFrame(_ frame: VideoFrame) {
            guard let dmaBuf = frame.dmaBuf else { return }
            let taken = descriptor.withLock { state -> Bool in
                guard state.fd < 0 else { return false }
                state = (dup(dmaBuf.plane(0).descriptor.rawValue), dmaBuf)
                return true
            }
            if taken { done.signal() }
        }
    }

    func testACameraDMABufOfferedToVirtioGPU() throws {
        let node = try Rig.loadVivid("n_devs=1 node_types=1")[0]
        let source = CameraSource(device: try CaptureDevice(path: node),
                                  request: FormatRequest(pixelFormat: .xbgr32, size: .vga, frameRate: FrameRate(25)), exportsDMABuf: true)
        defer { source.release() }
        let export = FirstExport()
        source.consumer = export
        try source.start()
        XCTAssertEqual(export.done.wait(timeout: .now() + 30), .success, "a frame with a DMA-BUF")
        source.stop()
        let (fd, description) = export.descriptor.withLock { $0 }
        defer { if fd >= 0 { close(fd) } }
        let dmaBuf = try XCTUnwrap(description)
        XCTAssertEqual(dmaBuf.drmFourCC.rawValue, cdrm_FORMAT_XRGB8888, "V4L2 XBGR32 is DRM XRGB8888")
        XCTAssertEqual(dmaBuf.plane(0).bytesPerRow, 640 * 4)

        _ = try ScreenScenarios.loadDisplay("virtio-gpu")
        let card = open("/dev/dri/card0", O_RDWR | O_CLOEXEC)
        XCTAssertGreaterThanOrEqual(card, 0, "the virtio-gpu card: \(String(cString: strerror(errno)))")
        defer { close(card) }
        var version = drmGetVersion(card)
        defer { drmFreeVersion(version); version = nil }
        let driver = version.map { String(cString: $0.pointee.name) } ?? "?"
        XCTAssertEqual(driver, "virtio_gpu", "this test runs in the --display virtio boot")
        var handle: UInt32 = 0
        let result = drmPrimeFDToHandle(card, fd, &handle)
        let error = result == 0 ? 0 : errno
        if result == 0 {
            var close = drm_gem_close(handle: handle, pad: 0)
            _ = drmIoctl(card, cdrm_IOCTL_GEM_CLOSE, &close)
        }
        print("figure: virtio-gpu PRIME import of a vivid DMA-BUF (XRGB8888 640x480): \(result == 0 ? "imported" : "refused, \(String(cString: strerror(error))) (errno \(error))")")
        // Linux 6.1's virtio_gpu_gem_prime_import_sg_table refuses foreign buffers with ENODEV;
        // a newer kernel may import it. Anything else is a failure of the export.
        XCTAssertTrue(result == 0 || error == ENODEV, "import: \(String(cString: strerror(error)))")
    }
}
