import Dispatch
import Foundation
import MediaDevices
import Synchronization

/// The lifecycle rules every source keeps the same way (they live in one core), checked on a
/// real source of each type by `SourceLifecycleRules.violations` (empty when every rule held):
/// - from the source's own callback: `initialize`, `start` and the source's change (format,
///   device) throw `.invalidState` at once; `stop` returns at once and capture ends when the
///   callback returns; `release` there only stops; the consumer hears of the end once;
/// - twice: `initialize`, `start`, `stop` and `release` called twice in a row change nothing
///   the second time;
/// - after `release`: `start` opens the device again and frames come.
public enum SourceLifecycleRules {
    /// Runs every rule on `source` and returns the rules it broke. `change` is the source's own
    /// change call (`setFormat`, `selectCaptureDevice`), made with the settings it has now.
    public static func violations(of source: some VideoSource, change: @escaping @Sendable () throws -> Void,
                                  seconds: Double = 30) throws -> [String] {
        var broken: [String] = []
        try checkCallsFromTheCallback(source, change: change, seconds: seconds, into: &broken)
        try checkTwiceAndAfterRelease(source, seconds: seconds, into: &broken)
        try checkCallsFromTheEndWhileAnotherThreadStops(source, seconds: seconds, into: &broken)
        return broken
    }

    /// Records `rule` as broken unless `held`.
    private static func expect(_ held: Bool, _ rule: @autoclosure () -> String, into broken: inout [String]) {
        if !held { broken.append(rule()) }
    }

    /// The calls from the callback, as the first rule says.
    static func checkCallsFromTheCallback(_ source: some VideoSource, change: @escaping @Sendable () throws -> Void,
                                          seconds: Double, into broken: inout [String]) throws {
        let callback = CallingConsumer(source: source, change: change)
        source.consumer = callback
        try source.start()
        expect(callback.done.wait(timeout: .now() + seconds) == .success, "a frame reached the callback", into: &broken)
        expect(callback.ended.wait(timeout: .now() + seconds) == .success, "capture ended after the callback called stop()", into: &broken)
        let outcome = callback.outcome
        for (call, code) in [("initialize", outcome.initialize), ("start", outcome.start), ("change", outcome.change)] {
            expect(code == .invalidState, "\(call)() from the callback is refused with .invalidState (got \(code.map { "\($0)" } ?? "no error"))", into: &broken)
        }
        expect(outcome.stopSeconds < 1, "stop() from the callback returns at once (took \(outcome.stopSeconds) s)", into: &broken)
        expect(outcome.releaseSeconds < 1, "release() from the callback returns at once (took \(outcome.releaseSeconds) s)", into: &broken)
        expect(outcome.endError == nil, "the end after stop() carries no error", into: &broken)
        expect(!source.isCapturing, "not capturing once the end was heard", into: &broken)
        expect(callback.endings == 1, "the consumer hears of the end once", into: &broken)
        source.consumer = nil
        source.release()
    }

    /// The calls made twice, and a start after release.
    static func checkTwiceAndAfterRelease(_ source: some VideoSource, seconds: Double, into broken: inout [String]) throws {
        try source.initialize()
        try source.initialize()
        expect(source.captureSettings != nil, "initialized: settings in force", into: &broken)
        let counter = FrameCounter()
        source.consumer = counter
        try source.start()
        try source.start()
        expect(source.isCapturing, "capturing after start() twice", into: &broken)
        expect(counter.wait(for: 2, seconds: seconds), "frames after start() twice", into: &broken)
        source.stop()
        source.stop()
        expect(!source.isCapturing, "not capturing after stop() or release()", into: &broken)
        expect(counter.endings == 1, "two stops end the run once", into: &broken)
        source.release()
        source.release()
        expect(!source.isCapturing, "not capturing after stop() or release()", into: &broken)
        let seen = counter.frames
        try source.start()
        expect(counter.wait(for: seen + 2, seconds: seconds), "start() after release() opens the device again and frames come", into: &broken)
        expect(source.captureSettings != nil, "settings in force after start() following release()", into: &broken)
        source.release()
        expect(!source.isCapturing, "not capturing after stop() or release()", into: &broken)
        expect(counter.endings == 2, "each run ended once", into: &broken)
        source.consumer = nil
    }
}

extension SourceLifecycleRules {
    /// Another thread stops the source while the consumer's `captureDidStop` (on the capture
    /// thread, which that `stop()` waits for) calls `release()` and `start()`: `release()` only
    /// stops and returns, `start()` is refused, and the other thread's `stop()` returns.
    static func checkCallsFromTheEndWhileAnotherThreadStops(_ source: some VideoSource, seconds: Double,
                                                            into broken: inout [String]) throws {
        let ending = EndingConsumer(source: source)
        source.consumer = ending
        try source.start()
        expect(ending.frames.wait(for: 2, seconds: seconds), "frames before the other thread's stop()", into: &broken)
        let stopped = DispatchSemaphore(value: 0)
        Thread { source.stop(); stopped.signal() }.start()
        let returned = stopped.wait(timeout: .now() + seconds) == .success
        expect(returned, "stop() from another thread returned while captureDidStop called release() and start()", into: &broken)
        guard returned else { return }  // the threads are stuck: the rest would hang too
        let outcome = ending.outcome
        expect(outcome.heard, "captureDidStop was heard", into: &broken)
        expect(outcome.releaseSeconds < 1, "release() from captureDidStop returns at once (took \(outcome.releaseSeconds) s)", into: &broken)
        expect(outcome.start == .invalidState, "start() from captureDidStop on the capture thread is refused with .invalidState (got \(outcome.start.map { "\($0)" } ?? "no error"))", into: &broken)
        source.consumer = nil
        source.release()
        expect(!source.isCapturing, "not capturing after stop() or release()", into: &broken)
    }
}

/// Calls `release()` and `start()` from `captureDidStop`.
private final class EndingConsumer<Source: VideoSource>: VideoFrameConsumer, Sendable {
    struct Outcome: Sendable {
        var heard = false
        var releaseSeconds = 0.0
        var start: MediaDevicesError.Code?
    }

    private let source: Source
    let frames = FrameCounter()
    private let state = Mutex(Outcome())

    init(source: Source) { self.source = source }

    var outcome: Outcome { state.withLock { $0 } }

    func consumeFrame(_ frame: VideoFrame) { frames.consumeFrame(frame) }

    func captureDidStop(error: MediaDevicesError?) {
        var outcome = Outcome(heard: true)
        let started = DispatchTime.now().uptimeNanoseconds
        source.release()
        outcome.releaseSeconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
        do { try source.start() } catch { outcome.start = error.code }
        state.withLock { $0 = outcome }
    }
}

/// On its first frame, calls every control of its source from the capture thread and records
/// what each did; then counts the end.
private final class CallingConsumer<Source: VideoSource>: VideoFrameConsumer, Sendable {
    struct Outcome: Sendable {
        var initialize: MediaDevicesError.Code?
        var start: MediaDevicesError.Code?
        var change: MediaDevicesError.Code?
        var stopSeconds = 0.0
        var releaseSeconds = 0.0
        var endError: MediaDevicesError?
    }

    private let source: Source
    private let change: @Sendable () throws -> Void
    private let state = Mutex((calls: 0, endings: 0, outcome: Outcome()))
    let done = DispatchSemaphore(value: 0)
    let ended = DispatchSemaphore(value: 0)

    init(source: Source, change: @escaping @Sendable () throws -> Void) {
        self.source = source
        self.change = change
    }

    var outcome: Outcome { state.withLock { $0.outcome } }
    var endings: Int { state.withLock { $0.endings } }

    private static func code(_ call: () throws -> Void) -> MediaDevicesError.Code? {
        do { try call(); return nil } catch { return (error as? MediaDevicesError)?.code ?? .io }
    }

    func consumeFrame(_ frame: VideoFrame) {
        let first = state.withLock { state -> Bool in
            state.calls += 1
            return state.calls == 1
        }
        guard first else { return }
        var outcome = Outcome()
        outcome.initialize = Self.code { try source.initialize() }
        outcome.start = Self.code { try source.start() }
        outcome.change = Self.code(change)
        var started = DispatchTime.now().uptimeNanoseconds
        source.stop()
        outcome.stopSeconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
        started = DispatchTime.now().uptimeNanoseconds
        source.release()
        outcome.releaseSeconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
        state.withLock { $0.outcome = outcome }
        done.signal()
    }

    func captureDidStop(error: MediaDevicesError?) {
        state.withLock { $0.endings += 1; $0.outcome.endError = error }
        ended.signal()
    }
}

/// Counts frames and ends.
final class FrameCounter: VideoFrameConsumer, Sendable {
    private let state = Mutex((frames: 0, endings: 0))

    var frames: Int { state.withLock { $0.frames } }
    var endings: Int { state.withLock { $0.endings } }

    func consumeFrame(_ frame: VideoFrame) { state.withLock { $0.frames += 1 } }
    func captureDidStop(error: MediaDevicesError?) { state.withLock { $0.endings += 1 } }

    /// Waits until `count` frames have come, for at most `seconds`.
    func wait(for count: Int, seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while frames < count {
            if Date() > deadline { return false }
            usleep(5_000)
        }
        return true
    }
}
