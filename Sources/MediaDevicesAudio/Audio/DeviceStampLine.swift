/// A device's period stamps made into one steady line. ALSA's stamps (`snd_pcm_htimestamp`) err
/// late, never early: the kernel takes the status page's time whenever the position is read,
/// also when the hardware has not moved the position since its last step (snd-usb-audio moves
/// it once per URB, a few milliseconds of audio), so a period read just before the next step is
/// stamped up to a step late. Seen in the rig: a USB microphone's 10 ms periods stamped 0–9.6 ms
/// late, half of them over 2.8 ms, and a capture whose first stamp was late kept that error.
///
/// The earliest stamps are the truest, so the line is their lower edge: a period's time is its
/// stamp or the line's, whichever is earlier, and the line goes on at the sample rate. When every
/// stamp of a `window` came later than the line, the line moves up by the least of those delays
/// (the device's clock is slower than the monotonic one, or it lost frames without an overrun).
/// A stamp more than `tolerance` later than the line, or a gap the device reported, starts the
/// line over from it. Nanoseconds; the audio thread's state.
struct DeviceStampLine {
    /// Where the next period begins on the line; nil before the first.
    private var expected: Double?
    /// The least delay of a stamp behind the line in this window (negative: one came early).
    private var windowDelay = Double.infinity
    /// The audio the window holds so far.
    private var windowLength = 0.0
    /// How much audio a window holds before the line may move up.
    static let window = 500_000_000.0
    /// How much later than the line a stamp may be before the line starts over from it.
    static let tolerance = 20_000_000.0

    /// The line's time for a period of `duration` stamped `stamp`; `afterGap`: frames were
    /// lost (or not played) before it.
    mutating func time(for stamp: Int64, duration: Double, afterGap: Bool) -> Int64 {
        let given = Double(stamp)
        guard !afterGap, let line = expected, given - line <= Self.tolerance else {
            expected = given + duration
            (windowDelay, windowLength) = (.infinity, 0)
            return stamp
        }
        let time = min(given, line)
        windowDelay = min(windowDelay, given - line)
        windowLength += duration
        var next = time + duration
        if windowLength >= Self.window {
            if windowDelay > 0 { next += windowDelay }
            (windowDelay, windowLength) = (.infinity, 0)
        }
        expected = next
        return Int64(time.rounded())
    }
}
