import Glibc
import Benchmark
import MediaDevices

/// One 10 ms period of stereo float audio, 48 kHz to 44.1 kHz, through `AudioResampler` with each
/// library (SpeexDSP, the default, and soxr).
func registerResamplerBenchmarks() {
    for library in [AudioResamplerLibrary.speexDSP, .soxr] {
        Benchmark("Resample 48000 to 44100 Hz stereo 10 ms (\(library))") { benchmark in
            let channels = 2, frames = 480
            let resampler = try AudioResampler(library: library, inputRate: 48_000, outputRate: 44_100,
                                               channels: channels, maximumInputFrames: frames)
            let input = UnsafeMutablePointer<Float>.allocate(capacity: frames * channels)
            let capacity = resampler.maximumOutputFrames
            let output = UnsafeMutablePointer<Float>.allocate(capacity: capacity * channels)
            defer { input.deallocate(); output.deallocate() }
            for index in 0..<(frames * channels) {   // a 1 kHz tone
                input[index] = Float(sin(Double(index / channels) * 2 * .pi * 1000 / 48_000)) * 0.5
            }
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations {
                blackHole(resampler.process(input, frames: frames, into: output, capacity: capacity))
            }
            benchmark.stopMeasurement()
        }
    }
}
