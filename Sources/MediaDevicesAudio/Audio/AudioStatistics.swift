import MediaDevicesCore
import Synchronization
import Glibc

/// What one side of an ``AudioDriver`` measured over its current or last run.
public struct AudioStatistics: Sendable, Encodable, Equatable {
    /// Frames moved between the device and the bus.
    public var frames: Int = 0
    /// Time from the first to the last period; seconds in JSON.
    public var elapsed: Duration {
        get { elapsedSeconds.wrappedValue }
        set { elapsedSeconds.wrappedValue = newValue }
    }
    /// Frames per second actually moved (``frames`` over ``elapsed``, excluding the first
    /// period and, for rendering, the initial fill of the device buffer, which go at once).
    public var achievedSampleRate: Double = 0
    /// Device underruns (render) or overruns (capture) that were recovered (`-EPIPE` from ALSA).
    public var xruns: Int = 0
    /// Periods processed.
    public var periods: Int = 0
    /// The last measured delay, in frames: `snd_pcm_delay` (frames queued in the device) or
    /// the PulseAudio stream latency.
    public var delayFrames: Int = 0
    /// The mean measured delay; seconds in JSON.
    public var meanDelay: Duration {
        get { meanDelaySeconds.wrappedValue }
        set { meanDelaySeconds.wrappedValue = newValue }
    }
    /// The largest measured delay; seconds in JSON.
    public var maxDelay: Duration {
        get { maxDelaySeconds.wrappedValue }
        set { maxDelaySeconds.wrappedValue = newValue }
    }
    /// The mean time the audio thread spent per period copying and converting (excluding the
    /// device call itself): over each of the first 16 periods, then every 8th; seconds in JSON.
    public var meanPeriodCost: Duration {
        get { meanPeriodCostSeconds.wrappedValue }
        set { meanPeriodCostSeconds.wrappedValue = newValue }
    }
    /// Render side: samples the application had not supplied in time (played as silence).
    /// Capture side: samples dropped because the application did not read them in time.
    public var busShortfallSamples: Int = 0
    /// The durations as stored and coded (a number of seconds in JSON).
    private var elapsedSeconds = SecondsCoding(wrappedValue: .zero)
    private var meanDelaySeconds = SecondsCoding(wrappedValue: .zero)
    private var maxDelaySeconds = SecondsCoding(wrappedValue: .zero)
    private var meanPeriodCostSeconds = SecondsCoding(wrappedValue: .zero)

    /// The JSON keys: the properties' names (the durations' under their public names).
    private enum CodingKeys: String, CodingKey {
        case frames, elapsedSeconds = "elapsed", achievedSampleRate, xruns, periods, delayFrames
        case meanDelaySeconds = "meanDelay", maxDelaySeconds = "maxDelay", meanPeriodCostSeconds = "meanPeriodCost"
        case busShortfallSamples
    }
}

/// Counters the audio thread updates with relaxed atomic adds (no lock, no allocation).
final class AudioCounters: Sendable {
    let frames = Atomic<Int>(0)
    let xruns = Atomic<Int>(0)
    let periods = Atomic<Int>(0)
    let firstPeriodNanoseconds = Atomic<UInt64>(0)
    let firstPeriodFrames = Atomic<Int>(0)
    let lastPeriodNanoseconds = Atomic<UInt64>(0)
    let delayFrames = Atomic<Int>(0)
    let delaySum = Atomic<Int>(0)
    let delayCount = Atomic<Int>(0)
    let delayMax = Atomic<Int>(0)
    let costNanoseconds = Atomic<UInt64>(0)
    let costSamples = Atomic<Int>(0)
    /// The thread besides the side's own audio thread on which the backend moves periods and
    /// calls the period observer during a run (PulseAudio: the connection's loop thread), as a
    /// `pthread_t`; 0 when there is none. Calls that wait for the audio thread treat it as the
    /// audio thread: waiting there would hold the backend's lock the audio thread needs to end.
    let callbackThread = Atomic<UInt>(0)
    /// `AudioDriverSide.periodWorkObserver` for the run: set before its thread starts, read only
    /// by the run (the thread start orders the two).
    nonisolated(unsafe) var workObserver: AudioWorkObserver?

    /// Whether the audio thread should time the next period's work (two clock reads): each of
    /// the first 16 periods, then every 8th. The mean cost stays a fair figure, and a clock read,
    /// a few nanoseconds through the vDSO on hardware, is a system call (and an emulated HPET
    /// read) in the software-emulated rig, where it showed as a third of our capture's CPU.
    @inline(__always)
    var timesNextPeriod: Bool {
        let done = periods.load(ordering: .relaxed)
        return done < 16 || done & 7 == 0
    }

    /// The audio thread, after a period's work begun at `start` (the clock read before it when
    /// `timesNextPeriod`, else nil): the clock and the work's cost, or nil.
    @inline(__always)
    func periodWorkEnds(_ start: UInt64?) -> (now: UInt64, cost: UInt64)? {
        guard let start else { return nil }
        let now = MonotonicClock.now()
        return (now, now - start)
    }

    /// The audio thread: one period of `count` frames done at `now`; `cost` is the ns its work
    /// took when it was timed (see `timesNextPeriod`), nil otherwise.
    @inline(__always)
    func period(frames count: Int, now: UInt64, cost: UInt64?) {
        if periods.load(ordering: .relaxed) == 0 {
            firstPeriodNanoseconds.store(now, ordering: .relaxed)
            firstPeriodFrames.store(count, ordering: .relaxed)
        }
        frames.add(count, ordering: .relaxed)
        periods.add(1, ordering: .relaxed)
        lastPeriodNanoseconds.store(now, ordering: .relaxed)
        if let cost {
            costNanoseconds.add(cost, ordering: .relaxed)
            costSamples.add(1, ordering: .relaxed)
        }
    }

    /// The audio thread: a delay measurement, in frames.
    @inline(__always)
    func delay(_ value: Int) {
        delayFrames.store(value, ordering: .relaxed)
        delaySum.add(value, ordering: .relaxed)
        delayCount.add(1, ordering: .relaxed)
        if value > delayMax.load(ordering: .relaxed) { delayMax.store(value, ordering: .relaxed) }
    }

    /// The backend: the calling thread moves periods for this run (see `callbackThread`).
    @inline(__always)
    func markCallbackThread() {
        let me = UInt(pthread_self())
        if callbackThread.load(ordering: .relaxed) != me { callbackThread.store(me, ordering: .releasing) }
    }

    /// Whether the calling thread is the run's `callbackThread`.
    var isOnCallbackThread: Bool { callbackThread.load(ordering: .acquiring) == UInt(pthread_self()) }

    func reset() {
        callbackThread.store(0, ordering: .relaxed)
        frames.store(0, ordering: .relaxed)
        xruns.store(0, ordering: .relaxed)
        periods.store(0, ordering: .relaxed)
        firstPeriodFrames.store(0, ordering: .relaxed)
        delayFrames.store(0, ordering: .relaxed)
        delaySum.store(0, ordering: .relaxed)
        delayCount.store(0, ordering: .relaxed)
        delayMax.store(0, ordering: .relaxed)
        firstPeriodNanoseconds.store(0, ordering: .relaxed)
        lastPeriodNanoseconds.store(0, ordering: .relaxed)
        costNanoseconds.store(0, ordering: .relaxed)
        costSamples.store(0, ordering: .relaxed)
    }

    func snapshot(rate: Int, shortfall: Int, burst: Int = 0) -> AudioStatistics {
        var result = AudioStatistics()
        result.frames = frames.load(ordering: .relaxed)
        result.xruns = xruns.load(ordering: .relaxed)
        result.periods = periods.load(ordering: .relaxed)
        let first = firstPeriodNanoseconds.load(ordering: .relaxed), last = lastPeriodNanoseconds.load(ordering: .relaxed)
        result.elapsed = last > first ? .nanoseconds(Int64(clamping: last - first)) : .zero
        if last > first {
            result.achievedSampleRate = Double(max(0, result.frames - firstPeriodFrames.load(ordering: .relaxed) - burst)) / result.elapsed.inSeconds
        }
        result.delayFrames = delayFrames.load(ordering: .relaxed)
        let count = delayCount.load(ordering: .relaxed)
        if count > 0, rate > 0 {
            result.meanDelay = .seconds(Double(delaySum.load(ordering: .relaxed)) / Double(count) / Double(rate))
            result.maxDelay = .seconds(Double(delayMax.load(ordering: .relaxed)) / Double(rate))
        }
        let timed = costSamples.load(ordering: .relaxed)
        if timed > 0 { result.meanPeriodCost = .nanoseconds(Int64(clamping: costNanoseconds.load(ordering: .relaxed) / UInt64(timed))) }
        result.busShortfallSamples = shortfall
        return result
    }
}
