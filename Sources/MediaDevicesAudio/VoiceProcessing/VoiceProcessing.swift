import MediaDevicesCore
import Foundation

/// Which voice processors run on captured speech: the switches of iOS's voice-processing I/O
/// unit (`kAUVoiceIOProperty_BypassVoiceProcessing`, `…_VoiceProcessingEnableAGC`) and of
/// WebRTC's audio processing module.
///
/// ```swift
/// VoiceProcessingOptions(processing: .all)                             // a call's default
/// VoiceProcessingOptions(processing: VoiceProcessing(echoCancellation: true))
/// processor.processing.gainControl = false                             // while running
/// ```
public struct VoiceProcessing: Sendable, Hashable, CustomStringConvertible {
    /// Echo cancellation: what the render side played is removed from the capture.
    public var echoCancellation: Bool
    /// Noise suppression: stationary noise (fans, hum, hiss) is removed from the capture.
    public var noiseSuppression: Bool
    /// Automatic gain control: a quiet or loud talker is brought to one level.
    public var gainControl: Bool

    /// The processors given as `true` (none by default).
    public init(echoCancellation: Bool = false, noiseSuppression: Bool = false, gainControl: Bool = false) {
        self.echoCancellation = echoCancellation
        self.noiseSuppression = noiseSuppression
        self.gainControl = gainControl
    }

    /// All three (the default of a call).
    public static let all = VoiceProcessing(echoCancellation: true, noiseSuppression: true, gainControl: true)
    /// None: the capture passes unchanged (after the processor's block delay).
    public static let none = VoiceProcessing()

    /// The processors as bits (echo 1, noise 2, gain 4), which the voice processor keeps in an atomic.
    var rawValue: UInt8 { (echoCancellation ? 1 : 0) | (noiseSuppression ? 2 : 0) | (gainControl ? 4 : 0) }

    /// The processors from their bits (see `rawValue`).
    init(rawValue: UInt8) {
        self.init(echoCancellation: rawValue & 1 != 0, noiseSuppression: rawValue & 2 != 0, gainControl: rawValue & 4 != 0)
    }

    /// Whether none runs.
    package var isEmpty: Bool { rawValue == 0 }

    /// Parses `echo,noise,gain` (any subset, comma separated, any case) or `none`; nil for an unknown word.
    package init?(parsing text: String) {
        self.init()
        for word in text.lowercased().split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) {
            switch word {
            case "none": continue
            case "echo": echoCancellation = true
            case "noise": noiseSuppression = true
            case "gain": gainControl = true
            default: return nil
            }
        }
    }

    /// `echo,noise,gain`, or `none`.
    public var description: String {
        let words = [(echoCancellation, "echo"), (noiseSuppression, "noise"), (gainControl, "gain")].filter(\.0).map(\.1)
        return words.isEmpty ? "none" : words.joined(separator: ",")
    }
}

/// The libraries ``VoiceProcessor`` runs on. Both were measured on the same simulated room
/// (`VoiceProcessorRoomTests`, espeak-ng talkers, 16 kHz): see `VoiceProcessorRoomTests` and
/// the DocC article AudioAndTheDriver ("Voice processing for calls") for the figures and the choice.
public enum VoiceProcessingLibrary: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// WebRTC's audio processing module 0.3 (`libwebrtc-audio-processing`, BSD): the AEC with
    /// extended filter, noise suppression and adaptive digital gain control. The default.
    case webRTC = "webrtc"
    /// speexdsp's multi-delay-block echo canceller (`speex_echo_*`) and preprocessor
    /// (`speex_preprocess_*`: noise suppression, residual echo suppression, gain), BSD. Mono only.
    case speexDSP = "speexdsp"

    /// `webrtc`, `speexdsp`.
    public var description: String { rawValue }
}

/// How a ``VoiceProcessor`` is made.
public struct VoiceProcessingOptions: Sendable, Hashable {
    /// The processors that run at first (changeable while running: ``VoiceProcessor/processing``).
    public var processing: VoiceProcessing
    /// The library doing the work.
    public var library: VoiceProcessingLibrary
    /// The level the gain control aims at, in dB below full scale (WebRTC's
    /// `set_target_level_dbfs`, 0…31; the peak level of speech, about 10 dB above its RMS).
    public var targetLevelDBFS: Int
    /// The most gain the gain control adds, in dB (WebRTC's `set_compression_gain_db`, 0…90;
    /// speexdsp's `SPEEX_PREPROCESS_SET_AGC_MAX_GAIN`).
    public var maximumGainDB: Int
    /// Whether the canceller looks for the echo delay itself (WebRTC's delay-agnostic AEC)
    /// instead of trusting the delay it is told. Off: the driver measures the delay.
    public var findsDelay: Bool
    /// How hard the canceller suppresses what echo its filter leaves, 0 (low: the near-end
    /// talker kept best in double talk) to 2 (high) (WebRTC's `set_suppression_level`).
    public var echoSuppressionLevel: Int
    /// The longest echo tail the canceller models: the length of speexdsp's linear filter, which
    /// with ``VoiceProcessingLibrary/webRTC`` runs before WebRTC's AEC (whose own filter covers
    /// about 128 ms).
    ///
    /// With ``VoiceProcessingLibrary/webRTC``, `.zero` runs WebRTC's AEC alone with its normal
    /// filter (48 ms at 16 kHz), as the sound servers' `echo-cancel` modules run it: about a third
    /// of the default's CPU (instruction-timed in the test rig at 16 kHz: speexdsp's 250 ms filter
    /// took 0.6 ms per 10 ms, the AEC's extended filter half of its 0.7 ms), the same echo removed where the
    /// delay is known, but an echo path that moves by 100 ms is not followed again (in the
    /// simulated room, not within the 6 s measured; the default: within 1.5 s), and in a room that rings longer than the filter the AEC's
    /// suppressor takes more of the near-end talker while both talk (0.84 correlation with the
    /// clean near end in the simulated room of the DocC article "Audio and the driver",
    /// against 0.93). With ``VoiceProcessingLibrary/speexDSP`` its filter is the only canceller, at
    /// least one 10 ms block long. The first 8 ms (``VoiceProcessingLibrary/speexDSP``) or 10 ms
    /// (``VoiceProcessingLibrary/webRTC``) of the filter model the margin by which the reference is
    /// taken early, not echo.
    public var echoTail: Duration

    /// Creates options; the defaults are those of a call.
    public init(processing: VoiceProcessing = .all, library: VoiceProcessingLibrary = .webRTC,
                targetLevelDBFS: Int = 3, maximumGainDB: Int = 30, findsDelay: Bool = false, echoSuppressionLevel: Int = 0, echoTail: Duration = .milliseconds(250)) {
        self.echoSuppressionLevel = echoSuppressionLevel
        self.processing = processing
        self.library = library
        self.targetLevelDBFS = targetLevelDBFS
        self.maximumGainDB = maximumGainDB
        self.findsDelay = findsDelay
        self.echoTail = echoTail
    }
}

/// What a ``VoiceProcessor``'s echo canceller measured (WebRTC only; speexdsp measures nothing).
public struct EchoMetrics: Sendable, Hashable {
    /// Echo return loss: how far below the far end the echo arrives, in dB (long-term average).
    public var echoReturnLoss: Double
    /// Echo return loss enhancement: how much echo the canceller removes, in dB (average).
    public var echoReturnLossEnhancement: Double
    /// The delay the canceller found between reference and echo (nil: not yet).
    public var delay: Duration?
}
