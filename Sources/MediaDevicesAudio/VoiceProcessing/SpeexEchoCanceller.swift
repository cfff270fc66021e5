#if VoiceProcessing
import MediaDevicesCore
import CSpeexDSP

/// speexdsp's multi-delay-block echo canceller (`speex_echo_*`), a linear filter as long as the
/// echo tail, on one 10 ms block of interleaved samples at a time: the captured block and the
/// played block heard at the same time go in together, the block without the echo the filter
/// models comes out (no delay). Its input passes a DC notch first. Allocation-free per block.
final class SpeexEchoCanceller {
    /// The speexdsp state (for the preprocessor's residual echo suppression).
    let state: OpaquePointer
    private let output: UnsafeMutablePointer<Int16>
    private let blockSamples: Int

    /// A canceller for `format` modelling `tail` of echo (at least one block).
    init(format: AudioFormat, tail: Duration) throws(MediaDevicesError) {
        let blockFrames = format.sampleRate / 100
        let (seconds, attoseconds) = tail.components
        let tailFrames = max(blockFrames, Int((Double(seconds) + Double(attoseconds) / 1e18) * Double(format.sampleRate)))
        guard let state = speex_echo_state_init_mc(Int32(blockFrames), Int32(tailFrames), Int32(format.channels), Int32(format.channels)) else {
            throw MediaDevicesError(.io, device: nil, operation: "create voice processor", detail: "speex_echo_state_init_mc failed for \(format)")
        }
        self.state = state
        var rate = Int32(format.sampleRate)
        speex_echo_ctl(state, SPEEX_ECHO_SET_SAMPLING_RATE, &rate)
        blockSamples = blockFrames * format.channels
        output = .allocate(capacity: blockSamples)
        output.initialize(repeating: 0, count: blockSamples)
    }

    deinit {
        speex_echo_state_destroy(state)
        output.deallocate()
    }

    /// Forgets the echo path (the filter starts again).
    func reset() { speex_echo_state_reset(state) }

    /// Removes from `block` (in place) the echo of `reference`, the block heard at its time.
    func cancel(_ block: UnsafeMutablePointer<Int16>, reference: UnsafePointer<Int16>) {
        speex_echo_cancellation(state, block, reference, output)
        block.update(from: output, count: blockSamples)
    }
}
#endif
