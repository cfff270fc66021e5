import MediaDevicesCore
import CTurboJPEG

/// A scale at which libjpeg-turbo decodes a JPEG inside its inverse DCT (a TurboJPEG scaling
/// factor): at 1/2, 3/8, 1/4 or 1/8 each 8x8 block becomes 4x4, 3x3, 2x2 or 1x1 samples, so the
/// picture is never made at full size. Entropy decoding costs the same at every scale.
struct JPEGScale: Equatable, Sendable {
    /// The factor's numerator.
    let numerator: Int
    /// The factor's denominator.
    let denominator: Int

    /// Decoding at the JPEG's own size.
    static let full = JPEGScale(numerator: 1, denominator: 1)

    /// The reductions used, smallest first: those of this libjpeg-turbo's scaling factors
    /// (`tjGetScalingFactors`) that are 1/2, 1/4 or 1/8. Above one half the DCT saves too little
    /// to pay for the scale that finishes the job. The other eighths (3/8 above all) are left out:
    /// their 3x3 (5x5, ...) IDCT is no area average, and with libyuv's box scale after it the
    /// result was 31-41 dB from decode-then-scale on the USB camera's pictures, against 44-53 dB
    /// for 1/2 and 1/4 at the same sizes (ScaledJPEGDecodeTests).
    static let reductions: [JPEGScale] = {
        var count: Int32 = 0
        guard let factors = tjGetScalingFactors(&count), count > 0 else { return [] }
        var found: [JPEGScale] = []
        for index in 0..<Int(count) {
            let factor = factors[index]
            if factor.num == 1, factor.denom == 2 || factor.denom == 4 || factor.denom == 8 {
                found.append(JPEGScale(numerator: Int(factor.num), denominator: Int(factor.denom)))
            }
        }
        return found.sorted { $0.numerator * $1.denominator < $1.numerator * $0.denominator }
    }()

    /// Whether this is the full size (no reduction).
    var isFull: Bool { numerator == denominator }

    /// The size a picture of `size` decodes to at this scale (TurboJPEG's `TJSCALED`: rounded up).
    func scaled(_ size: Size) -> Size {
        Size(width: (size.width * numerator + denominator - 1) / denominator,
             height: (size.height * numerator + denominator - 1) / denominator)
    }

    /// `value` (a source coordinate or length) at this scale, rounded down.
    func scaled(_ value: Int) -> Int { value * numerator / denominator }

    /// Whether this scale is smaller than `other`.
    func isSmaller(than other: JPEGScale) -> Bool { numerator * other.denominator < other.numerator * denominator }

    /// The scale as a public fraction (statistics).
    var fraction: Fraction { Fraction(numerator, denominator) }
}

extension ConversionPlan {
    /// This plan (made for the full-size picture) applied to the picture decoded at `scale`,
    /// `decoded` pixels: the crop moves onto the decoded picture (whole chroma samples, inside
    /// it); the scaled size, rotation and mirroring stay.
    func onDecoded(at scale: JPEGScale, decoded: Size) -> ConversionPlan {
        guard !scale.isFull else { return self }
        var plan = self
        // An odd last row or column is not used: libjpeg-turbo's issue 360 reports its chroma
        // decoded wrongly at reduced scales.
        let width = max(decoded.width & ~1, 2), height = max(decoded.height & ~1, 2)
        let x = min(scale.scaled(crop.x), width - 2), y = min(scale.scaled(crop.y), height - 2)
        let region = Rect(x: x, y: y, width: max(1, min(scale.scaled(crop.width), width - x)),
                          height: max(1, min(scale.scaled(crop.height), height - y)))
        plan.crop = ConversionPlan.aligned(region, to: (2, 2))
        return plan
    }

    /// The smallest reduction whose decoded picture still covers this plan's scaled size (so
    /// the scale that finishes the job only shrinks) and whose crop, moved onto whole decoded
    /// pixels, lands within `tolerance` output pixels of the one asked for; `.full` when none does.
    func smallestCoveringScale(source: Size, tolerance: Double = ConversionPlan.decodeTolerance) -> JPEGScale {
        let reductions = JPEGScale.reductions
        var index = 0
        while index < reductions.count {
            let scale = reductions[index]
            let crop = onDecoded(at: scale, decoded: scale.scaled(source)).crop
            if crop.width >= scaledSize.width, crop.height >= scaledSize.height,
               shift(of: crop, at: scale) <= tolerance { return scale }
            index += 1
        }
        return .full
    }

    /// How far (in output pixels) the edges of `decodedCrop`, a crop of the picture decoded at
    /// `scale`, lie from this plan's crop of the full picture: what a scaled decode moves.
    func shift(of decodedCrop: Rect, at scale: JPEGScale) -> Double {
        let step = scale.denominator / scale.numerator
        let left = abs(decodedCrop.x * step - crop.x)
        let right = abs((decodedCrop.x + decodedCrop.width) * step - (crop.x + crop.width))
        let top = abs(decodedCrop.y * step - crop.y)
        let bottom = abs((decodedCrop.y + decodedCrop.height) * step - (crop.y + crop.height))
        return max(Double(max(left, right)) * Double(scaledSize.width) / Double(crop.width),
                   Double(max(top, bottom)) * Double(scaledSize.height) / Double(crop.height))
    }

    /// The largest shift (see `shift(of:at:)`) a scaled decode may make, in output pixels. The
    /// crop's edges move onto whole decoded pixels (2, 4 or 8 source pixels; even ones, for the
    /// chroma); beyond a quarter of an output pixel a sharp edge visibly moves, and the picture
    /// is decoded whole instead.
    static let decodeTolerance = 0.25
}
