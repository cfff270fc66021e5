import Foundation

/// The peak signal-to-noise ratio of `a` against `b` in dB (infinite when equal), skipping the
/// alpha byte of each pixel when `bytesPerPixel` is given.
public func psnr(_ a: [UInt8], _ b: [UInt8], skipAlphaOf bytesPerPixel: Int? = nil) -> Double {
    precondition(a.count == b.count, "lengths \(a.count) and \(b.count) differ")
    let sums = differenceSums(a, b, skipAlphaOf: bytesPerPixel)
    let mse = Double(sums.squares) / Double(max(sums.count, 1))
    return mse == 0 ? .infinity : 10 * log10(255 * 255 / mse)
}

/// The largest and mean absolute difference between two equally long byte arrays, skipping the
/// alpha byte of each pixel when `bytesPerPixel` is given.
public func difference(_ a: [UInt8], _ b: [UInt8], skipAlphaOf bytesPerPixel: Int? = nil) -> (max: Int, mean: Double) {
    precondition(a.count == b.count, "lengths \(a.count) and \(b.count) differ")
    let sums = differenceSums(a, b, skipAlphaOf: bytesPerPixel)
    return (sums.maximum, Double(sums.absolute) / Double(max(sums.count, 1)))
}

/// The sums of squared and absolute byte differences, the largest difference and the bytes
/// compared, skipping the alpha byte (the last) of each pixel when `bytesPerPixel` is given.
/// Through buffer pointers, pixel by pixel, with no call per byte: the device tests run a debug
/// build under emulation, where indexing the arrays byte by byte (and a modulo per byte) made
/// comparing a 1080p frame take seconds.
private func differenceSums(_ a: [UInt8], _ b: [UInt8], skipAlphaOf bytesPerPixel: Int?) -> (squares: Int, absolute: Int, maximum: Int, count: Int) {
    let step = bytesPerPixel ?? 1, compared = bytesPerPixel.map { $0 - 1 } ?? 1
    var squares = 0, absolute = 0, maximum = 0, count = 0
    a.withUnsafeBufferPointer { a in
        b.withUnsafeBufferPointer { b in
            guard var p = a.baseAddress, var q = b.baseAddress else { return }
            var left = a.count
            while left > 0 {
                // A partial pixel at the end has no alpha byte to skip.
                for k in 0..<min(left, compared) {
                    let d = Int(p[k]) - Int(q[k]), size = d < 0 ? -d : d
                    squares += d * d; absolute += size; count += 1
                    if size > maximum { maximum = size }
                }
                let taken = min(left, step)
                p += taken; q += taken; left -= taken
            }
        }
    }
    return (squares, absolute, maximum, count)
}
