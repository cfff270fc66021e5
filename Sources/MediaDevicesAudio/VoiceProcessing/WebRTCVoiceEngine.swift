#if VoiceProcessing
import MediaDevicesCore
import CWebRTCAPM

/// `VoiceEngine` on WebRTC's audio processing module (through the CWebRTCAPM shim): the AEC
/// with extended filter, the noise suppressor at its high level, and the high-pass filter
/// while anything runs. Both APM streams run on the capture thread, the reference block
/// (aligned by `EchoReferenceLine`, `referenceLeadFrames` ahead) right before the captured
/// one, so APM's own far-end buffer never fills or drains, whatever either thread's pace.
/// Gain control runs on speexdsp's preprocessor after APM (mono): APM 0.3's adaptive digital
/// gain rises about 3 dB a second, so a talker 20 dB too quiet was still 11 dB short after
/// 3 s in the simulated room, where speexdsp's was within 1 dB after 1 s.
final class WebRTCVoiceEngine: VoiceEngine {
    private let apm: OpaquePointer
    private let sampleRate: Int
    private let options: VoiceProcessingOptions
    /// Gain control (nil for stereo: APM's own adaptive digital gain then).
    private let gain: SpeexPreprocessor?
    private var gainOn = false

    init(format: AudioFormat, options: VoiceProcessingOptions) throws {
        var error: Int32 = 0
        guard let apm = capm_create(Int32(format.sampleRate), Int32(format.channels), 1, options.findsDelay ? 1 : 0, &error) else {
            throw MediaDevicesError(.unsupportedFormat, device: nil, operation: "create voice processor",
                                    detail: "WebRTC's audio processing refused \(format) (APM error \(error)); it takes 8000, 16000, 32000 or 48000 Hz, 1 or 2 channels")
        }
        self.apm = apm
        sampleRate = format.sampleRate
        self.options = options
        gain = format.channels == 1 ? try SpeexPreprocessor(format: format) : nil
    }

    deinit { capm_destroy(apm) }

    func apply(_ processing: VoiceProcessing) throws {
        let target = Int32(min(31, max(0, options.targetLevelDBFS))), gain = Int32(min(90, max(0, options.maximumGainDB)))
        let results: [(String, Int32)] = [
            ("echo cancellation", capm_set_echo_cancellation(apm, processing.contains(.echoCancellation) ? 1 : 0, Int32(min(2, max(0, options.echoSuppressionLevel))))),
            ("noise suppression", capm_set_noise_suppression(apm, processing.contains(.noiseSuppression) ? 1 : 0, 2)),
            ("gain control", capm_set_gain_control(apm, processing.contains(.gainControl) && self.gain == nil ? 1 : 0, target, gain)),
            ("high-pass filter", capm_set_high_pass_filter(apm, processing.isEmpty ? 0 : 1)),
        ]
        for index in results.indices where results[index].1 != 0 {
            throw MediaDevicesError(.io, device: nil, operation: "switch voice processing",
                                    detail: "WebRTC's audio processing refused to switch \(results[index].0) (APM error \(results[index].1))")
        }
        gainOn = processing.contains(.gainControl) && self.gain != nil
        self.gain?.configure(denoise: false, gain: gainOn, targetLevelDBFS: options.targetLevelDBFS, maximumGainDB: options.maximumGainDB, echo: nil)
    }

    /// The delay APM is told: each reference block is handed this much before the captured
    /// block holding its echo, as a device's would be (APM was measured with delays of
    /// 40-250 ms; 0 would be outside that).
    var referenceLeadFrames: Int { sampleRate * Self.leadMilliseconds / 1000 }
    private static let leadMilliseconds = 40

    func processCapture(_ block: UnsafeMutablePointer<Int16>, reference: UnsafePointer<Int16>) {
        _ = capm_process_render(apm, reference)
        _ = capm_process_capture(apm, block, Int32(Self.leadMilliseconds))
        if gainOn { gain?.run(block) }
    }

    /// Measured (`VoiceProcessorLatencyTests`, by cross-correlating out with in): the band
    /// split above 16 kHz (3 frames at 32 kHz, 46 at 48 kHz), the AEC's 64-frame block buffer
    /// (7 ms; 14 ms at 8 kHz) and the noise suppressor's overlap (6 ms); speexdsp's gain
    /// control one block (APM's own, stereo, none).
    func delayFrames(for processing: VoiceProcessing) -> Int {
        guard !processing.isEmpty else { return 0 }
        var frames = sampleRate == 32000 ? 3 : sampleRate == 48000 ? 46 : 0
        if processing.contains(.echoCancellation) { frames += sampleRate == 8000 ? 112 : sampleRate * 7 / 1000 }
        if processing.contains(.noiseSuppression) { frames += sampleRate * 6 / 1000 }
        if processing.contains(.gainControl), gain != nil { frames += sampleRate / 100 }
        return frames
    }

    var echoMetrics: EchoMetrics? {
        var metrics = capm_echo_metrics()
        guard capm_get_echo_metrics(apm, &metrics) == 0 else { return nil }
        return EchoMetrics(echoReturnLoss: Double(metrics.echo_return_loss),
                           echoReturnLossEnhancement: Double(metrics.echo_return_loss_enhancement),
                           delay: metrics.delay_median_ms >= 0 ? .milliseconds(metrics.delay_median_ms) : nil)
    }
}
#endif
