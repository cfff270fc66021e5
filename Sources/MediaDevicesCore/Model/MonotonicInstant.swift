import Glibc

/// A point in time on the system's monotonic clock (`CLOCK_MONOTONIC`): the clock V4L2, ALSA,
/// PipeWire and DRM stamp their buffers with, so a frame's timestamp and a sample's can be
/// compared and subtracted directly.
///
/// This is the one timestamp type of the package. It counts from an unspecified start (usually
/// boot) and does not advance while the system is suspended. Subtracting two instants gives a
/// `Duration`; adding a `Duration` gives an instant. ``MonotonicInstant/nanoseconds`` is the raw count, for
/// handing to APIs that take `CLOCK_MONOTONIC` nanoseconds (GStreamer's running time,
/// WebRTC's `rtc::TimeNanos` on Linux, `timestamp_us * 1000` of a V4L2 buffer).
public struct MonotonicInstant: InstantProtocol, Hashable, Sendable, Encodable, CustomStringConvertible {
    /// Nanoseconds of `CLOCK_MONOTONIC`.
    public var nanoseconds: UInt64

    /// The instant `nanoseconds` after the monotonic clock's start.
    public init(nanoseconds: UInt64) { self.nanoseconds = nanoseconds }

    /// The current time on `CLOCK_MONOTONIC`.
    public static var now: MonotonicInstant { MonotonicInstant(nanoseconds: MonotonicClock.now()) }

    /// The instant `duration` later (earlier for a negative one); clamped at the clock's start.
    public func advanced(by duration: Duration) -> MonotonicInstant {
        let step = duration.nanosecondCount
        return MonotonicInstant(nanoseconds: step >= 0 ? nanoseconds &+ UInt64(step)
                                    : nanoseconds - min(nanoseconds, step.magnitude))
    }

    /// The time from this instant to `other` (negative when `other` is earlier).
    public func duration(to other: MonotonicInstant) -> Duration {
        other.nanoseconds >= nanoseconds ? .nanoseconds(Int64(clamping: other.nanoseconds - nanoseconds))
            : .nanoseconds(-Int64(clamping: nanoseconds - other.nanoseconds))
    }

    /// Whether `lhs` is earlier than `rhs`.
    public static func < (lhs: MonotonicInstant, rhs: MonotonicInstant) -> Bool { lhs.nanoseconds < rhs.nanoseconds }

    /// The instant as seconds of `CLOCK_MONOTONIC`, e.g. `"1234.567890123 s (monotonic)"`.
    public var description: String {
        let fraction = String(nanoseconds % 1_000_000_000)
        return "\(nanoseconds / 1_000_000_000).\(String(repeating: "0", count: 9 - fraction.count))\(fraction) s (monotonic)"
    }
}
