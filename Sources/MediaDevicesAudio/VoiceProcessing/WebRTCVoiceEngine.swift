#if VoiceProcessing
import MediaDevicesCore
import CWebRTCAPM

/// `VoiceEngine` on WebRTC's audio processing module (through the CWebRTCAPM shim): the AEC
/// with extended filter, the noise suppressor at its high level, and the high-pass filter
/// while noise suppression or gain runs without the canceller. Both APM streams run on the
/// capture thread, the reference block (aligned by `EchoReferenceLine`, `referenceLeadFrames`
/// ahead) right before the captured one, so APM's own far-end buffer never fills or drains,
/// whatever either thread's pace.
///
/// Echo is cancelled in two stages: speexdsp's linear canceller (`SpeexEchoCanceller`, a
/// filter as long as `echoTail`) first, then APM's AEC on what it leaves. APM alone kept the
/// near-end talker at 0.76 correlation in double talk in the simulated room
/// (`VoiceProcessorRoomTests`): its linear filter covers 128 ms (extended) of a room that rings
/// for 300 ms, and its nonlinear suppressor, which removes the rest, removes the near end with
/// it while both talk (low suppression level already). With the whole tail modelled linearly
/// first, the suppressor has little left to remove: 0.9+ at the same ERLE. The high-pass filter
/// is off while the canceller runs (speexdsp's canceller notches DC out of its input): its phase
/// turn alone took the near end's correlation from 1 to 0.94.
/// Gain control runs on speexdsp's preprocessor after APM (mono): APM 0.3's adaptive digital
/// gain rises about 3 dB a second, so a talker 20 dB too quiet was still 11 dB short after
/// 3 s in the simulated room, where speexdsp's was within 1 dB after 1 s.
/// On webrtc-audio-processing 1.x (Debian 13, AEC3) the same two stages run: measured in the
/// same room, the near end keeps 0.949 in double talk with the linear stage and 0.820 without;
/// the cost is an echo path jump of 100 ms followed in 7.9 s instead of AEC3 alone's 1.6 s
/// (AEC3's own filter, ~52 ms, spans one of the two echoes the linear stage leaves then; see
/// `VoiceProcessorRoomTests.testEchoPathJumpReconverges`).
final class WebRTCVoiceEngine: VoiceEngine {
    private let apm: OpaquePointer
    private let sampleRate: Int
    private let options: VoiceProcessingOptions
    /// Gain control (nil for stereo: APM's own adaptive digital gain then).
    private let gain: SpeexPreprocessor?
    private var gainOn = false
    /// The linear stage of the canceller (nil when `echoTail` is zero: APM's AEC alone), and
    /// the reference blocks it waits for: each block is handed `referenceLeadFrames` before it
    /// is heard, the linear stage takes it `linearLagBlocks` later, 10 ms before it is heard.
    private let linear: SpeexEchoCanceller?
    private let pastReferences: UnsafeMutablePointer<Int16>
    private let blockSamples: Int
    private var pastIndex = 0
    private var echoOn = false
    /// Blocks until the far end's echo has died away (`tailBlocks` after its last audible block).
    private var farEndBlocksLeft = 0
    private var gainHeld = false
    private let tailBlocks: Int

    init(format: AudioFormat, options: VoiceProcessingOptions) throws(MediaDevicesError) {
        var error: Int32 = 0
        // The extended filter (128 ms) with the linear stage: it follows an echo path change by
        // up to 100 ms within 1.5 s, where the normal one (48 ms) took 6.7 s. Without the linear
        // stage, the normal filter, as the sound servers' modules run it: half the AEC's CPU.
        let linearStage = options.echoTail > .zero
        guard let apm = capm_create(Int32(format.sampleRate), Int32(format.channels), linearStage ? 1 : 0, options.findsDelay ? 1 : 0, &error) else {
            throw MediaDevicesError(.unsupportedFormat, device: nil, operation: "create voice processor",
                                    detail: "WebRTC's audio processing refused \(format) (APM error \(error)); it takes 8000, 16000, 32000 or 48000 Hz, 1 or 2 channels")
        }
        self.apm = apm
        sampleRate = format.sampleRate
        self.options = options
        gain = format.channels == 1 ? try SpeexPreprocessor(format: format) : nil
        linear = linearStage ? try SpeexEchoCanceller(format: format, tail: options.echoTail) : nil
        blockSamples = format.sampleRate / 100 * format.channels
        // The gain holds for the echo tail after the far end: the linear stage's, or APM's own filter's.
        let (seconds, attoseconds) = max(options.echoTail, Self.apmFilterLength).components
        tailBlocks = Self.leadBlocks + Int((Double(seconds) + Double(attoseconds) / 1e18) * 100) + 1
        pastReferences = .allocate(capacity: Self.linearLagBlocks * blockSamples)
        pastReferences.initialize(repeating: 0, count: Self.linearLagBlocks * blockSamples)
    }

    deinit {
        capm_destroy(apm)
        pastReferences.deallocate()
    }

    func apply(_ processing: VoiceProcessing) throws(MediaDevicesError) {
        let target = Int32(min(31, max(0, options.targetLevelDBFS))), gain = Int32(min(90, max(0, options.maximumGainDB)))
        let results: [(String, Int32)] = [
            ("echo cancellation", capm_set_echo_cancellation(apm, processing.echoCancellation ? 1 : 0, Int32(min(2, max(0, options.echoSuppressionLevel))))),
            ("noise suppression", capm_set_noise_suppression(apm, processing.noiseSuppression ? 1 : 0, 2)),
            ("gain control", capm_set_gain_control(apm, processing.gainControl && self.gain == nil ? 1 : 0, target, gain)),
            ("high-pass filter", capm_set_high_pass_filter(apm, processing.isEmpty || processing.echoCancellation ? 0 : 1)),
        ]
        for index in results.indices where results[index].1 != 0 {
            throw MediaDevicesError(.io, device: nil, operation: "switch voice processing",
                                    detail: "WebRTC's audio processing refused to switch \(results[index].0) (APM error \(results[index].1))")
        }
        gainOn = processing.gainControl && self.gain != nil
        if processing.echoCancellation && !echoOn { linear?.reset() }
        echoOn = processing.echoCancellation
        self.gain?.configure(denoise: false, gain: gainOn, targetLevelDBFS: options.targetLevelDBFS, maximumGainDB: options.maximumGainDB, echo: nil)
    }

    /// Each reference block is handed this much before the captured block holding its echo
    /// (so the devices' delays together must be at least this long).
    var referenceLeadFrames: Int { sampleRate * Self.leadMilliseconds / 1000 }
    private static let leadMilliseconds = 40
    /// The delay APM is told: less than the lead by the margin (`referenceMarginMilliseconds`)
    /// by which the line may place the reference late without leaving APM's filter (APM was
    /// measured with delays of 40-250 ms and cancels with the reference up to 40 ms earlier
    /// than it is told: here 8 ms earlier, 2-14 ms within the line's tolerance of 6 ms).
    private static let apmDelayMilliseconds = leadMilliseconds - referenceMarginMilliseconds
    /// How much echo APM's AEC models at most (its extended filter).
    private static let apmFilterLength = Duration.milliseconds(128)
    /// Blocks from the handing of a reference to the captured block holding its echo.
    private static let leadBlocks = leadMilliseconds / 10
    /// The linear stage takes the block handed this many blocks before: heard at least the
    /// margin after the captured block (its filter's first milliseconds model the margin).
    private static let linearLagBlocks = max(1, (leadMilliseconds - referenceMarginMilliseconds) / 10)
    /// Built on webrtc-audio-processing 1.x (Debian 13), whose canceller is AEC3, not 0.3's AEC.
    private static let isAEC3 = capm_api_major() >= 1

    func processCapture(_ block: UnsafeMutablePointer<Int16>, reference: UnsafePointer<Int16>) {
        // The block handed `linearLagBlocks` ago is heard the margin (or more) from now: the linear stage's reference.
        let heard = pastReferences + pastIndex * blockSamples
        if echoOn { linear?.cancel(block, reference: heard) }
        heard.update(from: reference, count: blockSamples)
        pastIndex = (pastIndex + 1) % Self.linearLagBlocks
        _ = capm_process_render(apm, reference)
        _ = capm_process_capture(apm, block, Int32(Self.apmDelayMilliseconds))
        if gainOn, let gain {
            // With the canceller on, the gain holds while the far end may be heard (its block or
            // the tail after it): raised then, it raised what echo is left; while both talk, it
            // pumped the near end. (`reference` is heard `leadBlocks` from now: `tailBlocks` counts them.)
            if echoOn && Self.isAudible(reference, count: blockSamples) { farEndBlocksLeft = tailBlocks }
            let hold = farEndBlocksLeft > 0
            if hold != gainHeld { gain.holdGain(hold); gainHeld = hold }
            if farEndBlocksLeft > 0 { farEndBlocksLeft -= 1 }
            gain.run(block)
        }
    }

    /// Measured (`VoiceProcessorLatencyTests`, by cross-correlating out with in): the band
    /// split above 16 kHz (3 frames at 32 kHz, 46 at 48 kHz), the AEC's 64-frame block buffer
    /// (7 ms; 14 ms at 8 kHz; webrtc-audio-processing 1.x's AEC3: 8 ms, 11 ms at 8 kHz) and the
    /// noise suppressor's overlap (6 ms); speexdsp's gain control one block (APM's own, stereo, none).
    /// Whether `count` samples at `block` are louder than -60 dBFS RMS (the far end is talking).
    private static func isAudible(_ block: UnsafePointer<Int16>, count: Int) -> Bool {
        var sum = 0.0
        for index in 0..<count { sum += Double(block[index]) * Double(block[index]) }
        return sum > Double(count) * 32.768 * 32.768
    }

    func delayFrames(for processing: VoiceProcessing) -> Int {
        guard !processing.isEmpty else { return 0 }
        var frames = sampleRate == 32000 ? 3 : sampleRate == 48000 ? 46 : 0
        if processing.echoCancellation {
            if Self.isAEC3 { frames += sampleRate == 8000 ? 88 : sampleRate * 8 / 1000 }
            else { frames += sampleRate == 8000 ? 112 : sampleRate * 7 / 1000 }
        }
        if processing.noiseSuppression { frames += sampleRate * 6 / 1000 }
        if processing.gainControl, gain != nil { frames += sampleRate / 100 }
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
