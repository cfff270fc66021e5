import MediaDevicesCore
/// The times of what a converter gives out, for the echo reference's time line. A resampler
/// gives out uneven pieces (what its filter lets through) and states a constant delay, so a
/// time taken afresh from each input's stamp moves by the unevenness; this clock counts what
/// came out instead, from the first input's stamp, and starts over after a gap or when the
/// input jumps (its stamp strays more than `tolerance` from where the input before it ended).
/// Inputs whose stamps are steady (an ALSA device's, through a ``DeviceStampLine``) also move
/// it by each smaller stray: the device's clock against the monotonic one, or the line settling
/// on an earlier stamp; other stamps (the read time less a server's latency) jitter both ways,
/// and their smaller strays are ignored. Nanoseconds.
struct ConvertedClock {
    private var inputEnd: Double?
    /// The time of the next output frame.
    private(set) var next: Double = 0
    /// How far an input's stamp may stray before the clock starts over.
    let tolerance: Double = 6_000_000

    /// An input lasting `duration` stamped `time` goes in; what comes out of it goes `delay`
    /// later; `afterGap`: frames were lost before it; `steady`: its stamp is steadied (followed
    /// within the tolerance).
    mutating func input(at time: Int64, duration: Double, delay: Double, afterGap: Bool, steady: Bool = false) {
        let shifted = Double(time) + delay
        if !afterGap, let inputEnd, abs(shifted - inputEnd) <= tolerance {
            if steady { next += shifted - inputEnd }
        } else {
            next = shifted
        }
        inputEnd = shifted + duration
    }

    /// `duration` of output came out.
    mutating func output(_ duration: Double) { next += duration }
}
