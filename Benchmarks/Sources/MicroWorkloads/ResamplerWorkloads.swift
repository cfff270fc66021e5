import Glibc
import MediaDevices

/// One 10 ms period of stereo float audio, 48 kHz to 44.1 kHz, through `AudioResampler` with each
/// library (SpeexDSP, the default, and soxr).
let resamplerWorkloads: [Workload] = [AudioResamplerLibrary.speexDSP, .soxr].map { library in
    Workload("Resample 48000 to 44100 Hz stereo 10 ms (\(library))") {
        let channels = 2, frames = 480
        let resampler = try AudioResampler(library: library, inputRate: 48_000, outputRate: 44_100,
                                           channels: channels, maximumInputFrames: frames)
        let capacity = resampler.maximumOutputFrames
        let buffers = SampleBuffers<Float>(input: frames * channels, output: capacity * channels)
        for index in 0..<(frames * channels) {   // a 1 kHz tone
            buffers.input[index] = Float(sin(Double(index / channels) * 2 * .pi * 1000 / 48_000)) * 0.5
        }
        return { sink(resampler.process(buffers.input, frames: frames, into: buffers.output, capacity: capacity)) }
    }
}

/// An input and an output buffer of samples, freed with the workload's last iteration.
final class SampleBuffers<Sample> {
    let input: UnsafeMutablePointer<Sample>
    let output: UnsafeMutablePointer<Sample>

    init(input: Int, output: Int) {
        self.input = .allocate(capacity: input)
        self.output = .allocate(capacity: output)
    }

    deinit { input.deallocate(); output.deallocate() }
}
