import CTurboJPEG
import XCTest
@testable import MediaDevices
@testable import MediaDevicesAudio
@testable import MediaDevicesVideo
@testable import MediaDevicesCore

/// Every crash the libFuzzer harnesses (Fuzz/, scripts/fuzz.sh) found, as a test: each input here
/// trapped (overflow, division by zero) or allocated gigabytes before its fix.
final class FuzzRegressionTests: XCTestCase {
    // MARK: fuzz-parsing

    /// "28888888888838888.888": whole * 10^digits overflowed Int in FrameRate(parsing:).
    func testFrameRateWithTooManyDigitsIsNotARate() {
        XCTAssertNil(FrameRate(parsing: "28888888888838888.888"))
        XCTAssertNil(FrameRate(parsing: "9223372036854775807.9"))
        XCTAssertEqual(FrameRate(parsing: "29.97"), FrameRate(Fraction(2997, 100)))
    }

    /// ".=\t\t\t\u{345}+Y": the value starts with a combining mark, which joined the "=" of the
    /// setting's own description into one Character, so the description did not parse back.
    func testControlSettingRoundTripsAValueStartingWithACombiningMark() throws {
        let setting = try XCTUnwrap(ControlSetting(parsing: ".=\t\t\t\u{345}+Y\u{7}\tp"))
        XCTAssertEqual(ControlSetting(parsing: setting.description), setting)
        XCTAssertEqual(ControlSetting(parsing: "x=\u{301}1"), ControlSetting(name: "x", text: "\u{301}1"))
    }

    // MARK: fuzz-format

    /// A driver may report u32 x u32 sizes: Size.area overflowed in FormatSelection's ranking.
    func testHugeSizesDoNotOverflowTheSelection() throws {
        let huge = Size(width: 4_294_967_295, height: 4_294_967_295)
        XCTAssertEqual(huge.area, Int.max)
        XCTAssertTrue(Size.vga.area < huge.area)
        let formats = [
            CaptureFormat(pixelFormat: .yuyv, description: "YUYV", isCompressed: false, isEmulated: false,
                          frameSizes: [FrameSizeOption(sizes: .continuous(min: Size(width: 1, height: 1), max: huge),
                                                       frameRateRanges: [FrameRateRange(discrete: FrameRate(30))]),
                                       FrameSizeOption(sizes: .discrete(huge), frameRateRanges: [FrameRateRange(discrete: FrameRate(30))])]),
            CaptureFormat(pixelFormat: .mjpeg, description: "MJPEG", isCompressed: true, isEmulated: false,
                          frameSizes: [FrameSizeOption(sizes: .stepwise(min: Size(width: 65_536, height: 65_536), max: huge, step: Size(width: 1, height: 1)),
                                                       frameRateRanges: [FrameRateRange(discrete: FrameRate(30))])]),
        ]
        for preference in FormatPreference.allCases {
            for size in [huge, Size.vga, Size(width: 3_000_000_000, height: 1)] {
                _ = try FormatSelection.choose(FormatRequest(size: size, preference: preference), from: formats, device: "fuzz")
            }
        }
    }

    /// Stepwise frame intervals with u32 numerators and denominators overflowed Int products in
    /// FrameRateRange.bestRate and contains; a zero denominator divided by zero.
    func testStepwiseRatesWithHugeOrZeroFractionsDoNotTrap() {
        let big = 4_294_967_295
        let ranges = [
            FrameRateRange(minInterval: Fraction(1, big), maxInterval: Fraction(big, 1), step: Fraction(1, big - 4)),
            FrameRateRange(minInterval: Fraction(1, big - 2), maxInterval: Fraction(big, 3), step: Fraction(big - 6, big - 8)),
            FrameRateRange(minInterval: Fraction(0, 1), maxInterval: Fraction(1, 1), step: Fraction(1, 30)),
            FrameRateRange(minInterval: Fraction(1, 60), maxInterval: Fraction(1, 1), step: Fraction(1, 0)),
        ]
        for range in ranges {
            for rate in [FrameRate(30), FrameRate(Fraction(30000, 1001)), FrameRate(Fraction(big, big - 1)), FrameRate(Fraction(1, big))] {
                if let best = range.bestRate(atOrBelow: rate) { XCTAssertLessThanOrEqual(best, max(rate, range.minFrameRate)) }
                _ = range.contains(rate)
            }
        }
        // The ordinary grid still works: 1/60 .. 1 s in 1/60 steps, at or below 25 fps is 20 fps.
        let grid = FrameRateRange(minInterval: Fraction(1, 60), maxInterval: Fraction(1, 1), step: Fraction(1, 60))
        XCTAssertEqual(grid.bestRate(atOrBelow: FrameRate(25)), FrameRate(20))
        XCTAssertTrue(grid.contains(FrameRate(30)))
        XCTAssertFalse(grid.contains(FrameRate(Fraction(30000, 1001))))
    }

    // MARK: fuzz-jpeg

    /// A 700-byte MJPEG frame whose header claims a huge size made the converter allocate over a
    /// gigabyte (and keep it). Larger than the stream is now a corrupt frame; the right size decodes.
    func testJPEGHeaderLargerThanTheStreamIsACorruptFrame() throws {
        var jpeg = try Self.jpeg(width: 32, height: 24)
        let converter = try FrameConverter(output: OutputFormat(.yu12))
        XCTAssertEqual(try Self.convert(jpeg, streamWidth: 32, streamHeight: 24, converter), Size(width: 32, height: 24))
        let sof = try XCTUnwrap(jpeg.indices.dropLast(9).first { jpeg[$0] == 0xFF && jpeg[$0 + 1] == 0xC0 })
        jpeg[sof + 5] = 0xEA; jpeg[sof + 6] = 0x60   // height 60000
        jpeg[sof + 7] = 0xEA; jpeg[sof + 8] = 0x60   // width 60000
        XCTAssertThrowsError(try Self.convert(jpeg, streamWidth: 32, streamHeight: 24, converter)) { error in
            XCTAssertEqual((error as? MediaDevicesError)?.code, .corruptFrame, "\(error)")
        }
    }

    static func jpeg(width: Int, height: Int) throws -> [UInt8] {
        let handle = try XCTUnwrap(tjInitCompress())
        defer { tjDestroy(handle) }
        let rgb = (0..<(width * height * 3)).map { UInt8(truncatingIfNeeded: $0 * 7) }
        var buffer: UnsafeMutablePointer<UInt8>?
        var size: UInt = 0
        let status = tjCompress2(handle, rgb, Int32(width), 0, Int32(height), Int32(TJPF_RGB.rawValue), &buffer, &size,
                                 Int32(TJSAMP_420.rawValue), 80, 0)
        defer { tjFree(buffer) }
        XCTAssertEqual(status, 0)
        return Array(UnsafeBufferPointer(start: try XCTUnwrap(buffer), count: Int(size)))
    }

    static func convert(_ jpeg: [UInt8], streamWidth: Int, streamHeight: Int, _ converter: FrameConverter) throws -> Size {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: jpeg.count + 64, alignment: 64)
        defer { buffer.deallocate() }
        buffer.initializeMemory(as: UInt8.self, repeating: 0)
        buffer.copyBytes(from: jpeg)
        let format = VideoFormat(pixelFormat: .mjpeg, width: streamWidth, height: streamHeight, bytesPerRow: [0], bufferSizes: [buffer.count])
        let frame = VideoFrame(format: format, timestamp: MonotonicInstant(nanoseconds: 1), sequence: 1, orientation: .up, captureDelay: .zero,
                               planeCount: 1, bytesUsed: jpeg.count, plane0: FramePlane(bytes: UnsafeRawBufferPointer(buffer), bytesPerRow: 0))
        return try converter.convert(frame) { $0.format.size }
    }
}
