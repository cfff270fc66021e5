import Foundation
import MediaDevices
import MediaDevicesCommandLine
import TestSupport

/// `mediadevices-benchmark audio --resampler`: libsoxr against speexdsp in the same process, on the
/// conversion a call needs (a 44.1 kHz stereo device, a 48 kHz mono application, both ways):
/// THD+N of a 997 Hz tone through float (so no quantization hides the resampler), the
/// converter's delay, and CPU per second of audio (this thread's CPU time, the median of rounds),
/// each printed as speexdsp's figure against libsoxr's.
enum ResamplerBenchmark {
    static let device = AudioFormat(sampleRate: 44100, channels: 2, sampleFormat: .floatLE)
    static let app = AudioFormat(sampleRate: 48000, channels: 1, sampleFormat: .floatLE)

    struct Figures {
        var thdn: Double
        var delayMilliseconds: Double
        /// CPU seconds per second of audio converted.
        var cpuPerSecond: Double
        /// The same for the library's resampler alone (mono, no sample conversion or mixing).
        var resamplerCPUPerSecond: Double
    }

    static func run(seconds audioSeconds: Int, rounds: Int) throws {
        print("Resampling: libsoxr (SOXR_HQ) against speexdsp (quality 5), 997 Hz at amplitude 0.5, periods of 10 ms")
        for (label, from, to) in [("capture 44.1 kHz stereo → 48 kHz mono", device, app), ("render 48 kHz mono → 44.1 kHz stereo", app, device)] {
            var figures: [AudioResamplerLibrary: Figures] = [:]
            for library in AudioResamplerLibrary.allCases {
                figures[library] = try measure(library, from: from, to: to, seconds: audioSeconds, rounds: rounds)
            }
            for library in AudioResamplerLibrary.allCases {
                let f = figures[library]!
                print(String(format: "  %@ %@: THD+N %.1f dB, delay %.2f ms, CPU %.3f ms per second of audio (the resampler alone %.3f ms)",
                             label, library.description, f.thdn, f.delayMilliseconds, f.cpuPerSecond * 1000, f.resamplerCPUPerSecond * 1000))
            }
            let soxr = figures[.soxr]!, speex = figures[.speexDSP]!
            print(String(format: "  %@: speexdsp/libsoxr: CPU %.2f× (the resampler alone %.2f×), THD+N %+.1f dB, delay %.2f×",
                         label, speex.cpuPerSecond / soxr.cpuPerSecond, speex.resamplerCPUPerSecond / soxr.resamplerCPUPerSecond,
                         speex.thdn - soxr.thdn, speex.delayMilliseconds / soxr.delayMilliseconds))
        }
    }

    private static func measure(_ library: AudioResamplerLibrary, from: AudioFormat, to: AudioFormat, seconds: Int, rounds: Int) throws -> Figures {
        var sine = SineGenerator(frequency: 997, amplitude: 0.5, sampleRate: from.sampleRate)
        let period = from.sampleRate / 100
        let input = sine.samples(frames: from.sampleRate * seconds, channels: from.channels)
        var output = [Float](repeating: 0, count: to.sampleRate * (seconds + 1) * to.channels)
        var costs: [Double] = []
        var produced = 0
        var delay = 0.0
        for _ in 0..<max(1, rounds) {
            let converter = try AudioConverter(from: from, to: to, library: library)
            delay = converter.delayFrames / Double(to.sampleRate)
            produced = 0
            let start = BenchmarkClock.threadCPUNanoseconds()
            input.withUnsafeBytes { source in
                output.withUnsafeMutableBytes { destination in
                    var frame = 0
                    while frame + period <= input.count / from.channels {
                        converter.convert(source.baseAddress! + frame * from.bytesPerFrame, frames: period) { bytes, frames in
                            let fit = min(frames, destination.count / to.bytesPerFrame - produced)
                            (destination.baseAddress! + produced * to.bytesPerFrame).copyMemory(from: bytes, byteCount: fit * to.bytesPerFrame)
                            produced += fit
                        }
                        frame += period
                    }
                }
            }
            costs.append(Double(BenchmarkClock.threadCPUNanoseconds() - start) / 1e9 / Double(seconds))
        }
        costs.sort()
        // The resampler alone, on one channel: what the library costs without our loops.
        var alone: [Double] = []
        let mono = ToneAnalysis.channel(0, of: input, channels: from.channels)
        var scratch = [Float](repeating: 0, count: 8192)
        for _ in 0..<max(1, rounds) {
            let resampler = try AudioResampler(library: library, inputRate: from.sampleRate, outputRate: to.sampleRate, channels: 1)
            let start = BenchmarkClock.threadCPUNanoseconds()
            mono.withUnsafeBufferPointer { source in
                scratch.withUnsafeMutableBufferPointer { destination in
                    var frame = 0
                    while frame + period <= source.count {
                        var taken = 0
                        while taken < period {
                            let (consumed, _) = resampler.process(source.baseAddress! + frame + taken, frames: period - taken,
                                                                  into: destination.baseAddress!, capacity: destination.count)
                            if consumed == 0 { break }
                            taken += consumed
                        }
                        frame += period
                    }
                }
            }
            alone.append(Double(BenchmarkClock.threadCPUNanoseconds() - start) / 1e9 / Double(seconds))
        }
        alone.sort()
        // One second of the output, from half a second in (well past the filter's start).
        let channel = ToneAnalysis.channel(0, of: Array(output[0..<produced * to.channels]), channels: to.channels)
        let window = Array(channel[to.sampleRate / 2..<min(channel.count, to.sampleRate * 3 / 2)])
        let thdn = SineFit(window, sampleRate: to.sampleRate)?.thdPlusNoiseDecibels ?? .nan
        return Figures(thdn: thdn, delayMilliseconds: delay * 1000, cpuPerSecond: costs[costs.count / 2], resamplerCPUPerSecond: alone[alone.count / 2])
    }
}
