import Foundation
import TestSupport
import XCTest
@testable import MediaDevices
@testable import MediaDevicesAudio
@testable import MediaDevicesVideo
@testable import MediaDevicesCore

/// The rarer packed formats (`PixelFormatTable+Rare`: RGB332, BGR666, 16-bit RGB with the alpha
/// bit last, packed 16-bit YUV, HSV), each made here by hand from bars of known colours, byte by
/// byte as the kernel writes them (vivid's test pattern generator), with padded rows: to ARGB
/// they give those colours, to I420 and NV12 their planes. The bars differ per channel, so a
/// swapped channel or a field read from the wrong bits fails.
final class RareFormatConversionTests: XCTestCase {
    typealias More = MoreFormatConversionTests
    typealias RGB = More.RGB

    /// RGB332: one byte, R and G keep 3 bits, B 2; widened back by bit replication.
    static func rgb332Case() -> More.Case {
        let bytes = (0..<More.height).flatMap { _ in
            (0..<More.width).map { x -> UInt8 in
                let c = More.rgbBars[More.bar(x)]
                return UInt8((c.r >> 5) << 5 | (c.g >> 5) << 2 | c.b >> 6)
            }
        }
        return More.Case(format: .rgb332, bytes: bytes, expected: { let c = More.rgbBars[$0]
            return (More.widened(c.r, 3), More.widened(c.g, 3), More.widened(c.b, 2)) }, tolerance: 0, i420: nil)
    }

    /// BGR666: B, G, R of 6 bits from the first byte's top bit, the fourth byte unused.
    static func bgr666Case() -> More.Case {
        let bytes = (0..<More.height).flatMap { _ in
            (0..<More.width).flatMap { x -> [UInt8] in
                let c = More.rgbBars[More.bar(x)]
                let word = (c.b >> 2) << 18 | (c.g >> 2) << 12 | (c.r >> 2) << 6
                return [UInt8(word >> 16), UInt8(word >> 8 & 0xFF), UInt8(word & 0xFF), 0]
            }
        }
        return More.Case(format: .bgr666, bytes: bytes, expected: { let c = More.rgbBars[$0]
            return (More.widened(c.r, 6), More.widened(c.g, 6), More.widened(c.b, 6)) }, tolerance: 0, i420: nil)
    }

    /// Packed 16-bit YUV with fields of `bits` (A/X, Y, Cb, Cr; `bits[0]` 0 for none). The
    /// expected planes are the fields widened by bit replication; the expected colours are what
    /// the pipeline makes of those samples as VUYA32 (tested in `MoreFormatConversionTests`).
    static func yuv16Case(_ format: PixelFormat, _ bits: [Int]) throws -> More.Case {
        let (yBits, uBits, vBits) = (bits[1], bits[2], bits[3])
        func sample(_ bar: Int) -> (y: Int, u: Int, v: Int) {
            let b = More.yuvBars[bar]
            return (More.widened(b.y, yBits), More.widened(b.u, uBits), More.widened(b.v, vBits))
        }
        let bytes = More.words { bar in
            let b = More.yuvBars[bar]
            let alpha = bits[0] > 0 ? (1 << bits[0] - 1) : 0
            return ((alpha << yBits | b.y >> (8 - yBits)) << uBits | b.u >> (8 - uBits)) << vBits | b.v >> (8 - vBits)
        }
        var vuya: [UInt8] = [], y: [UInt8] = [], u: [UInt8] = [], v: [UInt8] = []
        for row in 0..<More.height {
            for x in 0..<More.width {
                let s = sample(More.bar(x))
                vuya += [UInt8(s.v), UInt8(s.u), UInt8(s.y), 255]
                y.append(UInt8(s.y))
                if row % 2 == 0 && x % 2 == 0 { u.append(UInt8(s.u)); v.append(UInt8(s.v)) }
            }
        }
        let reference = try More.convert(PaddedImage(tight: vuya, pixelFormat: .vuya32, width: More.width, height: More.height), to: .argb)
        let colours: [RGB] = (0..<4).map { bar in
            let i = bar * 4 * 4
            return (Int(reference[i + 2]), Int(reference[i + 1]), Int(reference[i]))
        }
        return More.Case(format: format, bytes: bytes, expected: { colours[$0] }, tolerance: 0, i420: y + u + v)
    }

    /// Four HSV bars (hue in 180 steps): red, green, blue at full saturation, and a muted
    /// azure (200°, saturation 128, value 200) whose channels all differ.
    static let hsvBars: [(h: Int, s: Int, v: Int)] = [(0, 255, 255), (60, 255, 255), (120, 255, 255), (100, 128, 200)]

    /// The RGB of an HSV bar by the textbook formula in floating point.
    static func hsvColour(_ bar: Int) -> RGB {
        let (h, s, v) = (Double(hsvBars[bar].h) * 2, Double(hsvBars[bar].s) / 255, Double(hsvBars[bar].v))
        let c = v * s, x = c * (1 - abs((h / 60).truncatingRemainder(dividingBy: 2) - 1)), m = v - c
        let (r, g, b): (Double, Double, Double)
        switch Int(h / 60) {
        case 0: (r, g, b) = (c, x, 0)
        case 1: (r, g, b) = (x, c, 0)
        case 2: (r, g, b) = (0, c, x)
        case 3: (r, g, b) = (0, x, c)
        case 4: (r, g, b) = (x, 0, c)
        default: (r, g, b) = (c, 0, x)
        }
        return (Int((r + m).rounded()), Int((g + m).rounded()), Int((b + m).rounded()))
    }

    /// HSV24 (bytes H, S, V) or HSV32 (bytes X, H, S, V).
    static func hsvCase(_ format: PixelFormat, padded: Bool) -> More.Case {
        let bytes = (0..<More.height).flatMap { _ in
            (0..<More.width).flatMap { x -> [UInt8] in
                let b = hsvBars[More.bar(x)]
                return (padded ? [0] : []) + [UInt8(b.h), UInt8(b.s), UInt8(b.v)]
            }
        }
        // The integer conversion rounds where the textbook formula gives halves: 1 step.
        return More.Case(format: format, bytes: bytes, expected: { hsvColour($0) }, tolerance: 1, i420: nil)
    }

    static func cases() throws -> [More.Case] {
        [
            rgb332Case(), bgr666Case(),
            More.rgb16Case(.rgbx555, "RGBX", [5, 5, 5, 1]),
            More.rgb16Case(.rgba555, "RGBA", [5, 5, 5, 1]),
            More.rgb16Case(.bgrx555, "BGRX", [5, 5, 5, 1]),
            More.rgb16Case(.bgra555, "BGRA", [5, 5, 5, 1]),
            try yuv16Case(.yuv444, [4, 4, 4, 4]),
            try yuv16Case(.yuv555, [1, 5, 5, 5]),
            try yuv16Case(.yuv565, [0, 5, 6, 5]),
            hsvCase(.hsv24, padded: false),
            hsvCase(.hsv32, padded: true),
        ]
    }

    func testEveryRareFormatGivesItsColoursInARGBAndItsPlanesInI420AndNV12() throws {
        let cases = try Self.cases()
        XCTAssertEqual(cases.map(\.format), PixelFormat.rareFormats, "a case per format of PixelFormatTable+Rare")
        for testCase in cases { try More.assertConverts(testCase) }
    }

    /// The HSV reader against the kernel's own RGB → HSV (v4l2-tpg-core.c `color_to_hsv`) in both
    /// encodings, on vivid's 100% colour bars: within one hue step (8.5 levels of a channel at
    /// full saturation). The kernel rounds a negative hue difference up: magenta comes as 151
    /// (180 steps) and reads back as (255, 0, 247). And every hue there and back, which a
    /// sector in the wrong order fails by tens of steps.
    func testHSVReadsWhatTheKernelWritesInBothEncodings() {
        func kernelHSV(_ r: Int, _ g: Int, _ b: Int, steps: Int) -> (Int, Int, Int) {
            let maximum = max(r, g, b), minimum = min(r, g, b), diff = maximum - minimum
            guard maximum > 0 else { return (0, 0, 0) }
            let s = (255 * diff + maximum / 2) / maximum
            guard s > 0 else { return (0, 0, maximum) }
            let third = steps == 180 ? 60 : 85
            var aux: Int, start: Int
            if maximum == r { (aux, start) = (g - b, 0) } else if maximum == g { (aux, start) = (b - r, third) } else { (aux, start) = (r - g, 2 * third) }
            aux = (aux * (third / 2) + diff / 2) / diff + start
            if steps == 180 { if aux < 0 { aux += 180 } else if aux > 180 { aux -= 180 } } else { aux &= 0xFF }
            return (aux, s, maximum)
        }
        let bars: [RGB] = [(255, 255, 255), (255, 255, 0), (0, 255, 255), (0, 255, 0), (255, 0, 255), (255, 0, 0), (0, 0, 255), (0, 0, 0)]
        for steps in [180, 256] {
            for c in bars {
                let (h, s, v) = kernelHSV(c.r, c.g, c.b, steps: steps)
                let back = ScalarUnpacking.rgb(hue: h, saturation: s, value: v, steps: steps)
                let error = max(abs(Int(back.0) - c.r), abs(Int(back.1) - c.g), abs(Int(back.2) - c.b))
                XCTAssertLessThanOrEqual(error, 9, "\(steps) steps: bar \(c) as HSV \(h), \(s), \(v) reads \(back)")
            }
            for hue in 0..<steps {
                let rgb = ScalarUnpacking.rgb(hue: hue, saturation: 255, value: 255, steps: steps)
                let (h, _, _) = kernelHSV(Int(rgb.0), Int(rgb.1), Int(rgb.2), steps: steps)
                // With 256 steps the kernel skips 213 (thirds of 85, halves of 42): 212 and 213
                // come back as 215.
                XCTAssertLessThanOrEqual(min(abs(h - hue), steps - abs(h - hue)), steps == 256 && (212...213).contains(hue) ? 3 : 1,
                                         "\(steps) steps: hue \(hue) → \(rgb) → \(h)")
            }
        }
        // The two encodings differ: yellow is 30 of 180 but 42 of 256.
        XCTAssertEqual(kernelHSV(255, 255, 0, steps: 256).0, 42)
        let yellow256 = ScalarUnpacking.rgb(hue: 42, saturation: 255, value: 255, steps: 256)
        XCTAssertGreaterThan(Int(yellow256.0), 245, "yellow of 256 steps read with 256 steps")
    }

    /// The frame's `hueSteps` (from `hsv_enc`) decides how its hue reads: 42 is yellow in 256
    /// steps, and 84° (a yellowish green) in 180.
    func testHSVFramesReadTheirHueEncoding() throws {
        let bytes = [UInt8]((0..<(More.width * More.height)).flatMap { _ in [42, 255, 255] as [UInt8] })
        var steps256 = Colorimetry.jpeg
        steps256.hueSteps = 256
        for (colorimetry, red) in [(steps256, 255), (Colorimetry.jpeg, 153)] {
            let image = PaddedImage(tight: bytes, pixelFormat: .hsv24, width: More.width, height: More.height, colorimetry: colorimetry)
            let argb = try More.convert(image, to: .argb)
            XCTAssertEqual(Array(argb.prefix(3)), [0, 255, UInt8(red)], "hue 42 in \(colorimetry.hueSteps ?? 180) steps")
        }
    }

    func testConvertingTheRareFormatsAllocatesNothingPerFrame() throws {
        if let why = AllocationProbe.unavailableReason { throw XCTSkip(why) }
        XCTAssertTrue(AllocationProbe.isActive, "malloc is interposed in the test binary")
        for testCase in try Self.cases() {
            let image = PaddedImage(tight: testCase.bytes, pixelFormat: testCase.format, width: More.width, height: More.height)
            try assertConvertingAllocatesNothing(image, to: [OutputFormat(.argb), OutputFormat(.yu12), OutputFormat(.nv12, rotation: .clockwise90)],
                                                 label: "\(testCase.format)")
        }
    }
}
