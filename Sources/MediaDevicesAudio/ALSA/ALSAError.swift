import MediaDevicesCore
import CALSA
import Glibc

extension MediaDevicesError {
    /// Maps a negative errno returned by libasound (or libpulse's equivalent) from `operation`
    /// on the audio device `device` to an error with a sound-specific remedy.
    static func fromAudio(_ result: Int32, device: String, operation: String) -> MediaDevicesError {
        let code = result < 0 ? -result : result
        // libasound reads configuration files and opens a control device before the PCM: out of
        // descriptors, it says ENOENT ("no PCM of that name") or ENODEV instead of EMFILE.
        if [ENOENT, ENODEV, ENXIO].contains(code), let exhausted = DescriptorHeadroom.likelyExhausted() {
            return .tooManyOpenFiles(exhausted, device: device, operation: operation)
        }
        switch code {
        case EBUSY:
            return MediaDevicesError(.busy, device: device, operation: operation, errno: code,
                                     detail: "Another program holds \(device) (hw: devices take one stream at a time); close it (find it with `fuser -v /dev/snd/*`), or use `plughw:`/`default`/a Pulse device")
        case EACCES, EPERM:
            return MediaDevicesError(.permissionDenied, device: device, operation: operation, errno: code,
                                     detail: "This user may not open \(device); add it to the `audio` group (`usermod -aG audio $USER`, then log in again)")
        // A card number past the last card (`hw:97,0`) is EINVAL from libasound.
        case ENOENT where operation == "snd_pcm_open", ENODEV where operation == "snd_pcm_open", ENXIO where operation == "snd_pcm_open",
             EINVAL where operation == "snd_pcm_open":
            return MediaDevicesError(.notFound, device: device, operation: operation, errno: code,
                                     detail: "ALSA has no PCM of that name",
                                     remedy: "AudioDevice.discover() lists the devices there are (`aplay -L` the PCM names ALSA knows)")
        case EINVAL where operation.hasPrefix("snd_pcm_hw_params"):
            return MediaDevicesError(.unsupportedFormat, device: device, operation: operation, errno: code,
                                     detail: "\(device) does not accept that format",
                                     remedy: "AudioDevice.supportedFormats() lists what it takes; or open it as `plughw:`, which converts")
        default:
            return MediaDevicesError.fromErrno(code, device: device, operation: operation)
        }
    }
}

extension SampleFormat {
    /// The ALSA format constant.
    var alsa: snd_pcm_format_t {
        switch self {
        case .s16LE: return SND_PCM_FORMAT_S16_LE
        case .s32LE: return SND_PCM_FORMAT_S32_LE
        case .floatLE: return SND_PCM_FORMAT_FLOAT_LE
        }
    }
}

/// Silences libasound's own error printing (it writes to stderr from inside calls such as
/// `snd_pcm_open` of a missing card); MediaDevices reports errors itself.
enum ALSALogging {
    static let silenced: Void = {
        calsa_silence_errors()
    }()
}
