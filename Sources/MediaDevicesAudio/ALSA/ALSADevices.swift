import MediaDevicesCore
import CALSA
import Glibc

/// ALSA enumeration: every card (`snd_card_next`), every PCM device on it
/// (`snd_ctl_pcm_next_device`) in each direction it has (`snd_ctl_pcm_info`), as a `hw:` and a
/// `plughw:` device, plus the configured `default` PCM in each direction where ALSA's configuration
/// describes it (`snd_device_name_hint`) or it opens: Debian's configuration gives the stock
/// `default` (card 0, when no sound server's plugin takes it over) no hint, so `aplay -L` and the
/// hint list leave it out although `aplay` plays through it.
package enum ALSADevices {
    /// The description of the configured `default` PCM when ALSA's configuration gives it none.
    static let unhintedDefaultDescription = "Default ALSA device (the configuration's `default` PCM)"

    package static func enumerate() -> (devices: [AudioDevice], problems: [MediaDevicesError]) {
        _ = ALSALogging.silenced
        var devices: [AudioDevice] = []
        var problems: [MediaDevicesError] = []
        let defaultDescription = hintDescription(of: "default")
        for direction in [AudioDevice.Direction.input, .output] where defaultDescription != nil || opens("default", direction: direction) {
            devices.append(AudioDevice(name: "default", description: defaultDescription ?? unhintedDefaultDescription, direction: direction,
                                       isDefault: true, backend: .alsa))
        }
        var card: Int32 = -1
        var cards = 0
        while snd_card_next(&card) == 0 && card >= 0 {
            cards += 1
            var ctl: OpaquePointer?
            let opened = snd_ctl_open(&ctl, "hw:\(card)", 0)
            guard opened >= 0, let ctl else {
                problems.append(.fromAudio(opened, device: "hw:\(card)", operation: "snd_ctl_open"))
                continue
            }
            defer { snd_ctl_close(ctl) }
            var cardInfo: OpaquePointer?
            snd_ctl_card_info_malloc(&cardInfo)
            defer { snd_ctl_card_info_free(cardInfo) }
            guard snd_ctl_card_info(ctl, cardInfo) >= 0 else { continue }
            let cardID = String(cString: snd_ctl_card_info_get_id(cardInfo))
            let cardName = String(cString: snd_ctl_card_info_get_name(cardInfo))
            let group = DeviceGroup.of(soundCard: Int(card))
            var pcmInfo: OpaquePointer?
            snd_pcm_info_malloc(&pcmInfo)
            defer { snd_pcm_info_free(pcmInfo) }
            var device: Int32 = -1
            while snd_ctl_pcm_next_device(ctl, &device) == 0 && device >= 0 {
                for (direction, stream) in [(AudioDevice.Direction.output, SND_PCM_STREAM_PLAYBACK), (.input, SND_PCM_STREAM_CAPTURE)] {
                    snd_pcm_info_set_device(pcmInfo, UInt32(device))
                    snd_pcm_info_set_subdevice(pcmInfo, 0)
                    snd_pcm_info_set_stream(pcmInfo, stream)
                    guard snd_ctl_pcm_info(ctl, pcmInfo) >= 0 else { continue }  // no such direction
                    let pcmName = String(cString: snd_pcm_info_get_name(pcmInfo))
                    for plug in ["hw", "plughw"] {
                        devices.append(AudioDevice(
                            name: "\(plug):CARD=\(cardID),DEV=\(device)",
                            description: "\(cardName), \(pcmName)\(plug == "plughw" ? " (with conversions)" : "")",
                            direction: direction, isDefault: false, backend: .alsa, card: Int(card), deviceNumber: Int(device),
                            group: group))
                    }
                }
            }
        }
        if cards == 0 {
            problems.append(MediaDevicesError(.notFound, device: nil, operation: "snd_card_next",
                                              detail: "No ALSA sound card: /proc/asound/cards is empty; load a driver (for testing: `modprobe snd-aloop`)"))
        }
        return (devices, problems)
    }

    /// Whether the PCM `name` opens in `direction` (without blocking), or exists but another
    /// process holds it (`EBUSY`).
    static func opens(_ name: String, direction: AudioDevice.Direction) -> Bool {
        var pcm: OpaquePointer?
        let opened = ALSAOpen.open(&pcm, name, direction)
        if opened >= 0, let pcm { snd_pcm_close(pcm) }
        return opened >= 0 || opened == -EBUSY
    }

    /// The description ALSA's configuration gives a PCM name (`snd_device_name_hint`).
    static func hintDescription(of name: String) -> String? {
        var hints: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
        guard snd_device_name_hint(-1, "pcm", &hints) >= 0, let hints else { return nil }
        defer { snd_device_name_free_hint(hints) }
        var index = 0
        while let hint = hints[index] {
            index += 1
            guard let hintName = snd_device_name_get_hint(hint, "NAME") else { continue }
            defer { free(hintName) }
            guard String(cString: hintName) == name else { continue }
            guard let description = snd_device_name_get_hint(hint, "DESC") else { return name }
            defer { free(description) }
            return String(cString: description).split(separator: "\n").joined(separator: " — ")
        }
        return nil
    }
}

/// ALSA capabilities: the hw_params space after `snd_pcm_hw_params_any`, refined to
/// interleaved access, read with `get_rate_min/max`, `get_channels_min/max`, `test_format` and
/// `test_rate`.
enum ALSAFormats {
    static func capabilities(of device: AudioDevice) throws(MediaDevicesError) -> AudioFormatCapabilities {
        let pcm = try ALSAOpen.pcm(device.name, direction: device.direction)
        defer { snd_pcm_close(pcm) }
        var params: OpaquePointer?
        snd_pcm_hw_params_malloc(&params)
        defer { snd_pcm_hw_params_free(params) }
        var result = snd_pcm_hw_params_any(pcm, params)
        guard result >= 0 else { throw MediaDevicesError.fromAudio(result, device: device.name, operation: "snd_pcm_hw_params_any") }
        result = snd_pcm_hw_params_set_access(pcm, params, SND_PCM_ACCESS_RW_INTERLEAVED)
        guard result >= 0 else { throw MediaDevicesError.fromAudio(result, device: device.name, operation: "snd_pcm_hw_params_set_access") }
        return capabilities(ofOpen: pcm, params: params)
    }
}
