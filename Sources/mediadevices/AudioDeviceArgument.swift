import MediaDevices
import MediaDevicesCommandLine

/// What a DEVICE argument names when it is audio: an index from `list` (into the inputs for
/// `record`, the outputs for `play`), a uniqueID (`alsa:hw:CARD=Loopback,DEV=0`,
/// `pulse:NAME`), an ALSA PCM name (`hw:Loopback,1,0`, `plughw:0`, `default`), `pulse:NAME`
/// (`pulse:` or `pulse:default` for the server's default), or `input:N` / `output:N`.
enum AudioDeviceArgument {
    /// Whether `text` can only mean an audio device (so `formats` need not ask V4L2).
    static func isAudio(_ text: String) -> Bool {
        text == "default" || ["hw:", "plughw:", "pulse:", "alsa:", "input:", "output:", "dmix", "dsnoop", "sysdefault"].contains { text.hasPrefix($0) }
    }

    /// Resolves `text` to a device of `direction`; throws `.notFound` naming what exists.
    static func resolve(_ text: String, direction: AudioDevice.Direction) throws -> AudioDevice {
        for (prefix, wanted) in [("input:", AudioDevice.Direction.input), ("output:", .output)] where text.hasPrefix(prefix) {
            guard wanted == direction else {
                throw MediaDevicesError(.invalidState, device: text, operation: "find audio device",
                                        detail: "\(text) is an \(wanted.rawValue); this command needs an \(direction.rawValue)")
            }
            return try resolve(String(text.dropFirst(prefix.count)), direction: direction)
        }
        if text.hasPrefix("pulse:") {
            let name = String(text.dropFirst("pulse:".count))
            if name.isEmpty || name == "default" { return .pulse(nil, direction: direction) }
            let known = PulseAudioLookup.devices(direction).first { $0.name == name }
            return known ?? .pulse(name, direction: direction)
        }
        if text.hasPrefix("alsa:") { return .alsa(String(text.dropFirst("alsa:".count)), direction: direction) }
        if text == "default" || text.contains(":") && !text.hasPrefix("/") { return .alsa(text, direction: direction) }
        let found = AudioDevice.scan()
        let devices = direction == .input ? found.inputs : found.outputs
        if let index = Int(text) {
            guard devices.indices.contains(index) else {
                throw MediaDevicesError(.notFound, device: text, operation: "find audio device",
                                        detail: "There are \(devices.count) audio \(direction.rawValue)s; run `mediadevices list`")
            }
            return devices[index]
        }
        if let device = devices.first(where: { $0.uniqueID == text || $0.name == text }) { return device }
        throw MediaDevicesError(.notFound, device: text, operation: "find audio device",
                                detail: "No audio \(direction.rawValue) has that index, uniqueID or name; run `mediadevices list`, or give an ALSA PCM name (`hw:Loopback,1,0`, `plughw:0`, `default`) or `pulse:NAME`")
    }
}

/// The Pulse devices, looked up only when a `pulse:` name is given.
enum PulseAudioLookup {
    static func devices(_ direction: AudioDevice.Direction) -> [AudioDevice] {
        AudioDevice.scan().devices.filter { $0.backend == .pulse && $0.direction == direction }
    }
}
