#if VoiceProcessing
import MediaDevicesCore
import CSpeexDSP

/// `VoiceEngine` on speexdsp: its multi-delay-block echo canceller (`speex_echo_cancellation`,
/// the played block aligned by `EchoReferenceLine`, taken together with the captured one) and its preprocessor (noise suppression,
/// residual echo suppression linked to the canceller, gain control). Mono only.
final class SpeexVoiceEngine: VoiceEngine {
    private let echo: SpeexEchoCanceller
    private let preprocess: SpeexPreprocessor
    private let blockFrames: Int
    private let options: VoiceProcessingOptions
    private var processing = VoiceProcessing.none

    init(format: AudioFormat, options: VoiceProcessingOptions) throws(MediaDevicesError) {
        guard format.channels == 1 else {
            throw MediaDevicesError(.unsupportedFormat, device: nil, operation: "create voice processor",
                                    detail: "speexdsp's voice processing takes 1 channel; asked for \(format) (use the webrtc library for stereo)")
        }
        blockFrames = format.sampleRate / 100
        echo = try SpeexEchoCanceller(format: format, tail: options.echoTail)
        preprocess = try SpeexPreprocessor(format: format)
        self.options = options
    }

    func apply(_ processing: VoiceProcessing) throws(MediaDevicesError) {
        if processing.echoCancellation != self.processing.echoCancellation { echo.reset() }
        preprocess.configure(denoise: processing.noiseSuppression, gain: processing.gainControl,
                             targetLevelDBFS: options.targetLevelDBFS, maximumGainDB: options.maximumGainDB,
                             echo: processing.echoCancellation ? echo.state : nil)
        self.processing = processing
    }

    /// The reference is taken `referenceMarginMilliseconds` before its echo (speexdsp takes the
    /// two blocks together: its filter's first milliseconds model the margin's silence).
    var referenceLeadFrames: Int { blockFrames * 100 * Self.referenceMarginMilliseconds / 1000 }

    func processCapture(_ block: UnsafeMutablePointer<Int16>, reference: UnsafePointer<Int16>) {
        if processing.echoCancellation {
            echo.cancel(block, reference: reference)
        }
        if processing.noiseSuppression || processing.gainControl || processing.echoCancellation {
            preprocess.run(block)
        }
    }

    /// Measured (`VoiceProcessorLatencyTests`): one block, whichever part runs.
    func delayFrames(for processing: VoiceProcessing) -> Int { processing.isEmpty ? 0 : blockFrames }

    var echoMetrics: EchoMetrics? { nil }
}
#endif
