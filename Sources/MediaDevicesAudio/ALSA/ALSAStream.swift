import MediaDevicesCore
import CALSA
import Glibc

/// An open ALSA PCM in interleaved read/write mode, non-blocking, polled together with the
/// side's wake-up eventfd. Everything the audio thread touches (period buffer, poll set) is
/// allocated here, before it starts.
// @unchecked Sendable: opened on the caller's thread, then used by its side's audio thread alone until that thread is joined.
final class ALSAStream: AudioBackendStream, @unchecked Sendable {
    let name: String
    let direction: AudioDevice.Direction
    let format: AudioFormat
    let periodFrames: Int
    let bufferFrames: Int
    let fillsSilence: Bool
    private var pcm: OpaquePointer?
    private let buffer: UnsafeMutableRawPointer
    private let pollCount: Int
    private let polls: UnsafeMutablePointer<pollfd>
    /// Whether the device stamps each position update with CLOCK_MONOTONIC in the status page
    /// ALSA maps (`positionTime`); set up at open, false where a plugin does not.
    private let keepsTimestamps: Bool

    init(device: AudioDevice, format requested: AudioFormat, options: AudioStreamOptions) throws(MediaDevicesError) {
        _ = ALSALogging.silenced
        name = device.name
        direction = device.direction
        fillsSilence = options.fillsSilenceOnUnderrun
        let handle = try ALSAOpen.pcm(device.name, direction: device.direction)
        var ok = false
        defer { if !ok { snd_pcm_close(handle) } }
        let name = device.name
        func check(_ result: Int32, _ operation: String, _ detail: String? = nil) throws(MediaDevicesError) {
            guard result < 0 else { return }
            var error = MediaDevicesError.fromAudio(result, device: name, operation: operation)
            if let detail { error = MediaDevicesError(error.code, device: name, operation: operation, errno: error.errno, detail: detail) }
            throw error
        }
        var params: OpaquePointer?
        snd_pcm_hw_params_malloc(&params)
        defer { snd_pcm_hw_params_free(params) }
        try check(snd_pcm_hw_params_any(handle, params), "snd_pcm_hw_params_any")
        try check(snd_pcm_hw_params_set_access(handle, params, SND_PCM_ACCESS_RW_INTERLEAVED), "snd_pcm_hw_params_set_access")
        let offered: AudioFormatCapabilities? = ALSAFormats.capabilities(ofOpen: handle, params: params)
        // Converting (the default), a device that does not take the asked sample format or channel
        // count runs at the nearest it takes: the best-resolved sample format, the nearest count.
        var sampleFormat = requested.sampleFormat
        if options.convertsFormat && snd_pcm_hw_params_test_format(handle, params, sampleFormat.alsa) != 0,
           let taken = [SampleFormat.floatLE, .s32LE, .s16LE].first(where: { snd_pcm_hw_params_test_format(handle, params, $0.alsa) == 0 }) {
            sampleFormat = taken
        }
        try check(snd_pcm_hw_params_set_format(handle, params, sampleFormat.alsa), "snd_pcm_hw_params_set_format",
                  "\(name) does not take \(requested.sampleFormat)\(offered.map { "; it takes \($0.sampleFormats.map(\.rawValue).joined(separator: ", "))" } ?? ""); or use plughw: to convert")
        var channels = UInt32(requested.channels)
        if options.convertsFormat { try check(snd_pcm_hw_params_set_channels_near(handle, params, &channels), "snd_pcm_hw_params_set_channels_near") }
        try check(snd_pcm_hw_params_set_channels(handle, params, channels), "snd_pcm_hw_params_set_channels",
                  "\(name) does not take \(requested.channels) channel(s)\(offered.map { "; it takes \($0.channels.lowerBound)…\($0.channels.upperBound)" } ?? ""); or use plughw: to convert")
        var rate = UInt32(requested.sampleRate)
        var dir: Int32 = 0
        try check(snd_pcm_hw_params_set_rate_near(handle, params, &rate, &dir), "snd_pcm_hw_params_set_rate_near")
        var period = snd_pcm_uframes_t(max(16, options.periodFrames))
        try check(snd_pcm_hw_params_set_period_size_near(handle, params, &period, &dir), "snd_pcm_hw_params_set_period_size_near")
        var size = period * snd_pcm_uframes_t(max(2, options.periods))
        try check(snd_pcm_hw_params_set_buffer_size_near(handle, params, &size), "snd_pcm_hw_params_set_buffer_size_near")
        try check(snd_pcm_hw_params(handle, params), "snd_pcm_hw_params")
        snd_pcm_hw_params_get_period_size(params, &period, &dir)
        snd_pcm_hw_params_get_buffer_size(params, &size)

        var software: OpaquePointer?
        snd_pcm_sw_params_malloc(&software)
        defer { snd_pcm_sw_params_free(software) }
        try check(snd_pcm_sw_params_current(handle, software), "snd_pcm_sw_params_current")
        try check(snd_pcm_sw_params_set_avail_min(handle, software, period), "snd_pcm_sw_params_set_avail_min")
        // Playback starts once a period is queued; capture is started explicitly.
        try check(snd_pcm_sw_params_set_start_threshold(handle, software, device.direction == .output ? period : size), "snd_pcm_sw_params_set_start_threshold")
        // Each position update stamped with CLOCK_MONOTONIC, readable without a system call.
        var stampType = SND_PCM_TSTAMP_TYPE_GETTIMEOFDAY
        let stamps = snd_pcm_sw_params_set_tstamp_mode(handle, software, SND_PCM_TSTAMP_ENABLE) == 0
            && snd_pcm_sw_params_set_tstamp_type(handle, software, SND_PCM_TSTAMP_TYPE_MONOTONIC) == 0
        try check(snd_pcm_sw_params(handle, software), "snd_pcm_sw_params")
        keepsTimestamps = stamps && snd_pcm_sw_params_get_tstamp_type(software, &stampType) == 0 && stampType == SND_PCM_TSTAMP_TYPE_MONOTONIC

        format = AudioFormat(sampleRate: Int(rate), channels: Int(channels), sampleFormat: sampleFormat)
        periodFrames = Int(period)
        bufferFrames = Int(size)
        buffer = UnsafeMutableRawPointer.allocate(byteCount: periodFrames * format.bytesPerFrame, alignment: 16)
        pollCount = Int(snd_pcm_poll_descriptors_count(handle))
        polls = UnsafeMutablePointer<pollfd>.allocate(capacity: pollCount + 1)
        polls.initialize(repeating: pollfd(), count: pollCount + 1)
        snd_pcm_poll_descriptors(handle, polls, UInt32(pollCount))
        pcm = handle
        ok = true
    }

    deinit {
        close()
        buffer.deallocate()
        polls.deallocate()
    }

    func close() {
        if let pcm { snd_pcm_close(pcm) }
        pcm = nil
    }

    func run(port: AudioBusPort, counters: AudioCounters, wake: WakeUpEvent, observer: AudioPeriodObserver?, shouldStop: () -> Bool) -> MediaDevicesError? {
        guard let pcm else { return MediaDevicesError(.invalidState, device: name, operation: "start", detail: "The stream is closed; initialize it again") }
        let frameBytes = format.bytesPerFrame
        let periodBytes = periodFrames * frameBytes
        let periodMilliseconds = Int32(max(1, periodFrames * 1000 / format.sampleRate))
        polls[pollCount] = pollfd(fd: wake.descriptor, events: Int16(POLLIN), revents: 0)
        var result = snd_pcm_prepare(pcm)
        if result < 0 { return .fromAudio(result, device: name, operation: "snd_pcm_prepare") }
        if direction == .input {
            result = snd_pcm_start(pcm)
            if result < 0 { return .fromAudio(result, device: name, operation: "snd_pcm_start") }
        }
        defer { snd_pcm_drop(pcm) }

        /// Whether frames were lost (or not played) before the next period: the voice
        /// processing's reference re-aligns there at once.
        var afterGap = true
        /// Recovers from an xrun or suspend (counting xruns); nil when the stream goes on.
        func recover(_ error: Int32, _ operation: String) -> MediaDevicesError? {
            afterGap = true
            if error == -EPIPE { counters.xruns.add(1, ordering: .relaxed) }
            if error == -ENODEV || error == -EBADFD && pcm.isIn(SND_PCM_STATE_DISCONNECTED) {
                return .fromAudio(-ENODEV, device: name, operation: operation)
            }
            let recovered = snd_pcm_recover(pcm, error, 1)
            if recovered < 0 { return .fromAudio(recovered, device: name, operation: operation) }
            if direction == .input {
                let started = snd_pcm_start(pcm)
                if started < 0 { return .fromAudio(started, device: name, operation: "snd_pcm_start") }
            }
            return nil
        }

        var starved = false
        while !shouldStop() {
            if starved {
                // Render side, told not to fill: nothing to play; wait a period for the application.
                var wakePoll = polls[pollCount]
                if poll(&wakePoll, 1, periodMilliseconds) > 0 { break }
                starved = false
            } else {
                let ready = poll(polls, nfds_t(pollCount + 1), 2000)
                if ready < 0 && errno != EINTR { return .fromErrno(errno, device: name, operation: "poll") }
                if polls[pollCount].revents & Int16(POLLIN) != 0 { break }
                if ready <= 0 { continue }
                var revents: UInt16 = 0
                snd_pcm_poll_descriptors_revents(pcm, polls, UInt32(pollCount), &revents)
                if revents & UInt16(POLLERR) != 0 {
                    if pcm.isIn(SND_PCM_STATE_DISCONNECTED) { return .fromAudio(-ENODEV, device: name, operation: "poll") }
                    if pcm.isIn(SND_PCM_STATE_XRUN), let failure = recover(-EPIPE, "poll") { return failure }
                }
            }
            // Every period the device holds, but not past a stop: a thread that fell behind (a
            // debug build's voice processing on a busy machine) would drain the device's whole
            // buffer first, and stop() waited for it (15–40 s seen).
            while !shouldStop() {
                let available = snd_pcm_avail_update(pcm)
                if available < 0 {
                    if let failure = recover(Int32(available), "snd_pcm_avail_update") { return failure }
                    break
                }
                if available < periodFrames { break }
                // Per period: the device call and the period's time from the mapped status page
                // (no system call). The clock (for the work's cost) and snd_pcm_delay only on timed
                // periods: each is a system call, and in the software-emulated rig (HPET clock)
                // the two clock reads and the delay ioctl cost more than the read itself.
                let timing = counters.timesNextPeriod
                if direction == .input {
                    let read = snd_pcm_readi(pcm, buffer, snd_pcm_uframes_t(periodFrames))
                    if read < 0 {
                        if let failure = recover(Int32(read), "snd_pcm_readi") { return failure }
                        break
                    }
                    let start = timing ? MonotonicClock.now() : nil
                    port.writeCapture(buffer, bytes: read * frameBytes, time: recordingTime(pcm, frames: read), afterGap: afterGap)
                    afterGap = false
                    let timed = counters.periodWorkEnds(start)
                    counters.period(frames: read, now: positionTime(pcm, or: timed?.now), cost: timed?.cost)
                } else {
                    let start = timing ? MonotonicClock.now() : nil
                    let bytes = port.renderPeriod(into: buffer, periodBytes: periodBytes, fillsSilence: fillsSilence, time: hearingTime(pcm), afterGap: afterGap)
                    afterGap = false
                    if bytes == 0 {
                        starved = true  // told not to fill: let the device underrun
                        break
                    }
                    let timed = counters.periodWorkEnds(start)
                    let written = snd_pcm_writei(pcm, buffer, snd_pcm_uframes_t(bytes / frameBytes))
                    if written < 0 {
                        if let failure = recover(Int32(written), "snd_pcm_writei") { return failure }
                        break
                    }
                    counters.period(frames: written, now: positionTime(pcm, or: timed?.now), cost: timed?.cost)
                }
                observer?(counters.periods.load(ordering: .relaxed))
                var delay: snd_pcm_sframes_t = 0
                if timing, snd_pcm_delay(pcm, &delay) == 0 { counters.delay(delay) }
            }
        }
        return nil
    }
}

extension ALSAStream {
    /// The time of the device's last position update (nanoseconds, CLOCK_MONOTONIC), read from
    /// the status page ALSA maps, without a system call; `clock` (or the clock now) when the
    /// stream keeps no timestamps or has none yet.
    @inline(__always)
    fileprivate func positionTime(_ pcm: OpaquePointer, or clock: UInt64?) -> UInt64 {
        if keepsTimestamps {
            var available: snd_pcm_uframes_t = 0
            var stamp = snd_htimestamp_t()
            if snd_pcm_htimestamp(pcm, &available, &stamp) == 0, stamp.tv_sec > 0 || stamp.tv_nsec > 0 {
                return UInt64(stamp.tv_sec) * 1_000_000_000 + UInt64(stamp.tv_nsec)
            }
        }
        return clock ?? MonotonicClock.now()
    }

    /// The device's last position update: its time (monotonic ns) and the frames available then
    /// (the status page, no system call); nil without timestamps or before the stream runs.
    @inline(__always)
    private func stampedAvailable(_ pcm: OpaquePointer) -> (time: Int64, available: Int)? {
        guard keepsTimestamps else { return nil }
        var available: snd_pcm_uframes_t = 0
        var stamp = snd_htimestamp_t()
        guard snd_pcm_htimestamp(pcm, &available, &stamp) == 0, stamp.tv_sec > 0 || stamp.tv_nsec > 0 else { return nil }
        return (Int64(stamp.tv_sec) * 1_000_000_000 + Int64(stamp.tv_nsec), Int(available))
    }

    /// Capture, after reading `frames`: when the first of them was recorded (monotonic ns): the
    /// stamp less what was still waiting then and what was read.
    @inline(__always)
    fileprivate func recordingTime(_ pcm: OpaquePointer, frames: Int) -> UInt64? {
        guard let (time, available) = stampedAvailable(pcm) else { return nil }
        return UInt64(max(0, time - Int64(available + frames) * 1_000_000_000 / Int64(format.sampleRate)))
    }

    /// Render, before writing a period: when its first frame will be heard (monotonic ns): the
    /// stamp plus what was queued then.
    @inline(__always)
    fileprivate func hearingTime(_ pcm: OpaquePointer) -> UInt64? {
        guard let (time, available) = stampedAvailable(pcm), pcm.isIn(SND_PCM_STATE_RUNNING) else { return nil }
        return UInt64(time + Int64(max(0, bufferFrames - available)) * 1_000_000_000 / Int64(format.sampleRate))
    }
}

extension OpaquePointer {
    /// Whether this PCM (an `snd_pcm_t`) is in `state`, compared by raw value: `==` on an imported
    /// C enum goes through its `Equatable` conformance, whose type metadata Swift instantiates on
    /// first use with a heap allocation; the first comparison in the process then allocated on an
    /// audio thread (CI, stop 48: 3 allocations in period 11 of a converting render run).
    @inline(__always)
    fileprivate func isIn(_ state: snd_pcm_state_t) -> Bool { snd_pcm_state(self).rawValue == state.rawValue }
}

extension ALSAFormats {
    /// The capabilities of an open PCM's refined `params` (used to name what it takes in errors).
    static func capabilities(ofOpen pcm: OpaquePointer, params: OpaquePointer?) -> AudioFormatCapabilities {
        var rateMin: UInt32 = 0, rateMax: UInt32 = 0, channelsMin: UInt32 = 0, channelsMax: UInt32 = 0
        var direction: Int32 = 0
        snd_pcm_hw_params_get_rate_min(params, &rateMin, &direction)
        snd_pcm_hw_params_get_rate_max(params, &rateMax, &direction)
        snd_pcm_hw_params_get_channels_min(params, &channelsMin)
        snd_pcm_hw_params_get_channels_max(params, &channelsMax)
        let formats = SampleFormat.allCases.filter { snd_pcm_hw_params_test_format(pcm, params, $0.alsa) == 0 }
        let rates = AudioFormatCapabilities.commonSampleRates.filter { snd_pcm_hw_params_test_rate(pcm, params, UInt32($0), 0) == 0 }
        return AudioFormatCapabilities(sampleRates: Int(rateMin)...Int(max(rateMin, rateMax)), standardSampleRates: rates,
                                       channels: Int(channelsMin)...Int(max(channelsMin, channelsMax)), sampleFormats: formats)
    }
}
