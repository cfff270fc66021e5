import CPulse
import Glibc

/// A PulseAudio playback or record stream through libpulse-simple: the blocking calls suit a
/// dedicated audio thread (`pa_simple_read` returns a period, `pa_simple_write` waits for room).
/// The server adapts its buffering to the requested `tlength`/`fragsize` (one period each way).
final class PulseStream: AudioBackendStream, @unchecked Sendable {
    let name: String
    let direction: AudioDevice.Direction
    let format: AudioFormat
    let periodFrames: Int
    let bufferFrames: Int
    let fillsSilence: Bool
    private var simple: OpaquePointer?
    private let buffer: UnsafeMutableRawPointer

    init(device: AudioDevice, format requested: AudioFormat, options: AudioStreamOptions) throws {
        name = "pulse:\(device.name)"
        direction = device.direction
        fillsSilence = options.fillsSilenceOnUnderrun
        guard (1...32).contains(requested.channels), (1...384_000).contains(requested.sampleRate) else {
            throw MediaDevicesError(.unsupportedFormat, device: name, operation: "pa_simple_new",
                                    detail: "PulseAudio takes 1…32 channels at 1…384000 Hz; asked for \(requested)")
        }
        format = requested
        periodFrames = max(16, options.periodFrames)
        bufferFrames = periodFrames * max(2, options.periods)
        var spec = pa_sample_spec(format: requested.sampleFormat.pulse, rate: UInt32(requested.sampleRate), channels: UInt8(requested.channels))
        let periodBytes = UInt32(periodFrames * requested.bytesPerFrame)
        var attributes = pa_buffer_attr(maxlength: UInt32.max, tlength: UInt32(bufferFrames * requested.bytesPerFrame),
                                        prebuf: UInt32.max, minreq: periodBytes, fragsize: periodBytes)
        var error: Int32 = 0
        let target: String? = device.name.hasPrefix("@DEFAULT_") ? nil : device.name
        simple = pa_simple_new(nil, "mediadevices", device.direction == .input ? PA_STREAM_RECORD : PA_STREAM_PLAYBACK,
                               target, device.direction == .input ? "capture" : "render", &spec, nil, &attributes, &error)
        guard simple != nil else { throw PulseStream.error(error, device: name, operation: "pa_simple_new") }
        buffer = UnsafeMutableRawPointer.allocate(byteCount: Int(periodBytes), alignment: 16)
    }

    deinit {
        close()
        buffer.deallocate()
    }

    func close() {
        if let simple { pa_simple_free(simple) }
        simple = nil
    }

    static func error(_ code: Int32, device: String, operation: String) -> MediaDevicesError {
        let text = String(cString: pa_strerror(code))
        switch pa_error_code(UInt32(code)) {
        case PA_ERR_CONNECTIONTERMINATED, PA_ERR_KILLED:
            return MediaDevicesError(.disconnected, device: device, operation: operation,
                                     detail: "The PulseAudio server went away (\(text)); the stream ended. Restart the server (`pulseaudio --start`) and start again")
        case PA_ERR_CONNECTIONREFUSED, PA_ERR_TIMEOUT:
            return MediaDevicesError(.notFound, device: device, operation: operation,
                                     detail: "No PulseAudio server answered (\(text)); start one (`pulseaudio --start`) or set PULSE_SERVER")
        case PA_ERR_NOENTITY:
            return MediaDevicesError(.notFound, device: device, operation: operation,
                                     detail: "The server has no such source or sink (\(text)); run `pactl list short sources` / `sinks`")
        case PA_ERR_NOTSUPPORTED, PA_ERR_INVALID:
            return MediaDevicesError(.unsupportedFormat, device: device, operation: operation,
                                     detail: "The server refused the stream's format (\(text)); run `mediadevices formats \(device)`")
        case PA_ERR_ACCESS:
            return MediaDevicesError(.permissionDenied, device: device, operation: operation,
                                     detail: "The server refused this client (\(text)); check the cookie and the socket's permissions")
        default:
            return MediaDevicesError(.io, device: device, operation: operation, detail: "PulseAudio reported: \(text)")
        }
    }

    func run(bus: AudioBus, counters: AudioCounters, wake: WakeUpEvent, observer: AudioPeriodObserver?, shouldStop: () -> Bool) -> MediaDevicesError? {
        guard let simple else { return MediaDevicesError(.invalidState, device: name, operation: "start", detail: "The stream is closed; initialize it again") }
        let frameBytes = format.bytesPerFrame, sampleBytes = format.sampleFormat.bytesPerSample
        let periodBytes = periodFrames * frameBytes
        var error: Int32 = 0
        defer { if direction == .output { pa_simple_flush(simple, nil) } }
        while !shouldStop() {
            let begin = MonotonicClock.now()
            if direction == .input {
                if pa_simple_read(simple, buffer, periodBytes, &error) < 0 {
                    return PulseStream.error(error, device: name, operation: "pa_simple_read")
                }
                let copyStart = MonotonicClock.now()
                bus.writeCaptureBytes(buffer, count: periodBytes, frameBytes: frameBytes, sampleBytes: sampleBytes)
                let end = MonotonicClock.now()
                counters.period(frames: periodFrames, now: end, cost: end - copyStart)
                observer?(counters.periods.load(ordering: .relaxed))
            } else {
                let bytes = bus.renderPeriod(into: buffer, periodBytes: periodBytes, format: format, fillsSilence: fillsSilence)
                if bytes == 0 {
                    // Nothing to play: wait a period for the application (the server underruns).
                    var wakePoll = pollfd(fd: wake.descriptor, events: Int16(POLLIN), revents: 0)
                    if poll(&wakePoll, 1, Int32(max(1, periodFrames * 1000 / format.sampleRate))) > 0 { break }
                    continue
                }
                let cost = MonotonicClock.now() - begin
                if pa_simple_write(simple, buffer, bytes, &error) < 0 {
                    return PulseStream.error(error, device: name, operation: "pa_simple_write")
                }
                counters.period(frames: bytes / frameBytes, now: MonotonicClock.now(), cost: cost)
                observer?(counters.periods.load(ordering: .relaxed))
            }
            let latency = pa_simple_get_latency(simple, &error)
            if latency != UInt64.max { counters.delay(Int(latency * UInt64(format.sampleRate) / 1_000_000)) }
        }
        return nil
    }
}
