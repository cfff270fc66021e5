import MediaDevicesCore
/// The formats no library the pipeline uses reads properly, unpacked here, pixel by pixel, into
/// ARGB (bytes B, G, R, A with A = 255) in memory the caller prepared: RGB332 and BGR666 (no
/// reader in libyuv or libv4lconvert), and HSV — libv4lconvert has an HSV reader
/// (`v4lconvert_hsv_to_rgb24`), but it takes no row stride (padded rows come out sheared), so
/// the inverse of the kernel's own RGB → HSV is written here. Plain loops over the rows: no
/// allocation, nothing but the source and the destination touched.
enum ScalarUnpacking {
    /// A layout this file reads.
    enum Layout: Equatable {
        /// One byte R:3 G:3 B:2 (V4L2 `RGB332`).
        case rgb332
        /// Four bytes: B:6 G:6 R:6 from the first byte's most significant bit, then unused bits
        /// (V4L2 `BGR666`).
        case bgr666
        /// Bytes H, S, V (V4L2 `HSV24`).
        case hsv24
        /// Bytes X, H, S, V (V4L2 `HSV32`).
        case hsv32
    }

    /// Writes `s` (`width` × `height` pixels of `layout`) as ARGB into `d`; HSV hues in
    /// `hueSteps` steps a turn (180 or 256, as the format's `hsv_enc` says).
    static func toARGB(_ layout: Layout, _ s: PlaneView, _ d: UnsafeMutablePointer<UInt8>, _ dStride: Int32,
                       width: Int32, height: Int32, hueSteps: Int = 180) -> Int32 {
        guard let source = s.base, hueSteps > 0 else { return -1 }
        let (w, h) = (Int(width), Int(height))
        var row = 0
        while row < h {
            let src = source + row * Int(s.stride)
            let dst = d + row * Int(dStride)
            var x = 0
            while x < w {
                let (r, g, b): (UInt8, UInt8, UInt8)
                switch layout {
                case .rgb332:
                    let p = Int(src[x])
                    (r, g, b) = (widen(p >> 5, bits: 3), widen(p >> 2 & 7, bits: 3), widen(p & 3, bits: 2))
                case .bgr666:
                    let p = src + 4 * x
                    let word = Int(p[0]) << 16 | Int(p[1]) << 8 | Int(p[2])
                    (b, g, r) = (widen(word >> 18, bits: 6), widen(word >> 12 & 63, bits: 6), widen(word >> 6 & 63, bits: 6))
                case .hsv24:
                    let p = src + 3 * x
                    (r, g, b) = rgb(hue: Int(p[0]), saturation: Int(p[1]), value: Int(p[2]), steps: hueSteps)
                case .hsv32:
                    let p = src + 4 * x
                    (r, g, b) = rgb(hue: Int(p[1]), saturation: Int(p[2]), value: Int(p[3]), steps: hueSteps)
                }
                let o = dst + 4 * x
                o[0] = b; o[1] = g; o[2] = r; o[3] = 255
                x += 1
            }
            row += 1
        }
        return 0
    }

    /// An `bits`-bit field widened to 8 bits by repeating its bits (as libyuv widens 15/16-bit
    /// RGB): all ones stay all ones.
    static func widen(_ value: Int, bits: Int) -> UInt8 {
        var out = 0, shift = 8 - bits
        while shift > -bits {
            out |= shift >= 0 ? value << shift : value >> -shift
            shift -= bits
        }
        return UInt8(out & 0xFF)
    }

    /// The RGB colour of an HSV sample (hue in `steps` steps a turn, 180 or 256; saturation and
    /// value in 0...255), rounded: the inverse of the kernel's integer RGB → HSV (v4l2-tpg-core.c
    /// `color_to_hsv`), which gives each primary a third of the turn (60 or 85 steps) and the
    /// hue's lean towards a neighbour up to half a third (30 or 42 steps) either side.
    static func rgb(hue: Int, saturation: Int, value: Int, steps: Int = 180) -> (UInt8, UInt8, UInt8) {
        let v = value
        guard saturation > 0 else { return (UInt8(v), UInt8(v), UInt8(v)) }
        let third = steps == 256 ? 85 : steps / 3
        let half = third / 2
        // The primary that is the maximum (0 red, 1 green, 2 blue) and the lean from it.
        var primary = (hue + half) / third
        var lean = hue - primary * third
        if primary >= 3 { (primary, lean) = (0, hue - steps) }
        lean = max(-half, min(half, lean))
        let spread = (saturation * v + 127) / 255
        let low = v - spread
        let rise = (abs(lean) * spread + half / 2) / half
        // Leaning forwards (red → green → blue → red) raises the next channel, backwards the previous.
        let (next, previous) = lean >= 0 ? (low + rise, low) : (low, low + rise)
        let (r, g, b): (Int, Int, Int)
        switch primary {
        case 0: (r, g, b) = (v, next, previous)
        case 1: (r, g, b) = (previous, v, next)
        default: (r, g, b) = (next, previous, v)
        }
        return (UInt8(r), UInt8(g), UInt8(b))
    }
}
