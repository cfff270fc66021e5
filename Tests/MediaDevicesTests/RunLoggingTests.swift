import Dispatch
import Logging
@testable import MediaDevices
import TestSupport
import XCTest

/// What the sources and the audio driver log to the application's logger: a run's events (opened,
/// started, its first frame, stopped with its counts, could not open), with the device as
/// metadata, and nothing per frame or period.
final class RunLoggingTests: XCTestCase {
    /// Signals after `target` frames.
    private final class Frames: VideoFrameConsumer, @unchecked Sendable {
        // @unchecked Sendable: `seen` is touched only by the capture thread's callback.
        private var seen = 0
        private let target: Int
        let reached = DispatchSemaphore(value: 0)
        init(target: Int) { self.target = target }
        func consumeFrame(_ frame: VideoFrame) {
            seen += 1
            if seen == target { reached.signal() }
        }
    }

    func testAVideoSourceLogsItsRunNotItsFrames() throws {
        let recorder = LogRecorder()
        let source = TestPatternSource(request: FormatRequest(pixelFormat: .yuyv, size: Size(width: 160, height: 120), frameRate: FrameRate(60)))
        source.logger = recorder.logger(label: "app.video")
        let frames = Frames(target: 30)
        source.consumer = frames
        try source.start()
        XCTAssertEqual(frames.reached.wait(timeout: .now() + 20), .success, "30 frames")
        source.stop()
        source.release()
        let lines = recorder.lines
        XCTAssertEqual(lines.count, 3, "started, the first frame, stopped; none per frame: \(lines)")
        // "capture started" is logged once the control lock is released, so the capture thread's
        // first frame may come before it; the stop is last.
        XCTAssertEqual(lines.prefix(2).filter { $0.hasPrefix("info: capture started device=testpattern") }.count, 1, "\(lines)")
        let first = lines.prefix(2).filter { $0.hasPrefix("info: first frame device=testpattern format=") }
        XCTAssertEqual(first.count, 1, "\(lines)")
        XCTAssertTrue(first.first?.contains("160x120") ?? false, "the format negotiated: \(lines)")
        XCTAssertTrue(lines[2].hasPrefix("info: capture stopped delivered="), "\(lines)")
        XCTAssertTrue(lines[2].contains("dropped=0"), "\(lines)")
        XCTAssertNil(TestPatternSource().logger, "no logger unless the application gives one")
    }

    func testTheAudioDriverLogsOpenedStartedStoppedAndWhatCouldNotOpen() throws {
        let recorder = LogRecorder()
        let driver = AudioDriver()
        driver.logger = recorder.logger(label: "app.audio")
        XCTAssertEqual(driver.render.logger?.label, "app.audio", "both sides")
        XCTAssertThrowsError(try driver.initializeCapture(device: .alsa("hw:97,0", direction: .input), format: AudioFormat(sampleRate: 8000, channels: 1)))
        try driver.initializeCapture(device: .alsa("null", direction: .input), format: AudioFormat(sampleRate: 8000, channels: 1))
        try driver.startCapture()
        usleep(200_000)
        driver.stopCapture()
        driver.capture.terminate()
        let lines = recorder.lines
        XCTAssertEqual(lines.count, 4, "could not open, opened, started, stopped; none per period: \(lines)")
        guard lines.count == 4 else { return }
        XCTAssertTrue(lines[0].hasPrefix("error: could not open: hw:97,0"), "\(lines)")
        XCTAssertTrue(lines[0].contains("code=notFound") && lines[0].contains("side=capture"), "\(lines)")
        XCTAssertTrue(lines[1].hasPrefix("info: opened ") && lines[1].contains("device=null") && lines[1].contains("periodFrames="), "\(lines)")
        XCTAssertTrue(lines[2].hasPrefix("info: started device=null side=capture"), "\(lines)")
        XCTAssertTrue(lines[3].hasPrefix("info: stopped device=null periods="), "\(lines)")
        XCTAssertTrue(lines[3].contains("xruns=0"), "\(lines)")
    }
}
