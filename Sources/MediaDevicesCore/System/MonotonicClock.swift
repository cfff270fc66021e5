#if canImport(Glibc)
import Glibc
#endif

/// Monotonic time in nanoseconds (`CLOCK_MONOTONIC`, the clock V4L2 timestamps use).
package enum MonotonicClock {
    /// Now, in nanoseconds.
    package static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }

    /// Sleeps until the absolute monotonic time `deadline` (nanoseconds).
    package static func sleep(until deadline: UInt64) {
        var time = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &time, nil) == EINTR {}
    }
}
