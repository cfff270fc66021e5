import Foundation
import MediaDevices
import XCTest

extension ScreenDMABufVirtioTests {
    /// A `frames` sequence leases the exported framebuffer (no copy): a held frame keeps its
    /// framebuffer mapped and exported across a mode change, readable until released; then
    /// nothing is left.
    func testASequenceLeasesTheFramebufferAndAHeldOneOutlivesAModeChange() async throws {
        let pattern = try ScreenScenarios.showPattern(on: "virtio-gpu")
        var summary = ""
        do {
            let source = ScreenSource(screen: pattern.shown, frameRate: FrameRate(15), exportsDMABuf: true)
            defer { source.release() }
            let started = try await CaptureRuns.startHoldingTheFirstFrame(of: source)
            let frames = started.frames
            var iterator = started.iterator
            let held = started.held
            XCTAssertTrue(held.isLeased, "the framebuffer itself, on lease")
            let heldExport = try XCTUnwrap(held.dmaBuf, "a leased screen frame carries its DMA-BUF")
            try held.withFrame { frame in
                XCTAssertNil(ScreenCheck.firstMismatch(frame, screenWidth: 640, screenHeight: 480))
                XCTAssertNil(try Self.mismatch(frame, heldExport), "the DMA-BUF reads back as the leased frame")
            }
            try pattern.display.showPattern(width: 800, height: 600)
            var after: (leased: Bool, descriptor: Int32?, matches: Bool)?
            for _ in 0..<45 {
                guard let buffer = try await iterator.next() else { break }
                guard buffer.format.size == Size(width: 800, height: 600) else { continue }
                after = try buffer.withFrame { frame in
                    (buffer.isLeased, frame.dmaBuf?.plane(0).descriptor.rawValue,
                     try frame.dmaBuf.map { try Self.mismatch(frame, $0) == nil } ?? false)
                }
                break
            }
            XCTAssertEqual(after?.leased, true, "frames of the new framebuffer are leased too")
            XCTAssertNotEqual(after?.descriptor, heldExport.plane(0).descriptor.rawValue, "the new framebuffer has its own export")
            XCTAssertEqual(after?.matches, true, "and it reads back as the frame")
            source.stop()
            // The mode changed and the run ended; the held frame is still the old framebuffer.
            XCTAssertTrue(held.isLeased)
            try held.withFrame { frame in
                XCTAssertEqual(frame.format.size, Size(width: 640, height: 480))
                XCTAssertNil(ScreenCheck.firstMismatch(frame, screenWidth: 640, screenHeight: 480), "readable after the mode change")
                XCTAssertNil(try Self.mismatch(frame, heldExport), "its DMA-BUF too")
            }
            summary = "figure: virtio-gpu sequence with exportsDMABuf: leased \(frames.leasedFrames), copied \(frames.copiedFrames); a held 640x480 frame (fd \(heldExport.plane(0).descriptor)) stayed readable across the change to 800x600 (fd \(after?.descriptor.map(String.init) ?? "none"))"
            held.release()
            XCTAssertNil(held.dmaBuf, "released: no DMA-BUF")
        }
        print(summary)
        let after = ProcessFigures.assertDescriptorsBack(to: pattern.before, "after release")
        XCTAssertFalse(after.descriptorTargets.contains { $0.contains("dmabuf") }, "no DMA-BUF descriptor left")
        XCTAssertEqual(after.deviceMaps, pattern.before.deviceMaps + 1, "device mappings: only the test display's own 800x600 buffer more")
        XCTAssertEqual(ProcessFigures.dmaBufMappings(), pattern.mappedBefore, "no DMA-BUF mapped")
    }
}
