import Glibc
import MediaDevices

/// One 10 ms block of a call through `VoiceProcessor` (WebRTC, 16 kHz mono 16-bit, the far end
/// played and its echo captured 40 ms later, 10 dB down): the echo canceller as it runs by
/// default (speexdsp's 250 ms linear stage, then WebRTC's AEC), WebRTC's AEC alone
/// (`echoTail: .zero`, as the sound servers' echo-cancel modules run it), and all three
/// processors. One iteration is one `processRender` and one `processCapture` of 10 ms, after a
/// second of the call has run (the canceller adapting, its buffers made).
let voiceProcessingWorkloads: [Workload] = {
    let defaults = VoiceProcessingOptions(processing: VoiceProcessing(echoCancellation: true))
    var alone = defaults
    alone.echoTail = .zero
    let setups: [(String, VoiceProcessingOptions)] = [
        ("echo", defaults), ("echo, AEC alone", alone), ("echo, noise, gain", VoiceProcessingOptions(processing: .all)),
    ]
    return setups.map { name, options in
        Workload("Voice processing 16 kHz mono 10 ms (\(name))") { try VoiceCall(options: options).block }
    }
}()

/// A call's far end and its echo, fed to a `VoiceProcessor` 10 ms at a time.
final class VoiceCall {
    static let rate = 16_000, frames = rate / 100, delay = rate * 40 / 1000
    let processor: VoiceProcessor
    /// A second and a half of a noisy far end (a fixed pseudo-random sequence: speech-like enough
    /// for the canceller to adapt to); its echo is the same 40 ms later at -10 dB.
    let far: [Int16]
    let buffers = SampleBuffers<Int16>(input: frames, output: frames)
    var position = 0

    init(options: VoiceProcessingOptions) throws {
        processor = try VoiceProcessor(format: AudioFormat(sampleRate: Self.rate, channels: 1, sampleFormat: .s16LE), options: options)
        var seed: UInt32 = 1
        far = (0..<(Self.rate * 3 / 2)).map { _ in Int16(truncatingIfNeeded: Int(rand_r(&seed) % 16_000) - 8_000) }
        for _ in 0..<100 { block() }
    }

    /// One 10 ms block: the far end played (`processRender`), its echo captured (`processCapture`).
    func block() {
        let frames = Self.frames, length = far.count
        let render = buffers.input, capture = buffers.output
        for index in 0..<frames {
            let at = (position + index) % length, heard = (position + index - Self.delay + length) % length
            render[index] = far[at]
            capture[index] = Int16(Double(far[heard]) * 0.316)
        }
        processor.processRender(render, frames: frames)
        processor.processCapture(capture, frames: frames, delay: .milliseconds(40))
        position = (position + frames) % length
        sink(capture[0])
    }
}
