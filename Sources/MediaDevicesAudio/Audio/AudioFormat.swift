import MediaDevicesCore
/// How one sample is stored. The corresponding ALSA formats are `SND_PCM_FORMAT_S16_LE`,
/// `SND_PCM_FORMAT_S32_LE` and `SND_PCM_FORMAT_FLOAT_LE`; PulseAudio's are `PA_SAMPLE_S16LE`,
/// `PA_SAMPLE_S32LE` and `PA_SAMPLE_FLOAT32LE`.
public enum SampleFormat: String, Sendable, Hashable, CaseIterable, Encodable, CustomStringConvertible {
    /// Signed 16-bit little-endian integers.
    case s16LE = "S16_LE"
    /// Signed 32-bit little-endian integers.
    case s32LE = "S32_LE"
    /// 32-bit little-endian IEEE floats in -1...1.
    case floatLE = "FLOAT_LE"

    /// Bytes per sample.
    public var bytesPerSample: Int { self == .s16LE ? 2 : 4 }

    /// The ALSA name (`S16_LE`).
    public var description: String { rawValue }

    /// Parses `S16_LE`, `s16`, `S32_LE`, `s32`, `FLOAT_LE`, `float`, `f32` (any case); nil otherwise.
    public init?(named name: String) {
        switch name.uppercased() {
        case "S16_LE", "S16LE", "S16": self = .s16LE
        case "S32_LE", "S32LE", "S32": self = .s32LE
        case "FLOAT_LE", "FLOAT32LE", "FLOAT", "F32", "F32LE", "FLOAT32": self = .floatLE
        default: return nil
        }
    }
}

/// A stream's format: sample rate, channel count and sample format. Samples of all channels are
/// interleaved, one frame after another (ALSA's `SND_PCM_ACCESS_RW_INTERLEAVED`).
/// Corresponds to `OTAudioFormat` (sample rate and number of channels).
public struct AudioFormat: Sendable, Hashable, CustomStringConvertible {
    /// Frames per second (44100, 48000, …).
    public var sampleRate: Int
    /// Channels per frame (1 mono, 2 stereo, …).
    public var channels: Int
    /// How each sample is stored.
    public var sampleFormat: SampleFormat

    /// Creates a format.
    public init(sampleRate: Int, channels: Int, sampleFormat: SampleFormat = .s16LE) {
        self.sampleRate = sampleRate
        self.channels = channels
        self.sampleFormat = sampleFormat
    }

    /// Bytes per frame (all channels of one sampling instant).
    public var bytesPerFrame: Int { channels * sampleFormat.bytesPerSample }

    /// `48000 Hz, 2 ch, S16_LE`.
    public var description: String { "\(sampleRate) Hz, \(channels) ch, \(sampleFormat)" }

    /// How long `frames` frames last at this format's rate.
    public func duration(frames: Int) -> Duration { .seconds(Double(frames) / Double(sampleRate)) }
}

/// What a device accepts, as the hardware or the server reports it: for ALSA the refined
/// `snd_pcm_hw_params` space (`snd_pcm_hw_params_any` then min/max and `test_*`), for PulseAudio
/// the sample specs the server converts from, with the device's own spec as ``nativeFormat``.
public struct AudioFormatCapabilities: Sendable, Hashable {
    /// Lowest and highest sample rate.
    public var sampleRates: ClosedRange<Int>
    /// Which of the common rates (8000…192000) inside ``sampleRates`` the device accepts.
    public var standardSampleRates: [Int]
    /// Lowest and highest channel count.
    public var channels: ClosedRange<Int>
    /// The sample formats accepted, of those MediaDevices handles.
    public var sampleFormats: [SampleFormat]
    /// The format the device runs at without conversion, where the backend says (PulseAudio).
    public var nativeFormat: AudioFormat?

    /// Creates a capability description.
    package init(sampleRates: ClosedRange<Int>, standardSampleRates: [Int], channels: ClosedRange<Int>,
                sampleFormats: [SampleFormat], nativeFormat: AudioFormat? = nil) {
        self.sampleRates = sampleRates
        self.standardSampleRates = standardSampleRates
        self.channels = channels
        self.sampleFormats = sampleFormats
        self.nativeFormat = nativeFormat
    }

    /// The common rates formats listings check.
    package static let commonSampleRates = [8000, 11025, 16000, 22050, 32000, 44100, 48000, 88200, 96000, 176400, 192000]

    /// Whether `format` lies inside these capabilities.
    public func contains(_ format: AudioFormat) -> Bool {
        sampleRates.contains(format.sampleRate) && channels.contains(format.channels) && sampleFormats.contains(format.sampleFormat)
    }
}
