import Foundation
import MediaDevices
import XCTest

/// Issue 34: the emulated UVC webcam (uvcvideo over USB/IP) reaches PipeWire through
/// WirePlumber's V4L2 monitor (libcamera's uvcvideo handler refuses it: vhci-hcd gives no
/// controller ID). Its MJPEG read through the node arrives byte for byte as the camera sent it,
/// and decoded is libjpeg-turbo's decode of those JPEGs, as the direct V4L2 test checks.
final class PipeWireUSBCameraTests: XCTestCase {
    override func setUpWithError() throws { try Rig.require() }

    func testMJPEGThroughPipeWireIsTheCamerasJPEGsDecoded() async throws {
        let started = Date()
        let camera = try Rig.usbCamera()
        defer { camera.close() }
        let device = try camera.device()
        let session = try CameraSession(name: "usb-camera", devices: [device.path])
        defer { session.stop() }
        let routed = try XCTUnwrap(CaptureDevice.scan(backends: [.pipewire]).devices.first { $0.path == device.path },
                                   "the USB camera's PipeWire node\n\(session.report)")
        XCTAssertEqual(routed.uniqueID, device.uniqueID, "the node's camera is the V4L2 device")
        let node = try XCTUnwrap(routed.pipeWireNodes.first)
        XCTAssertEqual(node.formats.first { $0.pixelFormat == .mjpeg }?.frameSizes.map { $0.sizes.maxSize }, USBCamera.mjpegSizes,
                       "the node offers the camera's MJPEG sizes")
        let size = Size.vga
        XCTAssertTrue(USBCamera.mjpegSizes.contains(size))
        let source = try PipeWireCameraSource(device: routed, request: FormatRequest(pixelFormat: .mjpeg, size: size, frameRate: FrameRate(30)))
        defer { source.release() }
        let log = USBFrameLog(camera: camera)
        source.consumer = log
        let i420 = try source.frameSequence(bufferSize: 4, output: OutputFormat(.yu12))
        try source.start()
        let converted = try await firstFrames(i420, count: 3, seconds: 60, stopping: source)
        source.stop()
        XCTAssertEqual(source.negotiation?.format.pixelFormat, .mjpeg)
        XCTAssertEqual(source.negotiation?.format.size, size)
        XCTAssertEqual(converted.count, 3, "I420 frames decoded from the node's MJPEG\n\(session.report)")
        XCTAssertEqual(log.byteMismatches, [], "every JPEG arrives through PipeWire as the camera sent it")
        XCTAssertEqual(source.statistics.corruptFrames, 0)
        let worstChroma = try USBCameraTests.assertDecodedAsLibjpeg(converted, size: size, log: log, camera: camera)
        let counters = log.all.compactMap(\.counter)
        XCTAssertEqual(counters.count, log.count, "every frame carries the camera's counter")
        print(String(format: "figure: USB camera MJPEG %@ through PipeWire node %u: %d JPEGs byte-equal to the camera's, %d decoded to I420 (luma exact, chroma max diff %d) in %.0f s",
                     size.description, node.id, log.count, converted.count, worstChroma, Date().timeIntervalSince(started)))
    }
}
