import MediaDevicesCore
import Glibc

/// Paces a source that makes its own frames (test pattern, screen grab): deadline k is
/// start + k × interval on `CLOCK_MONOTONIC`; between deadlines the thread sleeps, watching the
/// run's wake-up event. A deadline missed by more than a whole interval is skipped, and shows
/// as a sequence gap (a dropped frame). Allocates nothing.
struct FramePacer {
    private let start = MonotonicClock.now()
    /// Computed in Double nanoseconds: exact to the nanosecond for over 100 days, and no
    /// overflow whatever fraction the rate is.
    private let intervalNanoseconds: Double
    private var wakePoll: pollfd
    /// The number of the next frame.
    private(set) var sequence: UInt64 = 0

    /// A pacer for `rate` that stops waiting when `wake` is signalled.
    init(rate: FrameRate, wake: WakeUpEvent) {
        intervalNanoseconds = rate.frameInterval.doubleValue * 1e9
        wakePoll = pollfd(fd: wake.descriptor, events: Int16(POLLIN), revents: 0)
    }

    private func deadline(_ k: UInt64) -> UInt64 { start + UInt64((Double(k) * intervalNanoseconds).rounded()) }

    /// Waits for the next frame's deadline and returns it; `nil` when woken (stop).
    mutating func waitForNextFrame() -> UInt64? {
        let due = deadline(sequence)
        let now = MonotonicClock.now()
        if due > now {
            if poll(&wakePoll, 1, Int32((due - now) / 1_000_000)) > 0 { return nil }
            MonotonicClock.sleep(until: due)
        } else if poll(&wakePoll, 1, 0) > 0 {
            return nil
        }
        return due
    }

    /// Sleeps until `descriptor` is readable (the source may have something new) or
    /// `timeoutMilliseconds` passed, and returns `true`; `false` when woken (stop). Not the
    /// next deadline: a still source costs one wake-up per timeout, whatever the rate.
    mutating func waitForChange(on descriptor: Int32, timeoutMilliseconds: Int32) -> Bool {
        var polls = (wakePoll, pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0))
        let ready = withUnsafeMutableBytes(of: &polls) { bytes in
            poll(bytes.baseAddress!.assumingMemoryBound(to: pollfd.self), 2, timeoutMilliseconds)
        }
        return !(ready > 0 && polls.0.revents != 0)
    }

    /// The frame is done: moves to the next deadline, skipping those already more than one
    /// interval in the past.
    mutating func frameDone() {
        sequence += 1
        let after = MonotonicClock.now()
        while deadline(sequence + 1) < after { sequence += 1 }
    }
}
