import MediaDevicesCore
/// The device end of one side's direction of the bus: what a backend stream's audio thread
/// hands captured periods to and takes periods to play from. The bus holds the application's
/// format (`busFormat`); the device runs at `deviceFormat`. When they differ, an
/// `AudioConverter` made for this device converts between them on the audio thread; when they
/// are equal, periods are copied as they are. Built with each stream (initialize, device
/// switch, fallback), so a new device gets a converter of its own.
/// `@unchecked Sendable`: made on the thread that opens the device, then used by that side's
/// audio thread alone (its converter and clock are that thread's state, unlocked by design).
final class AudioBusPort: @unchecked Sendable {
    let bus: AudioBus
    /// The format the device runs at.
    let deviceFormat: AudioFormat
    /// The format the application reads or writes through the bus.
    let busFormat: AudioFormat
    /// Device → bus (capture) or bus → device (render); nil when the formats are equal.
    let converter: AudioConverter?
    /// The side's counters: the delay the stream measured last.
    let counters: AudioCounters
    /// The times of what the converter gives out (the audio thread's).
    private var clock = ConvertedClock()
    /// The device's own stamps, steadied (the audio thread's).
    private var stamps = DeviceStampLine()

    init(bus: AudioBus, direction: AudioDevice.Direction, deviceFormat: AudioFormat, busFormat: AudioFormat,
         library: AudioResamplerLibrary, periodFrames: Int, counters: AudioCounters) throws(MediaDevicesError) {
        self.bus = bus
        self.counters = counters
        self.deviceFormat = deviceFormat
        self.busFormat = busFormat
        converter = deviceFormat == busFormat ? nil
            : try direction == .input
                ? AudioConverter(from: deviceFormat, to: busFormat, library: library, chunkFrames: max(1024, periodFrames))
                : AudioConverter(from: busFormat, to: deviceFormat, library: library, chunkFrames: max(1024, periodFrames))
        // Capture: the converter's output is the bus, its delay in bus frames; render: the device.
        if let converter {
            delayFrames = direction == .input ? converter.delayFrames / converter.ratio : converter.delayFrames
        } else {
            delayFrames = 0
        }
    }

    /// Capture: `bytes` of device frames at `source` into the bus, converted if need be. `time`
    /// is when the first was recorded (monotonic nanoseconds, from the device's timestamps,
    /// steadied by a ``DeviceStampLine``); nil: the clock now less the side's delay and the frames' own length
    /// (`Self.recordingTime`). `afterGap`: frames were lost before these.
    func writeCapture(_ source: UnsafeRawPointer, bytes: Int, time: UInt64?, afterGap: Bool) {
        let busFrameBytes = busFormat.bytesPerFrame, sampleBytes = busFormat.sampleFormat.bytesPerSample
        let deviceFrames = bytes / deviceFormat.bytesPerFrame
        let recorded = time.map { stamps.time(for: Int64($0), duration: Double(deviceFrames) * 1e9 / Double(deviceFormat.sampleRate), afterGap: afterGap) }
            ?? Self.recordingTime(readAt: Int64(MonotonicClock.now()), delaySeconds: delaySeconds, frames: deviceFrames, sampleRate: deviceFormat.sampleRate)
        guard let converter else {
            bus.writeCaptureBytes(source, count: bytes, frameBytes: busFrameBytes, sampleBytes: sampleBytes, time: recorded, afterGap: afterGap)
            return
        }
        // What the converter gives out now went in its delay earlier.
        clock.input(at: recorded, duration: Double(deviceFrames) * 1e9 / Double(deviceFormat.sampleRate),
                    delay: -delayFrames * 1e9 / Double(deviceFormat.sampleRate), afterGap: afterGap, steady: time != nil)
        var gap = afterGap
        let busFrameNanoseconds = 1e9 / Double(busFormat.sampleRate)
        converter.convert(source, frames: deviceFrames) { converted, frames in
            bus.writeCaptureBytes(converted, count: frames * busFrameBytes, frameBytes: busFrameBytes, sampleBytes: sampleBytes,
                                  time: Int64(clock.next), afterGap: gap)
            gap = false
            clock.output(Double(frames) * busFrameNanoseconds)
        }
    }

    private static func nanoseconds(_ seconds: Double) -> Int64 { Int64(seconds * 1e9) }

    /// Where the device gives no time (PulseAudio and PipeWire through it; ALSA without
    /// timestamps): when the first of `frames` read at `readAt` (monotonic ns) was recorded: the
    /// read time less the delay still buffered behind them (`delaySeconds`: the Pulse stream's
    /// latency or `snd_pcm_delay`, with the converter's) and less the frames' own length.
    static func recordingTime(readAt: Int64, delaySeconds: Double, frames: Int, sampleRate: Int) -> Int64 {
        readAt - nanoseconds(delaySeconds) - Int64(frames) * 1_000_000_000 / Int64(max(sampleRate, 1))
    }

    /// Render: fills `buffer` with up to `periodBytes` of device frames from the bus (converted
    /// if need be) and returns how many bytes to play; short of a period it pads with silence
    /// (`fillsSilence`, the shortfall counted in the bus's samples) or returns what there is.
    /// `time` is when the period's first frame is heard (monotonic nanoseconds, from the
    /// device's timestamps, steadied by a ``DeviceStampLine``); nil: the clock now plus the side's delay. `afterGap`: the device
    /// did not play all it was given before (an underrun, a restart).
    func renderPeriod(into buffer: UnsafeMutableRawPointer, periodBytes: Int, fillsSilence: Bool, time: UInt64?, afterGap: Bool) -> Int {
        let periodNanoseconds = Double(periodBytes / deviceFormat.bytesPerFrame) * 1e9 / Double(deviceFormat.sampleRate)
        let heard = time.map { stamps.time(for: Int64($0), duration: periodNanoseconds, afterGap: afterGap) } ?? bus.voice.session.map { _ in Int64(MonotonicClock.now()) + Self.nanoseconds(delaySeconds) } ?? 0
        guard let converter else {
            return bus.renderPeriod(into: buffer, periodBytes: periodBytes, format: deviceFormat, fillsSilence: fillsSilence, time: heard, afterGap: afterGap)
        }
        let deviceFrameBytes = deviceFormat.bytesPerFrame
        let busFrameBytes = busFormat.bytesPerFrame, sampleBytes = busFormat.sampleFormat.bytesPerSample
        let frames = periodBytes / deviceFrameBytes
        let bus = self.bus
        // What the bus gives now is heard the converter's delay after this period begins.
        clock.input(at: heard, duration: Double(frames) * 1e9 / Double(deviceFormat.sampleRate),
                    delay: delayFrames * 1e9 / Double(deviceFormat.sampleRate), afterGap: afterGap, steady: time != nil)
        var gap = afterGap
        let busFrameNanoseconds = 1e9 / Double(busFormat.sampleRate)
        let got = converter.pull(into: buffer, frames: frames) { staging, maximum in
            let read = bus.readRenderBytes(into: staging, count: maximum * busFrameBytes, frameBytes: busFrameBytes,
                                           sampleBytes: sampleBytes, countShortfall: false, time: Int64(clock.next), afterGap: gap) / busFrameBytes
            gap = false
            clock.output(Double(read) * busFrameNanoseconds)
            return read
        }
        guard got < frames, fillsSilence else { return got * deviceFrameBytes }
        (buffer + got * deviceFrameBytes).initializeMemory(as: UInt8.self, repeating: 0, count: (frames - got) * deviceFrameBytes)
        bus.countMissingRender(samples: Int((Double(frames - got) / converter.ratio).rounded(.up)) * busFormat.channels,
                               time: heard + Int64(got) * 1_000_000_000 / Int64(deviceFormat.sampleRate))
        return frames * deviceFrameBytes
    }

    /// The converter's delay in device frames, as it stands once warmed up (a constant, so the
    /// control thread reads it without touching the resampler the audio thread runs).
    let delayFrames: Double

    /// The side's delay as measured last (the device's, `snd_pcm_delay` or the Pulse latency,
    /// plus the converter's), in seconds.
    var delaySeconds: Double {
        (Double(counters.delayFrames.load(ordering: .relaxed)) + delayFrames) / Double(deviceFormat.sampleRate)
    }

    /// Forgets what an earlier run left in the converter. Not on the audio thread.
    func reset() throws(MediaDevicesError) { try converter?.reset() }
}
