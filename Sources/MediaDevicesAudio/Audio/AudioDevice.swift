import MediaDevicesCore
/// A sound input or output: an ALSA PCM (`hw:CARD=Loopback,DEV=0`, `plughw:…`, `default`) or a
/// PulseAudio source or sink. The audio counterpart of `CaptureDevice`.
public struct AudioDevice: Sendable, Hashable, CustomStringConvertible {
    /// Whether a device records or plays.
    public enum Direction: String, Sendable, Encodable {
        /// Records (an ALSA capture PCM, a PulseAudio source).
        case input
        /// Plays (an ALSA playback PCM, a PulseAudio sink).
        case output
    }

    /// Which sound system the device belongs to.
    public enum Backend: String, Sendable, Encodable {
        /// ALSA, through libasound.
        case alsa
        /// A PulseAudio (or PipeWire-Pulse) server, through libpulse.
        case pulse
    }

    /// The name the backend opens: the ALSA PCM name (`hw:CARD=Loopback,DEV=1`) or the Pulse
    /// source/sink name (`alsa_output.pci-0000_00_1f.3.analog-stereo`).
    public let name: String
    /// A human description (`Loopback, Loopback PCM`; the Pulse description).
    public let description: String
    /// A stable identifier: `alsa:NAME` or `pulse:NAME`. ALSA names use the card's id, not its
    /// index, so they survive re-ordering of cards.
    public let uniqueID: String
    /// Input or output.
    public let direction: Direction
    /// Whether this is the system's default: ALSA's `default` PCM, Pulse's default source/sink.
    public let isDefault: Bool
    /// ALSA or PulseAudio.
    public let backend: Backend
    /// ALSA only: the card index and device number (nil for `default` and Pulse).
    package let card: Int?
    /// ALSA only: the PCM device number on the card.
    package let deviceNumber: Int?
    /// The physical device this one is part of, as browsers' `groupId`: a camera
    /// (`CaptureDevice.group`) and a microphone with the same value are one device, a webcam and
    /// its own microphone. An opaque value to compare, not to parse (today `usb:3-1`, the USB bus
    /// and port, for a USB device; `pci:0000:00:1f` or `platform:snd_aloop.0` for others); the
    /// same after an unplug and a replug on the same port. Read from sysfs: the USB device (else
    /// the PCI slot or the platform device) that the sound card hangs on.
    ///
    /// `nil` where nothing physical is behind the device or it cannot be known: ALSA's `default`
    /// and devices made by name (``alsa(_:direction:)``, ``pulse(_:direction:)``), and Pulse
    /// devices that are not an ALSA card of this machine (null sinks, network and Bluetooth devices).
    /// A Pulse source or sink on an ALSA card (its `alsa.card` property; PipeWire's Pulse server
    /// sets it too) has the card's group, as have the card's `hw:` and `plughw:` PCMs.
    public let group: String?

    /// Creates a description (enumeration makes these; tests and custom backends may too).
    package init(name: String, description: String, direction: Direction, isDefault: Bool, backend: Backend,
                card: Int? = nil, deviceNumber: Int? = nil, group: String? = nil) {
        self.name = name
        self.description = description
        self.uniqueID = "\(backend.rawValue):\(name)"
        self.direction = direction
        self.isDefault = isDefault
        self.backend = backend
        self.card = card
        self.deviceNumber = deviceNumber
        self.group = group
    }

    /// Every device of both backends (ALSA PCMs, then Pulse sinks and sources when a server
    /// answers; ``MediaDevicesCore/DeviceDiscovery/inputs`` and
    /// ``MediaDevicesCore/DeviceDiscovery/outputs`` of the result split them), plus why a backend
    /// contributed nothing (no sound card, no Pulse server). Pulse gets `pulseTimeout` to answer;
    /// cancelling the calling task ends the wait at once (the result then lists the ALSA devices
    /// and a ``/MediaDevicesCore/MediaDevicesError/Code/cancelled`` problem).
    public static func discover(pulseTimeout: Duration = .seconds(2)) async -> DeviceDiscovery<AudioDevice> {
        await discovering("audio devices") { scan(pulseTimeout: pulseTimeout) }
    }

    /// `discover(pulseTimeout:)` on the calling thread, for the synchronous command-line tool
    /// and tests.
    package static func scan(pulseTimeout: Duration = .seconds(2)) -> DeviceDiscovery<AudioDevice> {
        let alsa = ALSADevices.enumerate()
        var found = DeviceDiscovery(devices: alsa.devices, problems: alsa.problems)
        switch PulseDevices.enumerate(timeout: pulseTimeout) {
        case .success(let pulse): found.devices += pulse
        case .failure(let error): found.problems.append(error)
        }
        return found
    }

    /// An ALSA PCM by name (`hw:Loopback,1,0`, `plughw:0`, `default`, any name from asound.conf),
    /// without enumerating: ALSA checks the name when the stream opens.
    public static func alsa(_ name: String, direction: Direction) -> AudioDevice {
        AudioDevice(name: name, description: "ALSA PCM \(name)", direction: direction, isDefault: name == "default", backend: .alsa)
    }

    /// A PulseAudio source or sink by name (nil: the server's default).
    public static func pulse(_ name: String?, direction: Direction) -> AudioDevice {
        AudioDevice(name: name ?? "@DEFAULT_\(direction == .input ? "SOURCE" : "SINK")@",
                    description: "PulseAudio \(direction == .input ? "source" : "sink") \(name ?? "(default)")",
                    direction: direction, isDefault: name == nil, backend: .pulse)
    }

    /// The rates, channel counts and sample formats the device accepts. ALSA opens the PCM (without
    /// blocking) and refines `snd_pcm_hw_params`; Pulse asks the server for the device's spec.
    public func supportedFormats() throws(MediaDevicesError) -> AudioFormatCapabilities {
        switch backend {
        case .alsa: return try ALSAFormats.capabilities(of: self)
        case .pulse: return try PulseDevices.capabilities(of: self)
        }
    }
}

extension DeviceDiscovery where Device == AudioDevice {
    /// The inputs among the devices (ALSA capture PCMs, Pulse sources).
    public var inputs: [AudioDevice] { devices.filter { $0.direction == .input } }
    /// The outputs among the devices (ALSA playback PCMs, Pulse sinks).
    public var outputs: [AudioDevice] { devices.filter { $0.direction == .output } }
}
