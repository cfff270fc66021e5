import Foundation

/// The peak signal-to-noise ratio of `a` against `b` in dB (infinite when equal), skipping the
/// alpha byte of each pixel when `bytesPerPixel` is given.
public func psnr(_ a: [UInt8], _ b: [UInt8], skipAlphaOf bytesPerPixel: Int? = nil) -> Double {
    precondition(a.count == b.count, "lengths \(a.count) and \(b.count) differ")
    var sum = 0.0, count = 0
    for i in a.indices {
        if let bpp = bytesPerPixel, i % bpp == bpp - 1 { continue }
        let d = Double(Int(a[i]) - Int(b[i]))
        sum += d * d; count += 1
    }
    let mse = sum / Double(max(count, 1))
    return mse == 0 ? .infinity : 10 * log10(255 * 255 / mse)
}

/// The largest and mean absolute difference between two equally long byte arrays, skipping the
/// alpha byte of each pixel when `bytesPerPixel` is given.
public func difference(_ a: [UInt8], _ b: [UInt8], skipAlphaOf bytesPerPixel: Int? = nil) -> (max: Int, mean: Double) {
    precondition(a.count == b.count, "lengths \(a.count) and \(b.count) differ")
    var maximum = 0, sum = 0, count = 0
    for i in a.indices {
        if let bpp = bytesPerPixel, i % bpp == bpp - 1 { continue }
        let d = abs(Int(a[i]) - Int(b[i]))
        maximum = max(maximum, d); sum += d; count += 1
    }
    return (maximum, Double(sum) / Double(max(count, 1)))
}
