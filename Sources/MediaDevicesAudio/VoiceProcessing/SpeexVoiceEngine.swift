#if VoiceProcessing
import MediaDevicesCore
import CSpeexDSP

/// `VoiceEngine` on speexdsp: its multi-delay-block echo canceller (`speex_echo_cancellation`,
/// the played block aligned by `EchoReferenceLine`, taken together with the captured one) and its preprocessor (noise suppression,
/// residual echo suppression linked to the canceller, gain control). Mono only.
final class SpeexVoiceEngine: VoiceEngine {
    private let echo: OpaquePointer
    private let preprocess: SpeexPreprocessor
    private let cancelled: UnsafeMutablePointer<Int16>
    private let blockFrames: Int
    private let options: VoiceProcessingOptions
    private var processing = VoiceProcessing.none

    init(format: AudioFormat, options: VoiceProcessingOptions) throws {
        guard format.channels == 1 else {
            throw MediaDevicesError(.unsupportedFormat, device: nil, operation: "create voice processor",
                                    detail: "speexdsp's voice processing takes 1 channel; asked for \(format) (use the webrtc library for stereo)")
        }
        blockFrames = format.sampleRate / 100
        let (seconds, attoseconds) = options.echoTail.components
        let tail = max(blockFrames, Int((Double(seconds) + Double(attoseconds) / 1e18) * Double(format.sampleRate)))
        guard let echo = speex_echo_state_init(Int32(blockFrames), Int32(tail)) else {
            throw MediaDevicesError(.io, device: nil, operation: "create voice processor", detail: "speex_echo_state_init failed for \(format)")
        }
        do { preprocess = try SpeexPreprocessor(format: format) } catch {
            speex_echo_state_destroy(echo)
            throw error
        }
        self.echo = echo
        self.options = options
        var rate = Int32(format.sampleRate)
        speex_echo_ctl(echo, SPEEX_ECHO_SET_SAMPLING_RATE, &rate)
        cancelled = .allocate(capacity: blockFrames)
    }

    deinit {
        speex_echo_state_destroy(echo)
        cancelled.deallocate()
    }

    func apply(_ processing: VoiceProcessing) throws {
        if processing.contains(.echoCancellation) != self.processing.contains(.echoCancellation) { speex_echo_state_reset(echo) }
        preprocess.configure(denoise: processing.contains(.noiseSuppression), gain: processing.contains(.gainControl),
                             targetLevelDBFS: options.targetLevelDBFS, maximumGainDB: options.maximumGainDB,
                             echo: processing.contains(.echoCancellation) ? echo : nil)
        self.processing = processing
    }

    let referenceLeadFrames = 0

    func processCapture(_ block: UnsafeMutablePointer<Int16>, reference: UnsafePointer<Int16>) {
        if processing.contains(.echoCancellation) {
            speex_echo_cancellation(echo, block, reference, cancelled)
            block.update(from: cancelled, count: blockFrames)
        }
        if processing.contains(.noiseSuppression) || processing.contains(.gainControl) || processing.contains(.echoCancellation) {
            preprocess.run(block)
        }
    }

    /// Measured (`VoiceProcessorLatencyTests`): one block, whichever part runs.
    func delayFrames(for processing: VoiceProcessing) -> Int { processing.isEmpty ? 0 : blockFrames }

    var echoMetrics: EchoMetrics? { nil }
}
#endif
