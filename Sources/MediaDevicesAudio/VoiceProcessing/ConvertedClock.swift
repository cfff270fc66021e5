import MediaDevicesCore
/// The times of what a converter gives out, for the echo reference's time line. A resampler
/// gives out uneven pieces (what its filter lets through) and states a constant delay, so a
/// time taken afresh from each input's stamp moves by the unevenness; this clock counts what
/// came out instead, from the first input's stamp, and starts over only after a gap or when
/// the input jumps (its stamp strays more than `tolerance` from where the input before it
/// ended). Nanoseconds.
struct ConvertedClock {
    private var inputEnd: Double?
    /// The time of the next output frame.
    private(set) var next: Double = 0
    /// How far an input's stamp may stray before the clock starts over.
    let tolerance: Double = 6_000_000

    /// An input lasting `duration` stamped `time` goes in; what comes out of it goes `delay`
    /// later; `afterGap`: frames were lost before it.
    mutating func input(at time: Int64, duration: Double, delay: Double, afterGap: Bool) {
        let shifted = Double(time) + delay
        if !afterGap, let inputEnd, abs(shifted - inputEnd) <= tolerance {} else { next = shifted }
        inputEnd = shifted + duration
    }

    /// `duration` of output came out.
    mutating func output(_ duration: Double) { next += duration }
}
