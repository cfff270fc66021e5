import MediaDevicesCore
import CPulse
import Glibc

/// PulseAudio enumeration: connects with a private `pa_mainloop` (no autospawn), asks for the
/// server info (default sink and source), the sinks and the sources, and gives up after a
/// deadline so a missing or wedged server never hangs the caller.
enum PulseDevices {
    /// What the info callbacks collect.
    private final class Collector {
        var defaultSink = ""
        var defaultSource = ""
        var sinks: [Entry] = []
        var sources: [Entry] = []
        /// Whether the server runs on this machine (`pa_context_is_local`).
        var isLocal = false
    }

    /// A sink or a source as the server described it.
    private struct Entry {
        let name: String
        let description: String
        let spec: pa_sample_spec
        /// The ALSA card behind it (`alsa.card`, which PulseAudio's and PipeWire's ALSA devices
        /// carry; `api.alsa.card` in PipeWire's own naming), if any.
        let card: Int?

        init(name: UnsafePointer<CChar>, description: UnsafePointer<CChar>?, spec: pa_sample_spec, properties: OpaquePointer?) {
            self.name = String(cString: name)
            self.description = description.map { String(cString: $0) } ?? ""
            self.spec = spec
            func integer(_ key: String) -> Int? {
                guard let properties, let value = pa_proplist_gets(properties, key) else { return nil }
                return Int(String(cString: value))
            }
            card = integer("alsa.card") ?? integer("api.alsa.card")
        }
    }

    static func enumerate(timeout: Duration) -> Result<[AudioDevice], MediaDevicesError> {
        query(timeout: timeout).map { collector in
            // The card's group only when the server is this machine's (its card numbers are ours).
            let local = collector.isLocal
            return collector.sinks.map {
                AudioDevice(name: $0.name, description: $0.description, direction: .output,
                            isDefault: $0.name == collector.defaultSink, backend: .pulse,
                            group: local ? $0.card.flatMap { DeviceGroup.of(soundCard: $0) } : nil)
            } + collector.sources.map {
                AudioDevice(name: $0.name, description: $0.description, direction: .input,
                            isDefault: $0.name == collector.defaultSource, backend: .pulse,
                            group: local ? $0.card.flatMap { DeviceGroup.of(soundCard: $0) } : nil)
            }
        }
    }

    static func capabilities(of device: AudioDevice) throws(MediaDevicesError) -> AudioFormatCapabilities {
        let collector = try query(timeout: .seconds(2)).get()
        let list = device.direction == .output ? collector.sinks : collector.sources
        let wanted = device.name == "@DEFAULT_SINK@" ? collector.defaultSink
            : device.name == "@DEFAULT_SOURCE@" ? collector.defaultSource : device.name
        guard let entry = list.first(where: { $0.name == wanted }) else {
            throw MediaDevicesError(.notFound, device: "pulse:\(device.name)", operation: "pa_context_get_\(device.direction == .output ? "sink" : "source")_info_list",
                                    detail: "The PulseAudio server has no \(device.direction == .output ? "sink" : "source") of that name; run `pactl list short \(device.direction == .output ? "sinks" : "sources")`")
        }
        // The server converts any spec to the device's own: every rate up to PA_RATE_MAX, up to
        // PA_CHANNELS_MAX channels, each of the sample formats.
        let native = AudioFormat(sampleRate: Int(entry.spec.rate), channels: Int(entry.spec.channels),
                                 sampleFormat: SampleFormat(pulse: entry.spec.format) ?? .s16LE)
        let maxRate = Int(48000 * 8)
        return AudioFormatCapabilities(sampleRates: 1...maxRate,
                                       standardSampleRates: AudioFormatCapabilities.commonSampleRates,
                                       channels: 1...32, sampleFormats: SampleFormat.allCases, nativeFormat: native)
    }

    private static func query(timeout: Duration) -> Result<Collector, MediaDevicesError> {
        guard let loop = pa_mainloop_new() else {
            return .failure(MediaDevicesError(.io, device: "pulse", operation: "pa_mainloop_new", detail: "Out of memory"))
        }
        defer { pa_mainloop_free(loop) }
        guard let context = pa_context_new(pa_mainloop_get_api(loop), "mediadevices") else {
            return .failure(MediaDevicesError(.io, device: "pulse", operation: "pa_context_new", detail: "Out of memory"))
        }
        defer { pa_context_disconnect(context); pa_context_unref(context) }
        let deadline = MonotonicClock.now() + UInt64(max(timeout.nanosecondCount, 0))
        func iterate(until done: () -> Bool) -> Bool {
            while !done() {
                if MonotonicClock.now() > deadline || WaitCancellation.isCurrentCancelled { return false }
                if pa_mainloop_prepare(loop, 50_000) < 0 || pa_mainloop_poll(loop) < 0 || pa_mainloop_dispatch(loop) < 0 { return false }
            }
            return true
        }
        func failure(_ operation: String) -> MediaDevicesError {
            let code = pa_context_errno(context)
            let text = String(cString: pa_strerror(code))
            return MediaDevicesError(.notFound, device: "pulse", operation: operation,
                                     detail: "No PulseAudio server answered (\(text)); start one (`pulseaudio --start`), or set PULSE_SERVER; ALSA devices are still listed")
        }
        func cancelled(_ operation: String) -> MediaDevicesError {
            MediaDevicesError(.cancelled, device: "pulse", operation: operation,
                              detail: "The task listing the PulseAudio server's devices was cancelled; nothing was left open")
        }
        guard pa_context_connect(context, nil, PA_CONTEXT_NOAUTOSPAWN, nil) >= 0 else { return .failure(failure("pa_context_connect")) }
        let connected = iterate {
            let state = pa_context_get_state(context)
            return state == PA_CONTEXT_READY || state == PA_CONTEXT_FAILED || state == PA_CONTEXT_TERMINATED
        }
        guard connected, pa_context_get_state(context) == PA_CONTEXT_READY else {
            if WaitCancellation.isCurrentCancelled { return .failure(cancelled("pa_context_connect")) }
            if !connected {
                return .failure(MediaDevicesError(.timeout, device: "pulse", operation: "pa_context_connect",
                                                  detail: "The PulseAudio server did not answer within \(timeout); check it (`pactl info`)"))
            }
            return .failure(failure("pa_context_connect"))
        }
        let collector = Collector()
        collector.isLocal = pa_context_is_local(context) == 1
        let user = Unmanaged.passUnretained(collector).toOpaque()
        let operations: [OpaquePointer?] = [
            pa_context_get_server_info(context, { _, info, user in
                guard let info, let user else { return }
                let collector = Unmanaged<Collector>.fromOpaque(user).takeUnretainedValue()
                if let sink = info.pointee.default_sink_name { collector.defaultSink = String(cString: sink) }
                if let source = info.pointee.default_source_name { collector.defaultSource = String(cString: source) }
            }, user),
            pa_context_get_sink_info_list(context, { _, info, eol, user in
                guard eol == 0, let info, let user else { return }
                let collector = Unmanaged<Collector>.fromOpaque(user).takeUnretainedValue()
                collector.sinks.append(Entry(name: info.pointee.name, description: info.pointee.description,
                                              spec: info.pointee.sample_spec, properties: info.pointee.proplist))
            }, user),
            pa_context_get_source_info_list(context, { _, info, eol, user in
                guard eol == 0, let info, let user else { return }
                let collector = Unmanaged<Collector>.fromOpaque(user).takeUnretainedValue()
                collector.sources.append(Entry(name: info.pointee.name, description: info.pointee.description,
                                                spec: info.pointee.sample_spec, properties: info.pointee.proplist))
            }, user),
        ]
        defer { for operation in operations where operation != nil { pa_operation_unref(operation) } }
        let answered = iterate {
            operations.allSatisfy { $0 == nil || pa_operation_get_state($0) != PA_OPERATION_RUNNING }
        }
        guard answered else {
            if WaitCancellation.isCurrentCancelled { return .failure(cancelled("pa_context_get_sink_info_list")) }
            return .failure(MediaDevicesError(.timeout, device: "pulse", operation: "pa_context_get_sink_info_list",
                                              detail: "The PulseAudio server did not list its devices within \(timeout); check it (`pactl list short sinks`)"))
        }
        return .success(collector)
    }
}

extension SampleFormat {
    /// The PulseAudio sample format.
    var pulse: pa_sample_format_t {
        switch self {
        case .s16LE: return PA_SAMPLE_S16LE
        case .s32LE: return PA_SAMPLE_S32LE
        case .floatLE: return PA_SAMPLE_FLOAT32LE
        }
    }

    init?(pulse: pa_sample_format_t) {
        switch pulse {
        case PA_SAMPLE_S16LE: self = .s16LE
        case PA_SAMPLE_S32LE: self = .s32LE
        case PA_SAMPLE_FLOAT32LE: self = .floatLE
        default: return nil
        }
    }
}
