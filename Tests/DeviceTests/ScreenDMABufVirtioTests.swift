import CDRM
import Foundation
import Glibc
import MediaDevices
import Synchronization
import TestSupport
import XCTest

/// A KMS screen's frames carrying their framebuffer as DMA-BUF (`ScreenSource(exportsDMABuf:)`)
/// on virtio-gpu, which exports PRIME (bochs does not): runs in the rig's `--display virtio` boot.
final class ScreenDMABufVirtioTests: XCTestCase {
    override func setUpWithError() throws { try Rig.require() }

    /// The test's own reading of a frame's DMA-BUF: mapped with `DMA_BUF_IOCTL_SYNC`, compared
    /// row by row with the frame's plane.
    static func mismatch(_ frame: VideoFrame, _ dmaBuf: DMABufFrame) throws -> String? {
        let plane = frame.plane(0)
        let rowBytes = frame.width * 4
        return try dmaBuf.plane(0).withCPUAccess { mapped -> String? in
            for y in 0..<frame.height {
                let start = y * dmaBuf.plane(0).bytesPerRow
                guard start + rowBytes <= mapped.count else { return "row \(y) lies beyond the DMA-BUF (\(mapped.count) bytes)" }
                // memcmp: a generic comparison of every byte takes seconds in a debug build under emulation.
                if memcmp(mapped.baseAddress! + start, plane.bytes.baseAddress! + y * plane.bytesPerRow, rowBytes) != 0 {
                    return "row \(y) differs"
                }
            }
            return nil
        }
    }

    func testFramesCarryThePRIMEExportWithTheFramebuffersFormatAndBytes() throws {
        let pattern = try ScreenScenarios.showPattern(on: "virtio-gpu")
        do {
            let source = ScreenSource(screen: pattern.shown, exportsDMABuf: true)
            defer { source.release() }
            var descriptor: Int32 = -1
            let mismatch = try source.grabFrame { frame -> String? in
                let dmaBuf = try XCTUnwrap(frame.dmaBuf, "exportsDMABuf: the frame carries its framebuffer")
                descriptor = dup(dmaBuf.plane(0).descriptor.rawValue)
                XCTAssertEqual(dmaBuf.planeCount, 1)
                XCTAssertEqual(dmaBuf.plane(0).offset, 0, "the whole screen starts at the framebuffer's first pixel")
                XCTAssertGreaterThanOrEqual(dmaBuf.plane(0).length, 480 * dmaBuf.plane(0).bytesPerRow)
                XCTAssertNil(ScreenCheck.firstMismatch(frame, screenWidth: 640, screenHeight: 480), "the frame is the pattern")
                return try Self.mismatch(frame, dmaBuf)
            }
            defer { if descriptor >= 0 { close(descriptor) } }
            XCTAssertNil(mismatch, "the DMA-BUF, mapped by the test with DMA_BUF_IOCTL_SYNC, holds the frame's bytes")
            let framebuffer = try XCTUnwrap(source.framebuffer)
            XCTAssertEqual(framebuffer.mapping, .prime, "with an export, the automatic mapping reads through it")
            XCTAssertEqual(framebuffer.id, pattern.buffer.fb)
            // What GETFB2 said, as the frame's DMA-BUF says it.
            let grabbed = try source.grabFrame { try XCTUnwrap($0.dmaBuf) }
            XCTAssertEqual(grabbed.drmFourCC, framebuffer.drmFourCC)
            XCTAssertEqual(grabbed.drmFourCC.rawValue, cdrm_FORMAT_XRGB8888)
            XCTAssertEqual(grabbed.modifier, framebuffer.modifier ?? DMABufFrame.linearModifier)
            XCTAssertEqual(grabbed.plane(0).bytesPerRow, framebuffer.bytesPerRow)
            XCTAssertEqual(grabbed.plane(0).bytesPerRow, pattern.buffer.pitch)

            // What virtio-gpu allows with the export: importing it back on the same card.
            var handle: UInt32 = 0
            let ownImport = drmPrimeFDToHandle(pattern.display.fd, descriptor, &handle) == 0 ? 0 : errno
            XCTAssertEqual(ownImport, 0, "the DRM master's own card imports the screen's DMA-BUF: \(String(cString: strerror(ownImport)))")
            // The same buffer object: the master's own export of its dumb buffer is the same
            // DMA-BUF (a GEM object has one), so the same inode.
            var ownExport: Int32 = -1
            XCTAssertEqual(drmPrimeHandleToFD(pattern.display.fd, pattern.buffer.handle, cdrm_CLOEXEC, &ownExport), 0)
            var exported = stat(), theirs = stat()
            fstat(descriptor, &exported)
            fstat(ownExport, &theirs)
            XCTAssertEqual(exported.st_ino, theirs.st_ino, "the frame's DMA-BUF is the dumb buffer the test display shows")
            if ownExport >= 0 { close(ownExport) }
            if ownImport == 0, handle != pattern.buffer.handle {
                var gemClose = drm_gem_close(handle: handle, pad: 0)
                _ = drmIoctl(pattern.display.fd, cdrm_IOCTL_GEM_CLOSE, &gemClose)
            }
            let other = open(pattern.screen.card, O_RDWR | O_CLOEXEC)
            XCTAssertGreaterThanOrEqual(other, 0)
            defer { close(other) }
            var otherHandle: UInt32 = 0
            let otherImport = drmPrimeFDToHandle(other, descriptor, &otherHandle) == 0 ? 0 : errno
            if otherImport == 0 {
                var gemClose = drm_gem_close(handle: otherHandle, pad: 0)
                _ = drmIoctl(other, cdrm_IOCTL_GEM_CLOSE, &gemClose)
            }
            print("figure: virtio-gpu screen DMA-BUF \(framebuffer): import on the master's file: handle \(handle) (its dumb buffer is \(pattern.buffer.handle); same DMA-BUF inode: \(exported.st_ino == theirs.st_ino)); import on a second open of \(pattern.screen.card): \(otherImport == 0 ? "handle \(otherHandle)" : "refused, \(String(cString: strerror(otherImport)))")")
            XCTAssertEqual(otherImport, 0, "a second open of the card imports it too")

            // A region: the same DMA-BUF, the offset of the region's first pixel.
            let region = ScreenSource(screen: pattern.shown, region: Rect(x: 250, y: 150, width: 200, height: 120), exportsDMABuf: true)
            defer { region.release() }
            let regionMismatch = try region.grabFrame { frame -> String? in
                let dmaBuf = try XCTUnwrap(frame.dmaBuf)
                XCTAssertEqual(dmaBuf.plane(0).offset, 150 * framebuffer.bytesPerRow + 250 * 4)
                XCTAssertNil(ScreenCheck.firstMismatch(frame, screenWidth: 640, screenHeight: 480, originX: 250, originY: 150))
                return try Self.mismatch(frame, dmaBuf)
            }
            XCTAssertNil(regionMismatch, "the region's rows in the DMA-BUF are the frame's")
        }
        // Released: the exports and their mappings are gone.
        let after = ProcessFigures.assertDescriptorsBack(to: pattern.before, "after release")
        XCTAssertFalse(after.descriptorTargets.contains { $0.contains("dmabuf") }, "no DMA-BUF descriptor left: \(after.descriptorTargets)")
        XCTAssertEqual(after.deviceMaps, pattern.before.deviceMaps, "device mappings")
        XCTAssertEqual(ProcessFigures.dmaBufMappings(), pattern.mappedBefore, "no DMA-BUF mapped")
    }

    /// Collects, on the capture thread, what each frame's DMA-BUF reads back as.
    final class Checker: VideoFrameConsumer, @unchecked Sendable {
        struct Figures { var frames = 0; var withDMABuf = 0; var equal = 0; var descriptors: Set<Int32> = [] }
        let figures = Mutex(Figures())
        let done = DispatchSemaphore(value: 0)
        func consumeFrame(_ frame: VideoFrame) {
            let dmaBuf = frame.dmaBuf
            let equal = dmaBuf.map { (try? ScreenDMABufVirtioTests.mismatch(frame, $0)) == .some(nil) } ?? false
            let count = figures.withLock { figures -> Int in
                figures.frames += 1
                if let dmaBuf {
                    figures.withDMABuf += 1
                    figures.descriptors.insert(dmaBuf.plane(0).descriptor.rawValue)
                }
                if equal { figures.equal += 1 }
                return figures.frames
            }
            if count == 8 { done.signal() }
        }
        func captureDidStop(error: MediaDevicesError?) {}
    }

    func testCapturedFramesCarryItAndNothingIsLeftAfterRelease() throws {
        let pattern = try ScreenScenarios.showPattern(on: "virtio-gpu")
        do {
            let source = ScreenSource(screen: pattern.shown, frameRate: FrameRate(20), exportsDMABuf: true)
            defer { source.release() }
            let checker = Checker()
            source.consumer = checker
            try source.start()
            XCTAssertEqual(checker.done.wait(timeout: .now() + 30), .success, "8 frames")
            source.stop()
            let figures = checker.figures.withLock { $0 }
            print("figure: virtio-gpu screen capture with exportsDMABuf: \(figures.frames) frames, \(figures.withDMABuf) with a DMA-BUF, \(figures.equal) read back equal, descriptors \(figures.descriptors.sorted())")
            XCTAssertEqual(figures.withDMABuf, figures.frames, "every frame carries the export")
            XCTAssertEqual(figures.equal, figures.frames, "every export reads back as the frame")
            XCTAssertEqual(figures.descriptors.count, 1, "one export per framebuffer, not one per frame")
        }
        let after = ProcessFigures.assertDescriptorsBack(to: pattern.before, "after release")
        XCTAssertFalse(after.descriptorTargets.contains { $0.contains("dmabuf") }, "no DMA-BUF descriptor left")
        XCTAssertEqual(after.deviceMaps, pattern.before.deviceMaps, "device mappings")
        XCTAssertEqual(ProcessFigures.dmaBufMappings(), pattern.mappedBefore, "no DMA-BUF mapped")
    }

    /// Frames carrying the export, read between `DMA_BUF_IOCTL_SYNC` start and end, cost the
    /// capture thread no heap allocation per frame.
    func testCaptureWithTheExportAllocatesNothingPerFrame() throws {
        try Rig.requireAllocationCounting()
        let screen = try ScreenScenarios.loadDisplay("virtio-gpu")
        let display = try TestDisplay()
        try display.showPattern(width: 640, height: 480)
        let source = ScreenSource(screen: try ScreenScenarios.current(screen), frameRate: FrameRate(30), exportsDMABuf: true)
        defer { source.release() }
        let (probe, frames) = try CaptureRuns.allocationsWithTheSequenceUnread(source, warmUp: 5, measured: 30)
        XCTAssertEqual(source.framebuffer?.mapping, .prime)
        print("figure: heap allocations on the capture thread over 30 virtio-gpu grabs with DMA-BUF (PRIME-mapped, synced): \(probe.allocations)")
        XCTAssertEqual(probe.allocations, 0, "heap allocations on the capture thread over 30 frames")
        XCTAssertGreaterThan(frames.droppedFrames, 25)
    }
}
