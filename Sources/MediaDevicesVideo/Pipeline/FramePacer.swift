import MediaDevicesCore
import Glibc

/// Paces a source that makes its own frames (test pattern, screen grab): deadline k is
/// start + k × interval on `CLOCK_MONOTONIC`; between deadlines the thread sleeps, watching the
/// run's wake-up event. A deadline missed by more than a whole interval is skipped, and shows
/// as a sequence gap (a dropped frame). A wake-up is a stop when `shouldStop` says so, else a
/// job for the run's ``CaptureExecutor`` (a reader that prefers it), run there before waiting on:
/// so a sequence read on the executor costs no thread switch. Allocates nothing.
struct FramePacer {
    private let start = MonotonicClock.now()
    /// Computed in Double nanoseconds: exact to the nanosecond for over 100 days, and no
    /// overflow whatever fraction the rate is.
    private let intervalNanoseconds: Double
    private var wakePoll: pollfd
    private let wake: WakeUpEvent
    private let shouldStop: () -> Bool
    private let executor: CaptureExecutor?
    /// The number of the next frame.
    private(set) var sequence: UInt64 = 0

    /// A pacer for `rate` that stops waiting when `wake` is signalled and `shouldStop` says so;
    /// other wake-ups run `executor`'s jobs (attached to this thread by the caller).
    init(rate: FrameRate, wake: WakeUpEvent, shouldStop: @escaping () -> Bool, executor: CaptureExecutor?) {
        intervalNanoseconds = rate.frameInterval.doubleValue * 1e9
        wakePoll = pollfd(fd: wake.descriptor, events: Int16(POLLIN), revents: 0)
        self.wake = wake
        self.shouldStop = shouldStop
        self.executor = executor
    }

    /// What a wait that runs no jobs ended with.
    enum Wait: Equatable {
        /// The next frame's deadline came (its time).
        case due(UInt64)
        /// The thing waited for happened, or the time allowed passed (`waitOnceForChange`).
        case changed
        /// A wake-up that is no stop: a job for the executor is waiting (run it, then wait again).
        case woken
        /// Asked to stop.
        case stop
    }

    /// After a wake-up: `.stop` when asked to, else `.woken`.
    private func wokenOrStopped() -> Wait {
        wake.reset()
        return shouldStop() ? .stop : .woken
    }

    private func deadline(_ k: UInt64) -> UInt64 { start + UInt64((Double(k) * intervalNanoseconds).rounded()) }

    /// Waits for the next frame's deadline, returning at a wake-up without running the
    /// executor's jobs (a loop stepped by a reader on the capture thread runs none inside a step).
    mutating func waitOnceForNextFrame() -> Wait {
        let due = deadline(sequence)
        let now = MonotonicClock.now()
        let timeout = due > now ? Int32((due - now) / 1_000_000) : 0
        if poll(&wakePoll, 1, timeout) > 0 { return wokenOrStopped() }
        if due > MonotonicClock.now() { MonotonicClock.sleep(until: due) }
        return .due(due)
    }

    /// Waits for the next frame's deadline and returns it, running the executor's jobs at
    /// wake-ups; `nil` when asked to stop.
    mutating func waitForNextFrame() -> UInt64? {
        while true {
            switch waitOnceForNextFrame() {
            case .due(let due): return due
            case .stop: return nil
            case .woken, .changed: executor?.runPending()
            }
        }
    }

    /// Sleeps until `descriptor` is readable (the source may have something new) or
    /// `timeoutMilliseconds` passed (`.changed` either way), returning at a wake-up without
    /// running the executor's jobs. Not the next deadline: a still source costs one wake-up per
    /// timeout, whatever the rate.
    mutating func waitOnceForChange(on descriptor: Int32, timeoutMilliseconds: Int32) -> Wait {
        var polls = (wakePoll, pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0))
        let ready = withUnsafeMutableBytes(of: &polls) { bytes in
            poll(bytes.baseAddress!.assumingMemoryBound(to: pollfd.self), 2, timeoutMilliseconds)
        }
        guard ready > 0, polls.0.revents != 0 else { return .changed }
        return wokenOrStopped()
    }

    /// The frame is done: moves to the next deadline, skipping those already more than one
    /// interval in the past.
    mutating func frameDone() {
        sequence += 1
        let after = MonotonicClock.now()
        while deadline(sequence + 1) < after { sequence += 1 }
    }
}
