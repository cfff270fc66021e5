import Foundation
import MediaDevices

/// Speech for voice-processing tests, spoken by espeak-ng (a Debian package: scripts/install.sh).
public enum SpokenSpeech {
    /// `text` spoken by espeak-ng `voice` (`en-us`, `en-gb+f3`, …) at `wordsPerMinute`, as mono
    /// floats at `sampleRate` (espeak-ng speaks at 22050 Hz; speexdsp resamples).
    public static func speak(_ text: String, voice: String, sampleRate: Int, wordsPerMinute: Int = 160) throws -> [Float] {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("speech-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).wav").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/espeak-ng")
        process.arguments = ["-v", voice, "-s", String(wordsPerMinute), "-w", path, text]
        do { try process.run() } catch {
            throw MediaDevicesError(.notFound, device: nil, operation: "speak test speech",
                                    detail: "cannot run /usr/bin/espeak-ng (\(error)); install it: scripts/install.sh (Debian package espeak-ng)")
        }
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw MediaDevicesError(.io, device: nil, operation: "speak test speech", detail: "espeak-ng -v \(voice) exited with \(process.terminationStatus)")
        }
        let file = try WAVFile(path: path)
        let mono = ToneAnalysis.channel(0, of: file.floatSamples(), channels: file.format.channels)
        return try resample(mono, from: file.format.sampleRate, to: sampleRate)
    }

    /// `samples` (mono) from `inputRate` to `outputRate` through speexdsp.
    public static func resample(_ samples: [Float], from inputRate: Int, to outputRate: Int) throws -> [Float] {
        guard inputRate != outputRate else { return samples }
        let resampler = try AudioResampler(library: .speexDSP, inputRate: inputRate, outputRate: outputRate, channels: 1, maximumInputFrames: 4096)
        var output = [Float]()
        var chunk = [Float](repeating: 0, count: 4096 * outputRate / inputRate + 64)
        var start = 0
        let padded = samples + [Float](repeating: 0, count: inputRate / 10)
        while start < padded.count {
            let frames = min(4096, padded.count - start)
            let (consumed, produced) = padded.withUnsafeBufferPointer { input in
                chunk.withUnsafeMutableBufferPointer { out in
                    resampler.process(input.baseAddress! + start, frames: frames, into: out.baseAddress!, capacity: out.count)
                }
            }
            output.append(contentsOf: chunk[0..<produced])
            start += consumed
        }
        return output
    }
}

/// A room between a loudspeaker and a microphone, for echo-cancellation tests: the played
/// (far-end) signal comes back into the microphone `echoDelay` later, `echoLossDB` below the
/// far end, through a room response (a direct path and an exponentially decaying tail of
/// random reflections, `decaySeconds` to fall 60 dB). Deterministic for one `seed`.
public struct SimulatedRoom: Sendable {
    /// Frames per second of every signal.
    public let sampleRate: Int
    /// From played to heard, in seconds (the loudspeaker-to-microphone path and the devices).
    public var echoDelay: Double
    /// How far the echo's RMS level lies below the far end's, in dB.
    public var echoLossDB: Double
    /// The reverberation time (RT60), in seconds.
    public let decaySeconds: Double
    /// The room response's taps: (offset in frames, gain), the direct path first.
    public let reflections: [(offset: Int, gain: Float)]

    /// Makes a room with a tap every `tapSpacing` frames of the tail (a sparse response: a few
    /// hundred taps convolve quickly in a debug build and still smear the echo over the decay).
    public init(sampleRate: Int, echoDelay: Double, echoLossDB: Double, decaySeconds: Double = 0.3, tapSpacing: Int = 8, seed: UInt64 = 0x5EED) {
        self.sampleRate = sampleRate
        self.echoDelay = echoDelay
        self.echoLossDB = echoLossDB
        self.decaySeconds = decaySeconds
        var noise = WhiteNoiseGenerator(amplitude: 1, seed: seed)
        var taps: [(offset: Int, gain: Float)] = [(0, 1)]
        let firstReflection = sampleRate * 3 / 1000
        var offset = firstReflection
        while Double(offset) < decaySeconds * Double(sampleRate) {
            let time = Double(offset) / Double(sampleRate)
            // -60 dB at decaySeconds; the tail's energy about half the direct path's.
            let envelope = exp(-6.9 * time / decaySeconds) * 0.12
            taps.append((offset + Int(noise.next() * Float(tapSpacing / 2)), Float(envelope) * noise.next()))
            offset += tapSpacing
        }
        reflections = taps
    }

    /// The echo of `far` as the microphone hears it: delayed, reverberated and scaled to
    /// `echoLossDB` below `far`'s RMS level; as long as `far`.
    public func echo(of far: [Float]) -> [Float] {
        let delayFrames = Int((echoDelay * Double(sampleRate)).rounded())
        var echo = [Float](repeating: 0, count: far.count)
        far.withUnsafeBufferPointer { source in
            echo.withUnsafeMutableBufferPointer { out in
                for tap in 0..<reflections.count {
                    let shift = delayFrames + reflections[tap].offset, gain = reflections[tap].gain
                    guard shift < source.count else { continue }
                    for index in shift..<source.count { out[index] += gain * source[index - shift] }
                }
            }
        }
        let scale = Float(pow(10, (ToneAnalysis.rmsDecibels(of: far) - echoLossDB - ToneAnalysis.rmsDecibels(of: echo)) / 20))
        return echo.map { $0 * scale }
    }

    /// Pink (1/f) noise, `count` frames at `rmsDB` dBFS RMS (Paul Kellet's filter on white noise).
    public static func pinkNoise(count: Int, rmsDB: Double, seed: UInt64 = 0x9179) -> [Float] {
        var white = WhiteNoiseGenerator(amplitude: 1, seed: seed)
        var b = [Float](repeating: 0, count: 7)
        var noise = [Float](repeating: 0, count: count)
        for index in 0..<count {
            let w = white.next()
            b[0] = 0.99886 * b[0] + w * 0.0555179
            b[1] = 0.99332 * b[1] + w * 0.0750759
            b[2] = 0.96900 * b[2] + w * 0.1538520
            b[3] = 0.86650 * b[3] + w * 0.3104856
            b[4] = 0.55000 * b[4] + w * 0.5329522
            b[5] = -0.7616 * b[5] - w * 0.0168980
            noise[index] = b[0] + b[1] + b[2] + b[3] + b[4] + b[5] + b[6] + w * 0.5362
            b[6] = w * 0.115926
        }
        let scale = Float(pow(10, (rmsDB - ToneAnalysis.rmsDecibels(of: noise)) / 20))
        return noise.map { $0 * scale }
    }

    /// `signal` scaled to `rmsDB` dBFS RMS.
    public static func scaled(_ signal: [Float], toRMS rmsDB: Double) -> [Float] {
        let scale = Float(pow(10, (rmsDB - ToneAnalysis.rmsDecibels(of: signal)) / 20))
        return signal.map { $0 * scale }
    }
}
