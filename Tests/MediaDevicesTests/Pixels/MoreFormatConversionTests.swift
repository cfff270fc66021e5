import TestSupport
import XCTest
@testable import MediaDevices
@testable import MediaDevicesAudio
@testable import MediaDevicesVideo
@testable import MediaDevicesCore

/// The formats the pipeline reads since issue 12 (4:2:2 and 4:4:4 planar and semi-planar, packed
/// 32-bit YUV, 16-bit grey, 15/16-bit RGB, the deprecated 32-bit RGB codes), each made here by
/// hand from known colours, byte by byte as the kernel documents the format, with padded rows:
/// converted to ARGB they give those colours, and to I420 and NV12 the planes they were made of.
final class MoreFormatConversionTests: XCTestCase {
    static let width = 16, height = 4
    typealias RGB = (r: Int, g: Int, b: Int)

    /// Four bars, 4 pixels wide: red, green, blue, white, with their BT.601 limited-range YUV.
    static let yuvBars: [(rgb: RGB, y: Int, u: Int, v: Int)] = [
        ((255, 0, 0), 81, 90, 240), ((0, 255, 0), 145, 54, 34), ((0, 0, 255), 41, 240, 110), ((255, 255, 255), 235, 128, 128),
    ]
    /// Four bars for RGB formats: the primaries and a colour with a different value per channel.
    static let rgbBars: [RGB] = [(255, 0, 0), (0, 255, 0), (0, 0, 255), (0x90, 0x50, 0xD0)]
    /// Four grey levels for the grey formats.
    static let greyBars = [30, 100, 180, 250]

    static func bar(_ x: Int) -> Int { x / 4 }

    // MARK: Making the source bytes (tight: planes one after another)

    /// A planar or semi-planar YUV image: the Y plane, then chroma subsampled by
    /// (`horizontal`, `vertical`), as two planes (`interleaved` false) or one of pairs, Cb first
    /// unless `swapped`.
    static func yuvPlanes(horizontal: Int, vertical: Int, interleaved: Bool, swapped: Bool) -> [UInt8] {
        var y: [UInt8] = [], u: [UInt8] = [], v: [UInt8] = [], uv: [UInt8] = []
        for _ in 0..<height {
            for x in 0..<width { y.append(UInt8(yuvBars[bar(x)].y)) }
        }
        for _ in 0..<(height / vertical) {
            for cx in 0..<(width / horizontal) {
                let b = yuvBars[bar(cx * horizontal)]
                u.append(UInt8(b.u)); v.append(UInt8(b.v))
                uv += swapped ? [UInt8(b.v), UInt8(b.u)] : [UInt8(b.u), UInt8(b.v)]
            }
        }
        if interleaved { return y + uv }
        return swapped ? y + v + u : y + u + v
    }

    /// Packed 4:4:4 YUV with Y, Cb, Cr at byte indices `y`, `u`, `v` and 255 in the fourth byte.
    static func yuv32(y: Int, u: Int, v: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        for _ in 0..<height {
            for x in 0..<width {
                let b = yuvBars[bar(x)]
                var pixel: [UInt8] = [255, 255, 255, 255]
                pixel[y] = UInt8(b.y); pixel[u] = UInt8(b.u); pixel[v] = UInt8(b.v)
                bytes += pixel
            }
        }
        return bytes
    }

    /// 16-bit words per pixel, little- or big-endian.
    static func words(bigEndian: Bool = false, _ word: (Int) -> Int) -> [UInt8] {
        var bytes: [UInt8] = []
        for _ in 0..<height {
            for x in 0..<width {
                let w = word(bar(x))
                bytes += bigEndian ? [UInt8(w >> 8), UInt8(w & 0xFF)] : [UInt8(w & 0xFF), UInt8(w >> 8)]
            }
        }
        return bytes
    }

    /// 32-bit RGB with the channels in the byte order `order` ("ARGB": bytes A, R, G, B).
    static func rgb32(_ order: String) -> [UInt8] {
        var bytes: [UInt8] = []
        for _ in 0..<height {
            for x in 0..<width {
                let c = rgbBars[bar(x)]
                for channel in order { bytes.append(UInt8(channel == "R" ? c.r : channel == "G" ? c.g : channel == "B" ? c.b : 255)) }
            }
        }
        return bytes
    }

    /// A 16-bit RGB word with fields (most significant first) of `bits` bits for the channels
    /// named in `order` ("ARGB" with [1, 5, 5, 5] is ARGB1555; "X" fields are 0, "A" all ones).
    static func rgbWord(_ c: RGB, _ order: String, _ bits: [Int]) -> Int {
        var word = 0
        for (channel, n) in zip(order, bits) {
            let value = channel == "R" ? c.r : channel == "G" ? c.g : channel == "B" ? c.b : channel == "A" ? 255 : 0
            word = word << n | value >> (8 - n)
        }
        return word
    }

    /// What `value` reads as after keeping `n` bits of it and widening back to 8 by bit
    /// replication, as libyuv widens.
    static func widened(_ value: Int, _ n: Int) -> Int {
        let kept = value >> (8 - n)
        var out = kept << (8 - n)
        var shift = 8 - 2 * n
        while shift > -n { out |= shift >= 0 ? kept << shift : kept >> -shift; shift -= n }
        return out
    }

    // MARK: The cases

    struct Case: Sendable {
        let format: PixelFormat
        let bytes: [UInt8]
        /// The colour expected in ARGB for bar `index`, and the largest difference allowed.
        let expected: @Sendable (Int) -> RGB
        let tolerance: Int
        /// The I420 planes expected (tight), or nil to compare with the expected ARGB converted.
        let i420: [UInt8]?
    }

    static func yuvCase(_ format: PixelFormat, _ bytes: [UInt8]) -> Case {
        Case(format: format, bytes: bytes, expected: { yuvBars[$0].rgb }, tolerance: 6,
             i420: yuvPlanes(horizontal: 2, vertical: 2, interleaved: false, swapped: false))
    }

    static func greyCase(_ format: PixelFormat, bigEndian: Bool = false, _ sample: @escaping @Sendable (Int) -> Int) -> Case {
        let y = (0..<height).flatMap { _ in (0..<width).map { UInt8(greyBars[bar($0)]) } }
        return Case(format: format, bytes: words(bigEndian: bigEndian) { sample(greyBars[$0]) },
                    expected: { (greyBars[$0], greyBars[$0], greyBars[$0]) }, tolerance: 0,
                    i420: y + [UInt8](repeating: 128, count: 2 * (width / 2) * (height / 2)))
    }

    /// A 16-bit RGB case: `order` and `bits` as `rgbWord` takes them.
    static func rgb16Case(_ format: PixelFormat, _ order: String, _ bits: [Int], bigEndian: Bool = false) -> Case {
        let n = Dictionary(uniqueKeysWithValues: zip(order, bits))
        return Case(format: format, bytes: words(bigEndian: bigEndian) { rgbWord(rgbBars[$0], order, bits) },
                    expected: { let c = rgbBars[$0]; return (widened(c.r, n["R"]!), widened(c.g, n["G"]!), widened(c.b, n["B"]!)) },
                    tolerance: 0, i420: nil)
    }

    static let cases: [Case] = [
        yuvCase(.yuv422p, yuvPlanes(horizontal: 2, vertical: 1, interleaved: false, swapped: false)),
        yuvCase(.yuv422m, yuvPlanes(horizontal: 2, vertical: 1, interleaved: false, swapped: false)),
        yuvCase(.yvu422m, yuvPlanes(horizontal: 2, vertical: 1, interleaved: false, swapped: true)),
        yuvCase(.yuv444m, yuvPlanes(horizontal: 1, vertical: 1, interleaved: false, swapped: false)),
        yuvCase(.yvu444m, yuvPlanes(horizontal: 1, vertical: 1, interleaved: false, swapped: true)),
        yuvCase(.yvu420m, yuvPlanes(horizontal: 2, vertical: 2, interleaved: false, swapped: true)),
        yuvCase(.nv16m, yuvPlanes(horizontal: 2, vertical: 1, interleaved: true, swapped: false)),
        yuvCase(.nv61m, yuvPlanes(horizontal: 2, vertical: 1, interleaved: true, swapped: true)),
        yuvCase(.nv24, yuvPlanes(horizontal: 1, vertical: 1, interleaved: true, swapped: false)),
        yuvCase(.nv42, yuvPlanes(horizontal: 1, vertical: 1, interleaved: true, swapped: true)),
        yuvCase(.yuv32, yuv32(y: 1, u: 2, v: 3)),
        yuvCase(.ayuv32, yuv32(y: 1, u: 2, v: 3)),
        yuvCase(.xyuv32, yuv32(y: 1, u: 2, v: 3)),
        yuvCase(.vuya32, yuv32(y: 2, u: 1, v: 0)),
        yuvCase(.vuyx32, yuv32(y: 2, u: 1, v: 0)),
        yuvCase(.yuva32, yuv32(y: 0, u: 1, v: 2)),
        yuvCase(.yuvx32, yuv32(y: 0, u: 1, v: 2)),
        greyCase(.y10) { $0 << 2 | $0 >> 6 },
        greyCase(.y12) { $0 << 4 | $0 >> 4 },
        greyCase(.y16) { $0 << 8 | $0 },
        greyCase(.y16BigEndian, bigEndian: true) { $0 << 8 | $0 },
        Case(format: .rgb32, bytes: rgb32("ARGB"), expected: { rgbBars[$0] }, tolerance: 0, i420: nil),
        Case(format: .bgr32, bytes: rgb32("BGRA"), expected: { rgbBars[$0] }, tolerance: 0, i420: nil),
        rgb16Case(.rgb555, "XRGB", [1, 5, 5, 5]),
        rgb16Case(.xrgb555, "XRGB", [1, 5, 5, 5]),
        rgb16Case(.argb555, "ARGB", [1, 5, 5, 5]),
        rgb16Case(.xbgr555, "XBGR", [1, 5, 5, 5]),
        rgb16Case(.abgr555, "ABGR", [1, 5, 5, 5]),
        rgb16Case(.rgb555BigEndian, "XRGB", [1, 5, 5, 5], bigEndian: true),
        rgb16Case(.xrgb555BigEndian, "XRGB", [1, 5, 5, 5], bigEndian: true),
        rgb16Case(.argb555BigEndian, "ARGB", [1, 5, 5, 5], bigEndian: true),
        rgb16Case(.rgb565BigEndian, "RGB", [5, 6, 5], bigEndian: true),
        rgb16Case(.rgb444, "XRGB", [4, 4, 4, 4]),
        rgb16Case(.xrgb444, "XRGB", [4, 4, 4, 4]),
        rgb16Case(.argb444, "ARGB", [4, 4, 4, 4]),
        rgb16Case(.rgbx444, "RGBX", [4, 4, 4, 4]),
        rgb16Case(.rgba444, "RGBA", [4, 4, 4, 4]),
        rgb16Case(.xbgr444, "XBGR", [4, 4, 4, 4]),
        rgb16Case(.abgr444, "ABGR", [4, 4, 4, 4]),
        rgb16Case(.bgrx444, "BGRX", [4, 4, 4, 4]),
        rgb16Case(.bgra444, "BGRA", [4, 4, 4, 4]),
    ]

    static func convert(_ image: PaddedImage, to target: PixelFormat) throws -> [UInt8] {
        let converter = try FrameConverter(output: OutputFormat(target))
        return try image.withFrame { frame in try converter.convert(frame) { tightBytes($0) } }
    }

    /// The largest difference between two byte arrays of the same length.
    static func largestDifference(_ a: [UInt8], _ b: [UInt8]) -> Int {
        zip(a, b).map { abs(Int($0) - Int($1)) }.max() ?? 0
    }

    func testEveryNewFormatGivesItsColoursInARGBAndItsPlanesInI420AndNV12() throws {
        XCTAssertEqual(Self.cases.count, PixelFormat.moreFormats.count, "a case per format of PixelFormatTable+More")
        for testCase in Self.cases { try Self.assertConverts(testCase) }
    }

    /// `testCase` converted to ARGB gives its colours, and to I420 and NV12 its planes (or, for
    /// RGB, libyuv's conversion of its colours).
    static func assertConverts(_ testCase: Case) throws {
        let format = testCase.format
        XCTAssertTrue(FrameConverter.canConvert(format), "\(format)")
        let image = PaddedImage(tight: testCase.bytes, pixelFormat: format, width: Self.width, height: Self.height)
        let argb = try convert(image, to: .argb)
        XCTAssertEqual(argb.count, Self.width * Self.height * 4, "\(format)")
        guard argb.count == Self.width * Self.height * 4 else { return }
        var worst = 0
        for row in 0..<Self.height {
            for x in 0..<Self.width {
                let i = (row * Self.width + x) * 4
                let want = testCase.expected(Self.bar(x))
                worst = max(worst, abs(Int(argb[i + 2]) - want.r), abs(Int(argb[i + 1]) - want.g), abs(Int(argb[i]) - want.b))
            }
        }
        XCTAssertLessThanOrEqual(worst, testCase.tolerance, "\(format) → ARGB: colours off by \(worst)")

        // I420: the planes the image was made of (YUV, grey), or the expected colours' own
        // conversion (RGB: libyuv's RGB → YUV, which the existing formats already test).
        let i420 = try convert(image, to: .yu12)
        let wantI420: [UInt8]
        if let planes = testCase.i420 {
            wantI420 = planes
        } else {
            var bgra: [UInt8] = []
            for _ in 0..<Self.height {
                for x in 0..<Self.width {
                    let c = testCase.expected(Self.bar(x))
                    bgra += [UInt8(c.b), UInt8(c.g), UInt8(c.r), 255]
                }
            }
            wantI420 = try convert(PaddedImage(tight: bgra, pixelFormat: .abgr32, width: Self.width, height: Self.height), to: .yu12)
        }
        XCTAssertEqual(i420.count, wantI420.count, "\(format) → I420 size")
        let i420Error = largestDifference(i420, wantI420)
        XCTAssertLessThanOrEqual(i420Error, testCase.i420 == nil ? 2 : 0, "\(format) → I420: off by \(i420Error)")

        // NV12: the same samples with the chroma interleaved.
        let nv12 = try convert(image, to: .nv12)
        let luma = Self.width * Self.height, chroma = luma / 4
        var wantNV12 = Array(wantI420[0..<luma])
        for i in 0..<chroma { wantNV12 += [wantI420[luma + i], wantI420[luma + chroma + i]] }
        XCTAssertEqual(nv12.count, wantNV12.count, "\(format) → NV12 size")
        let nv12Error = largestDifference(nv12, wantNV12)
        XCTAssertLessThanOrEqual(nv12Error, testCase.i420 == nil ? 2 : 0, "\(format) → NV12: off by \(nv12Error)")
    }

    /// A crop of a 4:4:4 semi-planar and a packed 32-bit YUV image starts where it says: the
    /// chroma plane moves by two bytes a pixel, the packed plane by four.
    func testCroppedNewFormatsStartAtTheCrop() throws {
        for (format, bytes) in [(PixelFormat.nv24, Self.yuvPlanes(horizontal: 1, vertical: 1, interleaved: true, swapped: false)),
                                (.vuya32, Self.yuv32(y: 2, u: 1, v: 0)), (.xrgb555, Self.words { Self.rgbWord(Self.rgbBars[$0], "XRGB", [1, 5, 5, 5]) })] {
            let image = PaddedImage(tight: bytes, pixelFormat: format, width: Self.width, height: Self.height)
            let converter = try FrameConverter(output: OutputFormat(.argb, crop: Rect(x: 4, y: 0, width: 8, height: 4)))
            let argb = try image.withFrame { frame in try converter.convert(frame) { tightBytes($0) } }
            XCTAssertEqual(argb.count, 8 * 4 * 4, "\(format)")
            guard argb.count == 8 * 4 * 4 else { continue }
            // Pixel 0 is bar 1 (green), pixel 4 bar 2 (blue).
            XCTAssertGreaterThan(argb[1], 240, "\(format): the crop starts on the green bar")
            XCTAssertLessThan(argb[2], 10, "\(format): the crop starts on the green bar")
            XCTAssertGreaterThan(argb[16], 240, "\(format): pixel 4 is blue")
            XCTAssertLessThan(argb[18], 10, "\(format): pixel 4 is blue")
        }
    }

    /// Converting frames of every new format allocates nothing after the first frames (the
    /// scratch buffers grow once): to ARGB, to I420, and to NV12 turned a quarter (through the
    /// working format).
    func testConvertingTheNewFormatsAllocatesNothingPerFrame() throws {
        if let why = AllocationProbe.unavailableReason { throw XCTSkip(why) }
        XCTAssertTrue(AllocationProbe.isActive, "malloc is interposed in the test binary")
        for testCase in Self.cases {
            let image = PaddedImage(tight: testCase.bytes, pixelFormat: testCase.format, width: Self.width, height: Self.height)
            try assertConvertingAllocatesNothing(image, to: [OutputFormat(.argb), OutputFormat(.yu12), OutputFormat(.nv12, rotation: .clockwise90)],
                                                 label: "\(testCase.format)")
        }
    }

    /// The older packed RGB formats to I420 and NV12 allocate nothing per frame either: libyuv's
    /// RAWToI420, RGB24ToI420 and RGB565ToI420 malloc a row buffer per call, so the pipeline
    /// widens to ARGB first (this test fails without it).
    func testPackedRGBToYUVAllocatesNothingPerFrame() throws {
        if let why = AllocationProbe.unavailableReason { throw XCTSkip(why) }
        for format in [PixelFormat.rgb24, .bgr24, .rgb565] {
            let bytes = [UInt8](repeating: 0x5A, count: Self.width * Self.height * format.layout!.bytesPerPixel)
            let image = PaddedImage(tight: bytes, pixelFormat: format, width: Self.width, height: Self.height)
            try assertConvertingAllocatesNothing(image, to: [OutputFormat(.yu12), OutputFormat(.nv12)], label: "\(format)")
        }
    }
}
