import Foundation
@testable import MediaDevices
@testable import MediaDevicesAudio
@testable import MediaDevicesVideo
@testable import MediaDevicesCore
import TestSupport
import XCTest

/// The lifecycle rules every source shares (one core, `SourceLifecycleRules`), on a real camera
/// (vivid): calls from the callback, twice, after release; and the same calls from a task on the
/// camera's capture executor, which runs on the capture thread as the callback does.
final class SourceLifecycleTests: XCTestCase {
    override func setUpWithError() throws { try Rig.require() }

    private let request = FormatRequest(pixelFormat: .yuyv, size: Size(width: 320, height: 180), frameRate: FrameRate(25))

    func testCameraKeepsTheLifecycleRules() throws {
        let node = try Rig.loadVivid("n_devs=1")[0]
        let source = CameraSource(device: try CaptureDevice(path: node), request: request)
        let request = self.request
        let broken = try SourceLifecycleRules.violations(of: source, change: { try source.setFormat(request) })
        XCTAssertEqual(broken, [], "rules broken by the camera source")
        // The device switch is a change too: from the callback it is refused the same way.
        let switching = try SourceLifecycleRules.violations(of: source, change: { try source.selectCaptureDevice(source.device, format: request) })
        XCTAssertEqual(switching, [], "rules broken by the camera source (device switch as the change)")
    }

    /// A task preferring the capture executor runs on the capture thread: its control calls are
    /// refused with `.invalidState` as the callback's are, and its `stop()` returns at once and
    /// ends the sequence it reads.
    func testCallsFromTheCaptureExecutorFollowTheCallbacksRules() async throws {
        let node = try Rig.loadVivid("n_devs=1")[0]
        let source = CameraSource(device: try CaptureDevice(path: node), request: request)
        defer { source.release() }
        let frames = source.frameSequence(bufferSize: 2)
        let executor = source.captureExecutor
        let jobsBefore = executor.jobsRunOnCaptureThread
        try source.start()
        let request = self.request
        let outcome = try await Task(executorPreference: executor) { () -> (codes: [String], stopSeconds: Double, after: Int, thread: String) in
            var iterator = frames.makeAsyncIterator()
            _ = try await iterator.next()
            let thread = ((try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? "?")
                .trimmingCharacters(in: .whitespacesAndNewlines)
            var codes: [String] = []
            let calls: [(String, () throws -> Void)] = [
                ("initialize", { try source.initialize() }), ("start", { try source.start() }),
                ("setFormat", { _ = try source.setFormat(request) }),
                ("setOrientationTracker", { try source.setOrientationTracker(nil) }),
            ]
            for (name, call) in calls {
                do { try call(); codes.append("\(name): no error") } catch let error as MediaDevicesError {
                    codes.append("\(name): \(error.code)")
                }
            }
            let started = DispatchTime.now().uptimeNanoseconds
            source.stop()
            let stopSeconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
            var after = 0
            while try await iterator.next() != nil { after += 1 }
            return (codes, stopSeconds, after, thread)
        }.value
        XCTAssertEqual(outcome.thread, "md-capture", "the task ran on the capture thread")
        XCTAssertGreaterThan(executor.jobsRunOnCaptureThread, jobsBefore)
        XCTAssertEqual(outcome.codes, ["initialize: invalidState", "start: invalidState", "setFormat: invalidState", "setOrientationTracker: invalidState"])
        XCTAssertLessThan(outcome.stopSeconds, 1, "stop() on the capture executor returns at once")
        XCTAssertLessThanOrEqual(outcome.after, 2, "the sequence ended after what it had buffered")
        XCTAssertFalse(source.isCapturing)
        // From elsewhere the same calls work.
        try source.setFormat(request)
        try source.start()
        XCTAssertTrue(source.isCapturing)
        source.stop()
    }
}
