import TestSupport
import XCTest
@testable import MediaDevices
@testable import MediaDevicesAudio
@testable import MediaDevicesVideo
@testable import MediaDevicesCore

/// Bayer frames (8-, 10-, 12- and 16-bit, the four orders) made here by hand from four flat colour
/// bars, with padded rows, demosaiced by libv4lconvert: inside each bar (away from the edges,
/// where demosaicing mixes neighbours) ARGB gives the bar's colour; and converting them
/// allocates nothing per frame.
final class BayerConversionTests: XCTestCase {
    static let width = 32, height = 8
    typealias RGB = (r: Int, g: Int, b: Int)
    /// Four bars, 8 pixels wide.
    static let bars: [RGB] = [(255, 0, 0), (0, 255, 0), (0, 0, 255), (0x90, 0x50, 0xD0)]

    /// The four orders by the colours of the first two rows' first two samples.
    static let cases: [(format: PixelFormat, order: String, bits: Int)] = [
        (.sbggr8, "BGGR", 8), (.sgbrg8, "GBRG", 8), (.sgrbg8, "GRBG", 8), (.srggb8, "RGGB", 8),
        (.sbggr10, "BGGR", 10), (.sgbrg10, "GBRG", 10), (.sgrbg10, "GRBG", 10), (.srggb10, "RGGB", 10),
        (.sbggr12, "BGGR", 12), (.sgbrg12, "GBRG", 12), (.sgrbg12, "GRBG", 12), (.srggb12, "RGGB", 12),
        (.sbggr16, "BGGR", 16), (.sgbrg16, "GBRG", 16), (.sgrbg16, "GRBG", 16), (.srggb16, "RGGB", 16),
    ]

    /// The tight bytes of a Bayer image of the bars: each pixel keeps the one channel its place
    /// in the 2x2 pattern says, as 8 bits or as a little-endian 16-bit word of `bits` bits.
    static func bayer(_ order: String, bits: Int) -> [UInt8] {
        let pattern = Array(order)
        var bytes: [UInt8] = []
        for y in 0..<height {
            for x in 0..<width {
                let c = bars[x / 8]
                let channel = pattern[(y % 2) * 2 + x % 2]
                let v = channel == "R" ? c.r : channel == "G" ? c.g : c.b
                if bits == 8 {
                    bytes.append(UInt8(v))
                } else {
                    let word = bits == 16 ? v << 8 | v : v << (bits - 8) | v >> (16 - bits)
                    bytes += [UInt8(word & 0xFF), UInt8(word >> 8)]
                }
            }
        }
        return bytes
    }

    func testEveryBayerOrderAndDepthGivesTheBarsInsideEachBar() throws {
        XCTAssertEqual(Self.cases.count, PixelFormat.bayerFormats.count, "a case per Bayer format")
        var report: [String] = []
        for testCase in Self.cases {
            XCTAssertTrue(FrameConverter.canConvert(testCase.format), "\(testCase.format)")
            let image = PaddedImage(tight: Self.bayer(testCase.order, bits: testCase.bits), pixelFormat: testCase.format,
                                    width: Self.width, height: Self.height)
            let converter = try FrameConverter(output: OutputFormat(.argb))
            let argb = try image.withFrame { frame in try converter.convert(frame) { tightBytes($0) } }
            XCTAssertEqual(argb.count, Self.width * Self.height * 4, "\(testCase.format)")
            guard argb.count == Self.width * Self.height * 4 else { continue }
            var worst = 0
            for y in 2..<(Self.height - 2) {
                for x in 0..<Self.width where x % 8 >= 2 && x % 8 < 6 {
                    let i = (y * Self.width + x) * 4, want = Self.bars[x / 8]
                    worst = max(worst, abs(Int(argb[i + 2]) - want.r), abs(Int(argb[i + 1]) - want.g), abs(Int(argb[i]) - want.b))
                }
            }
            report.append("\(testCase.format.name) \(worst)")
            XCTAssertLessThanOrEqual(worst, 2, "\(testCase.format) → ARGB: colours inside the bars off by \(worst)")
            // The other outputs go through the same RGB24 and libyuv's RGB24 → YUV.
            for target in [PixelFormat.yu12, .nv12] {
                let other = try FrameConverter(output: OutputFormat(target))
                let bytes = try image.withFrame { frame in try other.convert(frame) { tightBytes($0) } }
                XCTAssertEqual(bytes.count, Self.width * Self.height * 3 / 2, "\(testCase.format) → \(target)")
            }
        }
        print("figure: Bayer → ARGB, largest error inside the bars: " + report.joined(separator: ", "))
    }

    func testConvertingBayerAllocatesNothingPerFrame() throws {
        if let why = AllocationProbe.unavailableReason { throw XCTSkip(why) }
        XCTAssertTrue(AllocationProbe.isActive, "malloc is interposed in the test binary")
        for testCase in Self.cases where testCase.order == "GRBG" {
            let image = PaddedImage(tight: Self.bayer(testCase.order, bits: testCase.bits), pixelFormat: testCase.format,
                                    width: Self.width, height: Self.height)
            try assertConvertingAllocatesNothing(image, to: [OutputFormat(.argb), OutputFormat(.nv12, size: Size(width: 16, height: 8))],
                                                 label: "\(testCase.format)")
        }
    }
}
