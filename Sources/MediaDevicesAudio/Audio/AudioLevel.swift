import MediaDevicesCore
import Foundation

/// The level of a block of samples, per channel: the peak (largest magnitude) and the RMS, on
/// the full-scale 0…1 scale of float samples, as a recorder's meter shows them.
public struct AudioLevel: Sendable, Hashable {
    /// Largest magnitude per channel (1 is full scale).
    public var peak: [Float]
    /// Root mean square per channel (a full-scale sine has 0.707).
    public var rms: [Float]

    /// Creates a level from per-channel peaks and RMS values.
    package init(peak: [Float], rms: [Float]) {
        self.peak = peak
        self.rms = rms
    }

    /// Measures interleaved float `samples` of `channels` channels (a partial last frame is
    /// ignored). No samples: silence.
    public init(samples: UnsafeBufferPointer<Float>, channels: Int) {
        let channels = max(channels, 1)
        var peak = [Float](repeating: 0, count: channels)
        var squares = [Double](repeating: 0, count: channels)
        let frames = samples.count / channels
        var index = 0
        for _ in 0..<frames {
            for channel in 0..<channels {
                let sample = samples[index]
                peak[channel] = max(peak[channel], abs(sample))
                squares[channel] += Double(sample) * Double(sample)
                index += 1
            }
        }
        self.peak = peak
        rms = squares.map { frames == 0 ? 0 : Float(($0 / Double(frames)).squareRoot()) }
    }

    /// `value` (0…1) in dBFS; silence is −∞.
    package static func decibels(_ value: Float) -> Double { value > 0 ? 20 * log10(Double(value)) : -.infinity }

    /// Peak per channel in dBFS.
    public var peakDecibels: [Double] { peak.map(Self.decibels) }
    /// RMS per channel in dBFS (a full-scale sine reads −3.01 dBFS).
    public var rmsDecibels: [Double] { rms.map(Self.decibels) }

    /// A one-line meter for a terminal: per channel, a bar of `width` cells from −60 to 0 dBFS
    /// (RMS filled, peak marked) and the RMS and peak figures.
    public func meter(width: Int = 30) -> String {
        zip(rmsDecibels, peakDecibels).enumerated().map { channel, levels in
            let (rms, peak) = levels
            func cells(_ db: Double) -> Int { db.isFinite ? min(width, max(0, Int(((db + 60) / 60 * Double(width)).rounded()))) : 0 }
            var bar = Array(repeating: Character(" "), count: width)
            for cell in 0..<cells(rms) { bar[cell] = "#" }
            let mark = cells(peak)
            if mark > 0 { bar[mark - 1] = "|" }
            func figure(_ db: Double) -> String { db.isFinite ? String(format: "%6.1f", db) : "  -inf" }
            return "ch\(channel + 1) [\(String(bar))] rms \(figure(rms)) peak \(figure(peak)) dBFS"
        }.joined(separator: "  ")
    }
}
