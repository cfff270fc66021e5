import Foundation
import MediaDevices

/// The talkers, noise and measures of the voice-processing tests: a far-end talker (espeak-ng
/// `en-us`) played into a `SimulatedRoom`, a near-end talker (`en-gb+f3`) and pink noise at
/// 20 dB SNR at the microphone. Levels: far end -20 dBFS RMS, near end -26 dBFS, noise -46 dBFS.
public struct VoiceRoomScenario: Sendable {
    /// Frames per second.
    public let sampleRate: Int
    /// The far-end talker, as played.
    public let far: [Float]
    /// The near-end talker, clean, as long as `far`, silent before `nearStart`.
    public let near: [Float]
    /// Pink noise at the microphone, as long as `far`.
    public let noise: [Float]
    /// Where the near-end talker starts, in seconds.
    public let nearStart: Double

    /// Far-end level, dBFS RMS.
    public static let farLevel = -20.0
    /// Near-end level, dBFS RMS (over its own speech).
    public static let nearLevel = -26.0
    /// Noise level, dBFS RMS: 20 dB below the near end.
    public static let noiseLevel = -46.0

    /// The far-end words (about 13 s).
    public static let farText = "Good morning everyone, thank you for joining the call. Today we will look at the results of the last quarter, " +
        "then talk about the plans for the new office, and finally answer the questions you sent in before the meeting. " +
        "Let us start with the numbers, which are better than we expected."
    /// The near-end words (about 6 s).
    public static let nearText = "Sorry to interrupt, but could you repeat the last figure? I think the line was breaking up on my side."

    /// Speaks both talkers at `sampleRate`; the near end starts at `nearStart` seconds.
    public init(sampleRate: Int, nearStart: Double = 5) throws {
        self.sampleRate = sampleRate
        self.nearStart = nearStart
        let farSpeech = SimulatedRoom.scaled(try SpokenSpeech.speak(Self.farText, voice: "en-us", sampleRate: sampleRate), toRMS: Self.farLevel)
        let nearSpeech = SimulatedRoom.scaled(try SpokenSpeech.speak(Self.nearText, voice: "en-gb+f3", sampleRate: sampleRate), toRMS: Self.nearLevel)
        let offset = Int(nearStart * Double(sampleRate))
        let count = max(farSpeech.count, offset + nearSpeech.count)
        far = farSpeech + [Float](repeating: 0, count: count - farSpeech.count)
        var near = [Float](repeating: 0, count: count)
        for index in 0..<nearSpeech.count { near[offset + index] = nearSpeech[index] }
        self.near = near
        noise = SimulatedRoom.pinkNoise(count: count, rmsDB: Self.noiseLevel)
    }

    /// `a + b (+ c)`, sample by sample.
    public static func mix(_ a: [Float], _ b: [Float], _ c: [Float]? = nil) -> [Float] {
        var out = a
        for index in 0..<min(a.count, b.count) { out[index] += b[index] }
        if let c { for index in 0..<min(a.count, c.count) { out[index] += c[index] } }
        return out
    }

    /// Runs `far` (render) and `capture` through `processor` as a driver would, `chunkFrames`
    /// at a time, render first, telling it `delay(frame)` for each capture chunk; returns the
    /// processed capture aligned with the input (the processor's `latencyFrames` taken out).
    public static func run(_ processor: VoiceProcessor, far: [Float], capture: [Float], chunkFrames: Int,
                           delay: (Int) -> Duration, atFrame hook: ((Int) -> Void)? = nil) -> [Float] {
        precondition(processor.format.channels == 1 && processor.format.sampleFormat == .floatLE)
        var farChunk = [Float](repeating: 0, count: chunkFrames), captureChunk = farChunk
        var out = [Float]()
        out.reserveCapacity(capture.count + chunkFrames)
        var start = 0
        while start < capture.count {
            hook?(start)
            let frames = min(chunkFrames, capture.count - start)
            for index in 0..<frames {
                farChunk[index] = start + index < far.count ? far[start + index] : 0
                captureChunk[index] = capture[start + index]
            }
            farChunk.withUnsafeBytes { processor.processRender($0.baseAddress!, frames: frames) }
            captureChunk.withUnsafeMutableBytes { processor.processCapture($0.baseAddress!, frames: frames, delay: delay(start)) }
            out.append(contentsOf: captureChunk[0..<frames])
            start += frames
        }
        let latency = processor.latencyFrames
        return Array(out.dropFirst(latency)) + [Float](repeating: 0, count: latency)
    }

    /// Per 10 ms block of `signal`: whether it is active (within 30 dB of the loudest block).
    public func activity(of signal: [Float]) -> [Bool] {
        let levels = Self.blockLevels(signal, blockFrames: sampleRate / 100)
        let loudest = levels.max() ?? -.infinity
        return levels.map { $0 > loudest - 30 }
    }

    /// RMS level (dBFS) of each 10 ms block.
    public static func blockLevels(_ signal: [Float], blockFrames: Int) -> [Double] {
        stride(from: 0, to: signal.count - blockFrames + 1, by: blockFrames).map { start in
            var sum = 0.0
            for index in start..<start + blockFrames { sum += Double(signal[index]) * Double(signal[index]) }
            return 10 * log10(max(sum / Double(blockFrames), 1e-20))
        }
    }

    /// Convergence time: seconds from frame `start` until the echo return loss enhancement
    /// (`input`'s energy against `output`'s, lined up frame by frame, over 100 ms windows)
    /// stays >= `threshold` dB to the end, judged on the windows where `input` holds speech
    /// (within 20 dB of its loudest window and above -70 dBFS: the quiet windows between words,
    /// where the residual is the room's tail, would judge the silence). 0 when every such
    /// window from `start` passes; nil when the last one does not (it never stays).
    public static func convergenceSeconds(input: [Float], output: [Float], from start: Int, sampleRate: Int, threshold: Double = 20) -> Double? {
        let window = sampleRate / 10, end = min(input.count, output.count)
        var windows: [(start: Int, level: Double, erle: Double)] = []
        var first = start
        while first + window <= end {
            var a = 0.0, b = 0.0
            for index in first..<first + window {
                a += Double(input[index]) * Double(input[index])
                b += Double(output[index]) * Double(output[index])
            }
            windows.append((first, 10 * log10(max(a / Double(window), 1e-20)), 10 * log10(max(a, 1e-20) / max(b, 1e-20))))
            first += window
        }
        let loudest = windows.map(\.level).max() ?? -.infinity
        let active = windows.filter { $0.level > max(loudest - 20, -70) }
        guard let last = active.last else { return nil }
        guard last.erle >= threshold else { return nil }
        guard let failing = active.last(where: { $0.erle < threshold }) else { return 0 }
        return Double(failing.start + window - start) / Double(sampleRate)
    }

    /// Energy ratio (dB) of `reference` to `signal` over the 10 ms blocks `selected` says.
    public func ratioDB(_ reference: [Float], _ signal: [Float], blocks selected: (Int) -> Bool) -> Double {
        let blockFrames = sampleRate / 100
        var a = 0.0, b = 0.0
        for block in 0..<min(reference.count, signal.count) / blockFrames where selected(block) {
            for index in block * blockFrames..<(block + 1) * blockFrames {
                a += Double(reference[index]) * Double(reference[index])
                b += Double(signal[index]) * Double(signal[index])
            }
        }
        return 10 * log10(max(a, 1e-20) / max(b, 1e-20))
    }

    /// Pearson correlation of `a` and `b` over the 10 ms blocks `selected` says.
    public func correlation(_ a: [Float], _ b: [Float], blocks selected: (Int) -> Bool) -> Double {
        let blockFrames = sampleRate / 100
        var sa = 0.0, sb = 0.0, saa = 0.0, sbb = 0.0, sab = 0.0, n = 0.0
        for block in 0..<min(a.count, b.count) / blockFrames where selected(block) {
            for index in block * blockFrames..<(block + 1) * blockFrames {
                let x = Double(a[index]), y = Double(b[index])
                sa += x; sb += y; saa += x * x; sbb += y * y; sab += x * y; n += 1
            }
        }
        guard n > 1 else { return 0 }
        let cov = sab - sa * sb / n, va = saa - sa * sa / n, vb = sbb - sb * sb / n
        return cov / max((va * vb).squareRoot(), 1e-30)
    }
}
