import Foundation
import MediaDevices
import XCTest

/// Format changes and device switches while running, with the consumer and the frames
/// sequence staying subscribed.
final class SwitchingTests: XCTestCase {
    override func setUpWithError() throws { try Rig.require() }

    func testFormatChangeWhileRunningKeepsConsumers() async throws {
        let node = try Rig.loadVivid("n_devs=1")[0]
        let source = CameraSource(device: try CaptureDevice(path: node), request: FormatRequest(pixelFormat: .yuyv, size: .vga, frameRate: FrameRate(25)))
        let recorder = FrameRecorder(target: 1_000_000)
        source.consumer = recorder
        let frames = source.frameSequence(bufferSize: 8)
        try source.start()
        var iterator = frames.makeAsyncIterator()
        var seen: [String] = []
        while seen.count < 5, let frame = try await iterator.next() { seen.append(frame.format.description) }
        let small = Size(width: 320, height: 180)
        let negotiation = try source.setFormat(FormatRequest(pixelFormat: .nv12, size: small, frameRate: FrameRate(25)))
        XCTAssertEqual(negotiation.format.pixelFormat, .nv12)
        XCTAssertEqual(negotiation.format.size, small)
        XCTAssertTrue(source.isCapturing)
        var after = 0
        while after < 5, let frame = try await iterator.next() {
            if frame.format.pixelFormat == .nv12 {
                XCTAssertEqual(frame.format.size, small)
                XCTAssertEqual(frame.byteCount, 320 * 180 * 3 / 2)
                after += 1
            }
        }
        source.stop()
        XCTAssertEqual(after, 5, "frames in the new format arrived through the same iterator")
        let formats = Set(recorder.snapshot.map { $0.format.pixelFormat })
        XCTAssertEqual(formats, [.yuyv, .nv12], "the callback consumer saw both formats")
        XCTAssertEqual(recorder.stopCount, 1, "the consumer was told of the stop once, not of the format change")
        // A restart is not a drop: the drops counted are exactly the gaps within each run's
        // sequence numbers (frames the emulated vivid skips under host load, however many), and
        // nothing for the step from the last YUYV frame to the first NV12 one, where the numbers
        // begin again. (Not a bound on the drops: under load that would be vivid's timing.)
        let records = recorder.snapshot, statistics = source.statistics
        var inRunGaps = 0, restarts = 0
        for (previous, next) in zip(records, records.dropFirst()) {
            if next.format != previous.format { restarts += 1; continue }
            let step = next.sequence &- previous.sequence
            if step > 1, step < 1 << 31 { inRunGaps += Int(step - 1) }
        }
        XCTAssertEqual(restarts, 1, "one format change among the recorded frames")
        XCTAssertEqual(statistics.deliveredFrames, records.count, "every delivered frame reached the consumer")
        XCTAssertEqual(statistics.droppedFrames, inRunGaps, "a restart is not a drop: only the gaps within each run are counted (\(statistics))")
        print("figure: format change while running: \(records.count) frames, \(statistics.droppedFrames) dropped within the two runs (vivid's own)")
    }

    func testSwitchBetweenDevicesWhileRunningKeepsConsumers() async throws {
        let nodes = try Rig.loadVivid("n_devs=2")
        try Rig.setControl(nodes[0], "test_pattern=1")  // 100% colour bars
        try Rig.setControl(nodes[1], "test_pattern=6")  // 100% white
        try Rig.setControl(nodes[0], "osd_text_mode=2")
        try Rig.setControl(nodes[1], "osd_text_mode=2")
        let first = try CaptureDevice(path: nodes[0]), second = try CaptureDevice(path: nodes[1])
        let request = FormatRequest(pixelFormat: .yuyv, size: .vga, frameRate: FrameRate(25))
        let source = CameraSource(device: first, request: request)
        let recorder = FrameRecorder(target: 1_000_000)
        source.consumer = recorder
        let frames = source.frameSequence(bufferSize: 8)
        try source.start()
        var iterator = frames.makeAsyncIterator()
        var blackBars = 0
        for _ in 0..<5 {
            let next = try await iterator.next()
            let frame = try XCTUnwrap(next)
            if lumaAt(frame, bar: 7) < 30 { blackBars += 1 }
        }
        XCTAssertEqual(blackBars, 5, "device 1 shows colour bars (black at the right)")
        try source.selectCaptureDevice(second)
        XCTAssertEqual(source.device.path, nodes[1])
        XCTAssertTrue(source.isCapturing)
        var white = 0
        for _ in 0..<30 where white < 5 {
            let next = try await iterator.next()
            let frame = try XCTUnwrap(next)
            if lumaAt(frame, bar: 7) > 200 { white += 1 }
        }
        source.release()
        XCTAssertEqual(white, 5, "frames from device 2 (all white) arrived through the same iterator")
        XCTAssertEqual(recorder.stopCount, 1)
        XCTAssertNil(recorder.stopError)
        // Every frame the iterator read went through the consumer first: it stayed subscribed.
        XCTAssertGreaterThanOrEqual(recorder.count, 10)
    }

    func testSelectingTheSameDeviceChangesItsFormat() throws {
        let node = try Rig.loadVivid("n_devs=1")[0]
        let source = CameraSource(device: try CaptureDevice(path: node), request: FormatRequest(pixelFormat: .yuyv, size: .vga, frameRate: FrameRate(25)))
        let recorder = FrameRecorder(target: 1_000_000)
        source.consumer = recorder
        try source.start()
        for _ in 0..<200 { guard recorder.count < 3 else { break }; usleep(50_000) }
        let negotiation = try source.selectCaptureDevice(try CaptureDevice(path: node),
                                                         format: FormatRequest(pixelFormat: .nv12, size: Size(width: 320, height: 180)))
        XCTAssertEqual(negotiation.format.pixelFormat, .nv12, "the same device is reconfigured, not opened twice (which vb2 refuses with EBUSY)")
        for _ in 0..<200 { guard !recorder.snapshot.contains(where: { $0.format.pixelFormat == .nv12 }) else { break }; usleep(50_000) }
        source.release()
        XCTAssertTrue(recorder.snapshot.contains { $0.format.pixelFormat == .nv12 })
        XCTAssertNil(recorder.stopError)
    }

    func testStopFromTheCallbackEndsCaptureAndReleasesEverything() throws {
        let node = try Rig.loadVivid("n_devs=1")[0]
        let before = ProcessFigures.settled()
        let source = CameraSource(device: try CaptureDevice(path: node), request: FormatRequest(pixelFormat: .yuyv, size: .vga, frameRate: FrameRate(25)))
        let stopper = StoppingConsumer(source: source, after: 5)
        source.consumer = stopper
        try source.start()
        XCTAssertEqual(stopper.stopped.wait(timeout: .now() + 30), .success, "the consumer heard of the stop")
        for _ in 0..<100 { guard source.isCapturing else { break }; usleep(20_000) }
        XCTAssertFalse(source.isCapturing)
        XCTAssertEqual(stopper.framesAfterStop, 0, "no frame after stop() returned in the callback")
        source.release()
        ProcessFigures.assertDescriptorsBack(to: before, "descriptors after release")
    }

    /// Luma at the centre of colour bar `bar` (0-7), middle row, of a YUYV frame.
    private func lumaAt(_ frame: VideoFrameBuffer, bar: Int) -> Int {
        frame.withFrame { frame in
            let x = frame.width * (2 * bar + 1) / 16
            let plane = frame.plane(0)
            return Int(plane.bytes[(frame.height / 2) * plane.bytesPerRow + x * 2])
        }
    }
}

/// Calls `stop()` on its source from the callback, after `after` frames.
private final class StoppingConsumer: VideoFrameConsumer, @unchecked Sendable {
    weak var source: CameraSource?
    let after: Int
    let stopped = DispatchSemaphore(value: 0)
    private var frames = 0
    private var stopCalled = false
    private(set) var framesAfterStop = 0

    init(source: CameraSource, after: Int) {
        self.source = source
        self.after = after
    }

    func consumeFrame(_ frame: VideoFrame) {
        if stopCalled { framesAfterStop += 1; return }
        frames += 1
        if frames == after {
            stopCalled = true
            source?.stop()
        }
    }

    func captureDidStop(error: MediaDevicesError?) { stopped.signal() }
}
