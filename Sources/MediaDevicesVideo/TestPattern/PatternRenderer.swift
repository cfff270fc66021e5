import MediaDevicesCore
/// Draws test-pattern frames into memory the source owns: vertical colour bars that move one
/// step per frame with the frame number printed on them, or white noise. Rendering a frame
/// allocates nothing: one row is built per plane and copied down.
struct PatternRenderer {
    /// 100% colour bars, left to right: white, yellow, cyan, green, magenta, red, blue, black.
    static let barsRGB: [(UInt8, UInt8, UInt8)] = [
        (255, 255, 255), (255, 255, 0), (0, 255, 255), (0, 255, 0),
        (255, 0, 255), (255, 0, 0), (0, 0, 255), (0, 0, 0),
    ]

    /// The pixel formats the renderer draws.
    static let formats: [PixelFormat] = [.yuyv, .uyvy, .nv12, .yu12, .grey, .xbgr32, .rgb24]

    /// BT.601 limited-range Y, Cb, Cr of an RGB colour (rounded; the values vivid and FFmpeg use).
    static func ycbcr(_ rgb: (UInt8, UInt8, UInt8)) -> (y: UInt8, cb: UInt8, cr: UInt8) {
        let r = Double(rgb.0), g = Double(rgb.1), b = Double(rgb.2)
        let y = 16 + (65.481 * r + 128.553 * g + 24.966 * b) / 255
        let cb = 128 + (-37.797 * r - 74.203 * g + 112.0 * b) / 255
        let cr = 128 + (112.0 * r - 93.786 * g - 18.214 * b) / 255
        return (UInt8(y.rounded()), UInt8(cb.rounded()), UInt8(cr.rounded()))
    }

    let format: VideoFormat
    private let barsYCbCr: [(y: UInt8, cb: UInt8, cr: UInt8)] = PatternRenderer.barsRGB.map(PatternRenderer.ycbcr)
    private var noiseState: UInt64 = 0x9E37_79B9_7F4A_7C15

    init(format: VideoFormat) { self.format = format }

    /// The bar index under column `x` when the bars have moved `shift` pixels to the left.
    @inline(__always)
    func bar(atColumn x: Int, shift: Int) -> Int {
        ((x + shift) % format.width) * 8 / format.width
    }

    /// Draws frame number `index` as colour bars into `planes` (one pointer per plane).
    mutating func drawBars(index: UInt64, planes: UnsafeMutablePointer<UnsafeMutableRawPointer>) {
        let shift = Int(index % UInt64(format.width)) * 4 % format.width
        let width = format.width, height = format.height
        let stride0 = format.bytesPerRow[0]
        let row0 = planes[0].assumingMemoryBound(to: UInt8.self)
        switch format.pixelFormat {
        case .yuyv, .uyvy:
            let lumaFirst = format.pixelFormat == .yuyv
            for x in stride(from: 0, to: width - 1, by: 2) {
                let c = barsYCbCr[bar(atColumn: x, shift: shift)]
                let c1 = barsYCbCr[bar(atColumn: x + 1, shift: shift)]
                let p = row0 + x * 2
                if lumaFirst { p[0] = c.y; p[1] = c.cb; p[2] = c1.y; p[3] = c.cr }
                else { p[0] = c.cb; p[1] = c.y; p[2] = c.cr; p[3] = c1.y }
            }
        case .grey, .nv12, .yu12:
            for x in 0..<width { row0[x] = barsYCbCr[bar(atColumn: x, shift: shift)].y }
        case .xbgr32:
            for x in 0..<width {
                let c = PatternRenderer.barsRGB[bar(atColumn: x, shift: shift)]
                let p = row0 + x * 4
                p[0] = c.2; p[1] = c.1; p[2] = c.0; p[3] = 255
            }
        default:  // .rgb24
            for x in 0..<width {
                let c = PatternRenderer.barsRGB[bar(atColumn: x, shift: shift)]
                let p = row0 + x * 3
                p[0] = c.0; p[1] = c.1; p[2] = c.2
            }
        }
        for y in 1..<max(height, 1) { (planes[0] + y * stride0).copyMemory(from: planes[0], byteCount: stride0) }
        // Chroma planes of NV12 and YU12: one row built, copied to every chroma row.
        let chromaRows = (height + 1) / 2
        if format.pixelFormat == .nv12 {
            let stride1 = format.bytesPerRow[1]
            let row = planes[1].assumingMemoryBound(to: UInt8.self)
            for x in stride(from: 0, to: width, by: 2) {
                let c = barsYCbCr[bar(atColumn: x, shift: shift)]
                row[x] = c.cb; row[x + 1] = c.cr
            }
            for y in 1..<max(chromaRows, 1) { (planes[1] + y * stride1).copyMemory(from: planes[1], byteCount: stride1) }
        } else if format.pixelFormat == .yu12 {
            // An index loop: a literal array of (plane, pick) allocated on every frame (3 with
            // its iterator in debug builds).
            var plane = 1
            while plane <= 2 {
                let pick = plane == 1
                defer { plane += 1 }
                let stride = format.bytesPerRow[plane]
                let row = planes[plane].assumingMemoryBound(to: UInt8.self)
                for x in 0..<(width + 1) / 2 {
                    let c = barsYCbCr[bar(atColumn: x * 2, shift: shift)]
                    row[x] = pick ? c.cb : c.cr
                }
                for y in 1..<max(chromaRows, 1) { (planes[plane] + y * stride).copyMemory(from: planes[plane], byteCount: stride) }
            }
        }
        drawCounter(index, planes: planes)
    }

    /// Fills every plane with white noise (xorshift64), like the seeds' white-noise capturer.
    mutating func drawNoise(planes: UnsafeMutablePointer<UnsafeMutableRawPointer>, planeSizes: [Int]) {
        for (plane, size) in planeSizes.enumerated() {
            let words = planes[plane].assumingMemoryBound(to: UInt64.self)
            for i in 0..<size / 8 {
                noiseState ^= noiseState << 13
                noiseState ^= noiseState >> 7
                noiseState ^= noiseState << 17
                words[i] = noiseState
            }
        }
    }

    // MARK: frame counter

    /// 3x5 digit glyphs, one row per 3 bits (bit 2 = left column).
    private static let glyphs: [[UInt8]] = [
        [7, 5, 5, 5, 7], [2, 6, 2, 2, 7], [7, 1, 7, 4, 7], [7, 1, 7, 1, 7], [5, 5, 7, 1, 1],
        [7, 4, 7, 1, 7], [7, 4, 7, 5, 7], [7, 1, 1, 1, 1], [7, 5, 7, 5, 7], [7, 5, 7, 1, 7],
    ]

    /// Prints `index` (up to 8 digits) in white on a black box at the top left. The box uses
    /// neutral chroma, so the digits are grey-scale in every format.
    private func drawCounter(_ index: UInt64, planes: UnsafeMutablePointer<UnsafeMutableRawPointer>) {
        let scale = max(1, format.height / 60)
        let digits = 8
        let boxWidth = (digits * 4 + 1) * scale, boxHeight = 7 * scale
        guard boxWidth <= format.width, boxHeight <= format.height else { return }
        withUnsafeTemporaryAllocation(of: Int.self, capacity: digits) { digitAt in
            var value = index
            for position in stride(from: digits - 1, through: 0, by: -1) {
                digitAt[position] = Int(value % 10)
                value /= 10
            }
            for y in 0..<boxHeight {
                for x in 0..<boxWidth {
                    let cellX = x / scale - 1, cellY = y / scale - 1
                    var lit = false
                    if cellX >= 0, cellY >= 0, cellY < 5, cellX % 4 < 3, cellX / 4 < digits {
                        let glyph = PatternRenderer.glyphs[digitAt[cellX / 4]]
                        lit = glyph[cellY] & (4 >> UInt8(cellX % 4)) != 0
                    }
                    setGrey(x: x, y: y, lit ? 235 : 16, planes: planes)
                }
            }
        }
    }

    /// Sets one pixel to a grey level given as limited-range luma.
    @inline(__always)
    private func setGrey(x: Int, y: Int, _ luma: UInt8, planes: UnsafeMutablePointer<UnsafeMutableRawPointer>) {
        let row = planes[0].assumingMemoryBound(to: UInt8.self) + y * format.bytesPerRow[0]
        let full = luma == 235 ? UInt8(255) : 0
        switch format.pixelFormat {
        case .yuyv:
            row[x * 2] = luma; row[x * 2 + 1] = 128
        case .uyvy:
            row[x * 2 + 1] = luma; row[x * 2] = 128
        case .grey:
            row[x] = luma
        case .nv12:
            row[x] = luma
            if y % 2 == 0 { planes[1].assumingMemoryBound(to: UInt8.self)[(y / 2) * format.bytesPerRow[1] + x] = 128 }
        case .yu12:
            row[x] = luma
            if y % 2 == 0, x % 2 == 0 {
                planes[1].assumingMemoryBound(to: UInt8.self)[(y / 2) * format.bytesPerRow[1] + x / 2] = 128
                planes[2].assumingMemoryBound(to: UInt8.self)[(y / 2) * format.bytesPerRow[2] + x / 2] = 128
            }
        case .xbgr32:
            row[x * 4] = full; row[x * 4 + 1] = full; row[x * 4 + 2] = full
        default:
            row[x * 3] = full; row[x * 3 + 1] = full; row[x * 3 + 2] = full
        }
    }
}
