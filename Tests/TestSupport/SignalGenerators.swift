import MediaDevices
import MediaDevicesAudio
import Foundation

/// A sine tone, continuous across calls (the phase carries over), written into interleaved
/// float buffers with the same value on every channel. Allocation-free.
package struct SineGenerator: Sendable {
    /// The tone's frequency in Hz.
    package let frequency: Double
    /// Peak amplitude (1 = full scale).
    package let amplitude: Double
    /// Frames per second.
    package let sampleRate: Int
    private var phase: Double = 0

    /// Creates a generator of `frequency` Hz at `amplitude` (peak, full scale 1).
    package init(frequency: Double, amplitude: Double = 0.5, sampleRate: Int) {
        self.frequency = frequency
        self.amplitude = amplitude
        self.sampleRate = sampleRate
    }

    /// Fills `buffer` with `buffer.count / channels` frames.
    package mutating func fill(_ buffer: UnsafeMutableBufferPointer<Float>, channels: Int) {
        let step = 2 * Double.pi * frequency / Double(sampleRate)
        var frame = 0
        while (frame + 1) * channels <= buffer.count {
            let value = Float(amplitude * sin(phase))
            for channel in 0..<channels { buffer[frame * channels + channel] = value }
            phase += step
            if phase >= 2 * Double.pi { phase -= 2 * Double.pi }
            frame += 1
        }
    }

    /// `frames` frames as a new array (for tests and files; not for audio threads).
    package mutating func samples(frames: Int, channels: Int) -> [Float] {
        var result = [Float](repeating: 0, count: frames * channels)
        result.withUnsafeMutableBufferPointer { fill($0, channels: channels) }
        return result
    }
}

/// White noise, as the seeds' sample audio device renders: uniformly distributed samples in
/// -amplitude...amplitude from a xorshift generator (seedable, so tests repeat). Allocation-free.
package struct WhiteNoiseGenerator: Sendable {
    /// Peak amplitude (1 = full scale).
    package let amplitude: Float
    private var state: UInt64

    /// Creates a generator; the same `seed` gives the same noise.
    package init(amplitude: Float = 0.5, seed: UInt64 = 0x9E37_79B9_7F4A_7C15) {
        self.amplitude = amplitude
        state = seed == 0 ? 1 : seed
    }

    /// The next sample.
    @inline(__always)
    package mutating func next() -> Float {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        let unit = Float(state >> 40) / Float(1 << 24)  // 0..<1
        return (unit * 2 - 1) * amplitude
    }

    /// Fills `buffer` with independent samples (every channel its own noise).
    package mutating func fill(_ buffer: UnsafeMutableBufferPointer<Float>) {
        for index in buffer.indices { buffer[index] = next() }
    }

    /// Fills `buffer` with 16-bit samples.
    package mutating func fill(_ buffer: UnsafeMutableBufferPointer<Int16>) {
        for index in buffer.indices { buffer[index] = SampleConversion.int16(next()) }
    }
}

/// Measures a tone: its frequency by zero crossings (interpolated between samples, timed from
/// the first to the last rising crossing), its RMS level, and where it begins.
package enum ToneAnalysis {
    /// The frequency in Hz of the tone in `samples` (one channel), from rising zero crossings
    /// interpolated linearly; nil if fewer than two crossings (silence, DC).
    package static func frequency(of samples: UnsafeBufferPointer<Float>, sampleRate: Int) -> Double? {
        guard samples.count > 2 else { return nil }
        let peak = samples.reduce(Float(0)) { max($0, abs($1)) }
        guard peak > 1e-4 else { return nil }
        let hysteresis = peak * 0.05
        var armed = false
        var first: Double?, last = 0.0
        var crossings = 0
        for index in 1..<samples.count {
            let previous = samples[index - 1], current = samples[index]
            if current < -hysteresis { armed = true }
            if armed && previous < 0 && current >= 0 {
                let position = Double(index - 1) + Double(-previous / (current - previous))
                if first == nil { first = position } else { crossings += 1 }
                last = position
                armed = false
            }
        }
        guard let first, crossings > 0, last > first else { return nil }
        return Double(crossings) * Double(sampleRate) / (last - first)
    }

    /// `frequency(of:)` over an array.
    package static func frequency(of samples: [Float], sampleRate: Int) -> Double? {
        samples.withUnsafeBufferPointer { frequency(of: $0, sampleRate: sampleRate) }
    }

    /// The median of `frequency(of:)` over consecutive windows of `window` seconds: robust to a
    /// dropout (an xrun) inside one window. Nil if no window holds a tone.
    package static func medianFrequency(of samples: [Float], sampleRate: Int, window: Double = 0.1) -> Double? {
        let size = max(16, Int(window * Double(sampleRate)))
        var estimates: [Double] = []
        samples.withUnsafeBufferPointer { all in
            var start = 0
            while start + size <= all.count {
                if let value = frequency(of: UnsafeBufferPointer(rebasing: all[start..<start + size]), sampleRate: sampleRate) { estimates.append(value) }
                start += size
            }
        }
        guard !estimates.isEmpty else { return nil }
        estimates.sort()
        return estimates[estimates.count / 2]
    }

    /// The RMS level in dB relative to full scale (a full-scale sine is -3.01 dBFS).
    package static func rmsDecibels(of samples: [Float]) -> Double {
        guard !samples.isEmpty else { return -.infinity }
        let sum = samples.reduce(0.0) { $0 + Double($1) * Double($1) }
        return 10 * log10(max(sum / Double(samples.count), 1e-20))
    }

    /// The median of the RMS levels (dBFS) of consecutive windows of `window` seconds: the
    /// tone's level, unmoved by a dropout inside one window. -infinity for no whole window.
    package static func medianRMSDecibels(of samples: [Float], sampleRate: Int, window: Double = 0.05) -> Double {
        let size = max(16, Int(window * Double(sampleRate)))
        var levels: [Double] = []
        var start = 0
        while start + size <= samples.count {
            levels.append(rmsDecibels(of: Array(samples[start..<start + size])))
            start += size
        }
        guard !levels.isEmpty else { return -.infinity }
        levels.sort()
        return levels[levels.count / 2]
    }

    /// The RMS level of a sine of peak `amplitude`, in dBFS.
    package static func sineDecibels(amplitude: Double) -> Double { 20 * log10(amplitude / 2.squareRoot()) }

    /// The first index where the signal's magnitude reaches `threshold`, or nil.
    package static func onset(in samples: [Float], threshold: Float) -> Int? {
        samples.firstIndex { abs($0) >= threshold }
    }

    /// Channel `channel` of interleaved `samples`.
    package static func channel(_ channel: Int, of samples: [Float], channels: Int) -> [Float] {
        stride(from: channel, to: samples.count, by: channels).map { samples[$0] }
    }
}
