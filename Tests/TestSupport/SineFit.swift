import MediaDevices
import Foundation

/// A least-squares fit of one sine (IEEE 1057's four-parameter fit: amplitude, phase, offset
/// and frequency, by Gauss-Newton from a zero-crossing estimate) to a tone, and what is left
/// once it is taken out: the residual is noise plus distortion, so THD+N is the ratio of its
/// RMS to the signal's, the fundamental notched by subtraction rather than a filter.
/// Used by the tests and `mediadevices-benchmark audio --resampler`; not for audio threads.
package struct SineFit: Sendable {
    /// The fitted frequency in Hz.
    package let frequency: Double
    /// The fitted peak amplitude (full scale 1).
    package let amplitude: Double
    /// The fitted DC offset.
    package let offset: Double
    /// RMS of what the fitted sine does not explain.
    package let residualRMS: Double
    /// RMS of the samples.
    package let signalRMS: Double

    /// THD+N in dB: 20·log10(residual RMS / signal RMS); −80 means the residual is 10⁻⁴ of the signal.
    package var thdPlusNoiseDecibels: Double { 20 * log10(max(residualRMS, 1e-30) / signalRMS) }
    /// The fitted sine's RMS level in dBFS (a full-scale sine is −3.01 dBFS).
    package var levelDecibels: Double { 20 * log10(amplitude / 2.squareRoot()) }

    /// Fits `samples` (one channel) taken at `sampleRate`; nil when no tone is found.
    package init?(_ samples: [Float], sampleRate: Int) {
        guard samples.count > 64, var omega = ToneAnalysis.frequency(of: samples, sampleRate: sampleRate).map({ 2 * Double.pi * $0 / Double(sampleRate) }) else { return nil }
        let x = samples.map(Double.init)
        let n = x.count, middle = Double(n - 1) / 2
        var a = 0.0, b = 0.0, c = 0.0
        // Three-parameter fit at the estimated frequency, then Gauss-Newton on all four.
        for iteration in 0..<12 {
            let withFrequency = iteration > 0
            let size = withFrequency ? 4 : 3
            // The normal equations' sums, one scalar each (the row is cos, sin, 1 and the
            // frequency's derivative): no array per sample, which made a debug build's fit of a
            // 200 ms window take most of a second in the rig.
            var n00 = 0.0, n01 = 0.0, n02 = 0.0, n03 = 0.0, n11 = 0.0, n12 = 0.0, n13 = 0.0, n22 = 0.0, n23 = 0.0, n33 = 0.0
            var r0 = 0.0, r1 = 0.0, r2 = 0.0, r3 = 0.0
            for i in 0..<n {
                let t = Double(i) - middle
                let cosine = cos(omega * t), sine = sin(omega * t)
                let slope = withFrequency ? t * (-a * sine + b * cosine) : 0
                let target = withFrequency ? x[i] - (a * cosine + b * sine + c) : x[i]
                n00 += cosine * cosine; n01 += cosine * sine; n02 += cosine; n03 += cosine * slope
                n11 += sine * sine; n12 += sine; n13 += sine * slope
                n22 += 1; n23 += slope; n33 += slope * slope
                r0 += cosine * target; r1 += sine * target; r2 += target; r3 += slope * target
            }
            let normal = [n00, n01, n02, n03, n01, n11, n12, n13, n02, n12, n22, n23, n03, n13, n23, n33]
            guard let solution = Self.solve(normal, [r0, r1, r2, r3], size: size) else { return nil }
            if withFrequency {
                a += solution[0]; b += solution[1]; c += solution[2]; omega += solution[3]
                if abs(solution[3]) < 1e-13 { break }
            } else {
                (a, b, c) = (solution[0], solution[1], solution[2])
            }
        }
        var residual = 0.0, signal = 0.0
        for i in 0..<n {
            let t = Double(i) - middle
            let miss = x[i] - (a * cos(omega * t) + b * sin(omega * t) + c)
            residual += miss * miss
            signal += x[i] * x[i]
        }
        frequency = omega * Double(sampleRate) / (2 * Double.pi)
        amplitude = (a * a + b * b).squareRoot()
        offset = c
        residualRMS = (residual / Double(n)).squareRoot()
        signalRMS = (signal / Double(n)).squareRoot()
        guard signalRMS > 0 else { return nil }
    }

    /// Solves the `size`×`size` system (row stride 4) by Gaussian elimination with partial pivoting.
    private static func solve(_ matrix: [Double], _ vector: [Double], size: Int) -> [Double]? {
        var m = matrix, v = vector
        for column in 0..<size {
            var pivot = column
            for row in column + 1..<size where abs(m[row * 4 + column]) > abs(m[pivot * 4 + column]) { pivot = row }
            guard abs(m[pivot * 4 + column]) > 1e-300 else { return nil }
            if pivot != column {
                for k in 0..<size { m.swapAt(column * 4 + k, pivot * 4 + k) }
                v.swapAt(column, pivot)
            }
            for row in column + 1..<size {
                let factor = m[row * 4 + column] / m[column * 4 + column]
                for k in column..<size { m[row * 4 + k] -= factor * m[column * 4 + k] }
                v[row] -= factor * v[column]
            }
        }
        var result = [Double](repeating: 0, count: size)
        for row in stride(from: size - 1, through: 0, by: -1) {
            var sum = v[row]
            for k in row + 1..<size { sum -= m[row * 4 + k] * result[k] }
            result[row] = sum / m[row * 4 + row]
        }
        return result
    }
}
