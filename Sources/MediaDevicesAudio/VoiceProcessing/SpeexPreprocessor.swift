#if VoiceProcessing
import MediaDevicesCore
import CSpeexDSP
import Foundation

/// speexdsp's preprocessor (`speex_preprocess_*`) on one mono 10 ms block at a time: noise
/// suppression, residual echo suppression (linked to a speexdsp echo canceller), and automatic
/// gain control. Delays what it processes by one block. Allocation-free per block.
final class SpeexPreprocessor {
    private let state: OpaquePointer
    /// Frames in one block.
    let blockFrames: Int

    init(format: AudioFormat) throws(MediaDevicesError) {
        guard format.channels == 1 else {
            throw MediaDevicesError(.unsupportedFormat, device: nil, operation: "create voice processor",
                                    detail: "speexdsp's preprocessor (gain control) takes 1 channel; asked for \(format) (initialize the capture side mono)")
        }
        blockFrames = format.sampleRate / 100
        guard let state = speex_preprocess_state_init(Int32(blockFrames), Int32(format.sampleRate)) else {
            throw MediaDevicesError(.io, device: nil, operation: "create voice processor", detail: "speex_preprocess_state_init failed for \(format)")
        }
        self.state = state
    }

    deinit { speex_preprocess_state_destroy(state) }

    private func control(_ request: Int32, _ value: Int32) {
        var value = value
        speex_preprocess_ctl(state, request, &value)
    }

    /// Switches the parts: noise suppression, gain control towards `targetLevelDBFS` (a peak
    /// level; speexdsp aims at an RMS, taken as 10 dB below it) with at most `maximumGainDB`,
    /// and residual echo suppression with `echo` (a `SpeexEchoState`, nil: off).
    func configure(denoise: Bool, gain: Bool, targetLevelDBFS: Int, maximumGainDB: Int, echo: OpaquePointer?) {
        control(SPEEX_PREPROCESS_SET_DENOISE, denoise ? 1 : 0)
        control(SPEEX_PREPROCESS_SET_AGC, gain ? 1 : 0)
        control(SPEEX_PREPROCESS_SET_AGC_MAX_GAIN, Int32(maximumGainDB))
        var level = Float(32768 * pow(10, Double(-targetLevelDBFS - 10) / 20))
        speex_preprocess_ctl(state, SPEEX_PREPROCESS_SET_AGC_LEVEL, &level)
        speex_preprocess_ctl(state, SPEEX_PREPROCESS_SET_ECHO_STATE, echo.map { UnsafeMutableRawPointer($0) })
    }

    /// Holds the gain control's gain where it is (`true`: it may still fall, it does not rise),
    /// or lets it rise again at speexdsp's default pace (12 dB a second).
    func holdGain(_ hold: Bool) {
        control(SPEEX_PREPROCESS_SET_AGC_INCREMENT, hold ? 0 : 12)
    }

    /// Processes one block in place.
    func run(_ block: UnsafeMutablePointer<Int16>) {
        speex_preprocess_run(state, block)
    }
}
#endif
