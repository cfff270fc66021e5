import Glibc
import Benchmark
import MediaDevices

/// One 10 ms block of a call through `VoiceProcessor` (WebRTC, 16 kHz mono 16-bit, the far end
/// played and its echo captured 40 ms later, 10 dB down): the echo canceller as it runs by
/// default (speexdsp's 250 ms linear stage, then WebRTC's AEC), WebRTC's AEC alone
/// (`echoTail: .zero`, as the sound servers' echo-cancel modules run it), and all three
/// processors. One iteration is one `processRender` and one `processCapture` of 10 ms, after a
/// second of the call has run (the canceller adapting, its buffers made).
func registerVoiceProcessingBenchmarks() {
    let defaults = VoiceProcessingOptions(processing: .echoCancellation)
    var alone = defaults
    alone.echoTail = .zero
    let setups: [(String, VoiceProcessingOptions)] = [
        ("echo", defaults), ("echo, AEC alone", alone), ("echo, noise, gain", VoiceProcessingOptions(processing: .all)),
    ]
    for (name, options) in setups {
        Benchmark("Voice processing 16 kHz mono 10 ms (\(name))") { benchmark in
            let rate = 16_000, frames = rate / 100, delay = rate * 40 / 1000
            let processor = try VoiceProcessor(format: AudioFormat(sampleRate: rate, channels: 1, sampleFormat: .s16LE), options: options)
            // A second and a half of a noisy far end (a fixed pseudo-random sequence: speech-like
            // enough for the canceller to adapt to), its echo the same 40 ms later at -10 dB.
            let length = rate * 3 / 2
            var seed: UInt32 = 1
            let far = (0..<length).map { _ in Int16(truncatingIfNeeded: Int(rand_r(&seed) % 16_000) - 8_000) }
            let render = UnsafeMutablePointer<Int16>.allocate(capacity: frames), capture = UnsafeMutablePointer<Int16>.allocate(capacity: frames)
            defer { render.deallocate(); capture.deallocate() }
            var position = 0
            func block() {
                for index in 0..<frames {
                    let at = (position + index) % length, heard = (position + index - delay + length) % length
                    render[index] = far[at]
                    capture[index] = Int16(Double(far[heard]) * 0.316)
                }
                processor.processRender(render, frames: frames)
                processor.processCapture(capture, frames: frames, delay: .milliseconds(40))
                position = (position + frames) % length
            }
            for _ in 0..<100 { block() }
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations { block() }
            benchmark.stopMeasurement()
            blackHole(capture[0])
        }
    }
}
