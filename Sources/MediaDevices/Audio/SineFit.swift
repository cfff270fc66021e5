import Foundation

/// A least-squares fit of one sine (IEEE 1057's four-parameter fit: amplitude, phase, offset
/// and frequency, by Gauss-Newton from a zero-crossing estimate) to a tone, and what is left
/// once it is taken out: the residual is noise plus distortion, so THD+N is the ratio of its
/// RMS to the signal's, the fundamental notched by subtraction rather than a filter.
/// Used by the tests and `mediadevices audio-benchmark --resampler`; not for audio threads.
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
            var normal = [Double](repeating: 0, count: 16), right = [Double](repeating: 0, count: 4)
            for i in 0..<n {
                let t = Double(i) - middle
                let cosine = cos(omega * t), sine = sin(omega * t)
                let row = [cosine, sine, 1, t * (-a * sine + b * cosine)]
                let model = a * cosine + b * sine + c
                let target = withFrequency ? x[i] - model : x[i]
                for r in 0..<size {
                    right[r] += row[r] * target
                    for k in 0..<size { normal[r * 4 + k] += row[r] * row[k] }
                }
            }
            guard let solution = Self.solve(normal, right, size: size) else { return nil }
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
