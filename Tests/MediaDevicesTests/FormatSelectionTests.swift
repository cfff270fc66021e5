import XCTest
@testable import MediaDevices
@testable import MediaDevicesAudio
@testable import MediaDevicesVideo
@testable import MediaDevicesCore

final class FormatSelectionTests: XCTestCase {
    private func rates(_ values: Int...) -> [FrameRateRange] {
        values.map { FrameRateRange(discrete: FrameRate($0)) }
    }

    private func format(_ pixelFormat: PixelFormat, _ sizes: [Size], rates: [FrameRateRange]) -> CaptureFormat {
        CaptureFormat(pixelFormat: pixelFormat, description: pixelFormat.name, isCompressed: pixelFormat.isCompressed,
                      isEmulated: false,
                      frameSizes: sizes.map { FrameSizeOption(sizes: .discrete($0), frameRateRanges: rates) })
    }

    private var webcam: [CaptureFormat] {
        [
            format(.mjpeg, [.hd1080, .hd720, .vga], rates: rates(60, 30, 15)),
            format(.yuyv, [.vga, Size(width: 320, height: 240)], rates: rates(60, 30, 15)),
        ]
    }

    private func choose(_ request: FormatRequest, _ formats: [CaptureFormat]? = nil) throws -> FormatChoice {
        try FormatSelection.choose(request, from: formats ?? webcam, device: "/dev/video9")
    }

    // MARK: rates

    func testExactRateIsChosenWhenOffered() throws {
        let choice = try choose(FormatRequest(pixelFormat: .yuyv, size: .vga, frameRate: FrameRate(30)))
        XCTAssertEqual(choice.frameRate, FrameRate(30))
        XCTAssertTrue(choice.adjustments.isEmpty, "\(choice.adjustments)")
    }

    func testBestRateBelowRequest() throws {
        let choice = try choose(FormatRequest(pixelFormat: .yuyv, size: .vga, frameRate: FrameRate(29)))
        XCTAssertEqual(choice.frameRate, FrameRate(15))
        XCTAssertEqual(choice.adjustments.map(\.field), [.frameRate])
    }

    func testRateAboveEverythingGetsHighest() throws {
        let choice = try choose(FormatRequest(pixelFormat: .yuyv, size: .vga, frameRate: FrameRate(100)))
        XCTAssertEqual(choice.frameRate, FrameRate(60))
        XCTAssertEqual(choice.adjustments.map(\.field), [.frameRate])
    }

    func testRateBelowEverythingGetsLowest() throws {
        let choice = try choose(FormatRequest(pixelFormat: .yuyv, size: .vga, frameRate: FrameRate(10)))
        XCTAssertEqual(choice.frameRate, FrameRate(15))
        XCTAssertEqual(choice.adjustments.count, 1)
        XCTAssertEqual(choice.adjustments.first?.field, .frameRate)
        XCTAssertEqual(choice.adjustments.first?.chosen, "15 fps")
    }

    func testNoRateRequestedGetsHighest() throws {
        let choice = try choose(FormatRequest(pixelFormat: .yuyv, size: .vga))
        XCTAssertEqual(choice.frameRate, FrameRate(60))
        XCTAssertTrue(choice.adjustments.isEmpty)
    }

    func testNTSCRateAgainstWholeRates() throws {
        let choice = try choose(FormatRequest(pixelFormat: .yuyv, size: .vga, frameRate: FrameRate(Fraction(30000, 1001))))
        XCTAssertEqual(choice.frameRate, FrameRate(15))  // 30 > 29.97, so not at or below
    }

    func testNoRatesListed() throws {
        let formats = [format(.yuyv, [.vga], rates: [])]
        XCTAssertNil(try choose(FormatRequest(pixelFormat: .yuyv, size: .vga, frameRate: FrameRate(30)), formats).frameRate)
    }

    // MARK: pixel formats

    func testRawPreferredOverMJPEG() throws {
        let choice = try choose(FormatRequest(size: .vga))
        XCTAssertEqual(choice.pixelFormat, .yuyv)
        XCTAssertEqual(choice.size, .vga)
        XCTAssertEqual(choice.adjustments.first?.field, .pixelFormat)
        XCTAssertEqual(choice.adjustments.first?.chosen, "YUYV")
    }

    func testDefaultRequestIsRawVGAAtHighestRate() throws {
        let choice = try choose(FormatRequest())
        XCTAssertEqual(choice.pixelFormat, .yuyv)
        XCTAssertEqual(choice.size, Size(width: 640, height: 480))
        XCTAssertEqual(choice.frameRate, FrameRate(60))
    }

    func testMJPEGChosenWhenOnlyItOffersTheSize() throws {
        let choice = try choose(FormatRequest(size: .hd1080))
        XCTAssertEqual(choice.pixelFormat, .mjpeg)
        XCTAssertEqual(choice.size, Size(width: 1920, height: 1080))
        XCTAssertFalse(choice.adjustments.contains { $0.field == .size })
    }

    func testUnknownFormatsComeAfterKnownRawOnes() throws {
        let formats = [format(PixelFormat(v4l2: "ABCD"), [.vga], rates: rates(30)), format(.nv12, [.vga], rates: rates(30))]
        XCTAssertEqual(try choose(FormatRequest(), formats).pixelFormat, .nv12)
    }

    func testRequestedFormatIsHonoured() throws {
        let choice = try choose(FormatRequest(pixelFormat: .mjpeg, size: .vga))
        XCTAssertEqual(choice.pixelFormat, .mjpeg)
        XCTAssertFalse(choice.adjustments.contains { $0.field == .pixelFormat })
    }

    func testUnofferedFormatThrowsListingOffered() {
        XCTAssertThrowsError(try choose(FormatRequest(pixelFormat: .nv12, size: .vga))) { error in
            guard let error = error as? MediaDevicesError else { return XCTFail("\(error)") }
            XCTAssertEqual(error.code, .unsupportedFormat)
            XCTAssertEqual(error.device, "/dev/video9")
            XCTAssertTrue(error.description.contains("NV12"), error.description)
            XCTAssertTrue(error.description.contains("MJPEG"), error.description)
            XCTAssertTrue(error.description.contains("YUYV"), error.description)
        }
    }

    func testEmptyTableThrows() {
        XCTAssertThrowsError(try choose(FormatRequest(), [])) { error in
            XCTAssertEqual((error as? MediaDevicesError)?.code, .unsupportedFormat)
        }
    }

    // MARK: sizes

    func testUnofferedSizeGetsNearest() throws {
        let formats = [format(.yuyv, [Size(width: 320, height: 240), .vga, .hd720], rates: rates(30))]
        // 800x600 = 480000 px: |307200 - 480000| = 172800 beats 320x240 (403200) and 1280x720 (441600).
        let choice = try choose(FormatRequest(pixelFormat: .yuyv, size: Size(width: 800, height: 600)), formats)
        XCTAssertEqual(choice.size, Size(width: 640, height: 480))
        let adjustment = try XCTUnwrap(choice.adjustments.first { $0.field == .size })
        XCTAssertEqual(adjustment.requested, "800x600")
        XCTAssertEqual(adjustment.chosen, "640x480")
    }

    func testStepwiseSizeSnapsToGrid() throws {
        let formats = [CaptureFormat(pixelFormat: .yuyv, description: "YUYV", isCompressed: false, isEmulated: false,
                                     frameSizes: [FrameSizeOption(sizes: .stepwise(min: Size(width: 16, height: 16),
                                                                                   max: Size(width: 1920, height: 1080),
                                                                                   step: Size(width: 8, height: 8)),
                                                                  frameRateRanges: rates(30))])]
        // Offered on the grid: exact.
        let exact = try choose(FormatRequest(size: Size(width: 1280, height: 720)), formats)
        XCTAssertEqual(exact.size, Size(width: 1280, height: 720))
        XCTAssertFalse(exact.adjustments.contains { $0.field == .size })
        // 642 = 16 + 78.25 * 8 -> 640; 481 = 16 + 58.125 * 8 -> 480.
        let snapped = try choose(FormatRequest(size: Size(width: 642, height: 481)), formats)
        XCTAssertEqual(snapped.size, Size(width: 640, height: 480))
        XCTAssertTrue(snapped.adjustments.contains { $0.field == .size })
        // Larger than the maximum: clamped.
        let clamped = try choose(FormatRequest(size: Size(width: 4000, height: 3000)), formats)
        XCTAssertEqual(clamped.size, Size(width: 1920, height: 1080))
        // Smaller than the minimum.
        let small = try choose(FormatRequest(size: Size(width: 2, height: 2)), formats)
        XCTAssertEqual(small.size, Size(width: 16, height: 16))
    }

    /// When the maximum is not on the min + k * step grid, snapping must not return the maximum
    /// itself, which the range does not contain.
    func testStepwiseSnapStaysOnGridWhenMaxIsOffGrid() throws {
        let range = FrameSizeRange.stepwise(min: Size(width: 16, height: 16), max: Size(width: 1000, height: 1000),
                                            step: Size(width: 16, height: 16))
        let formats = [CaptureFormat(pixelFormat: .yuyv, description: "YUYV", isCompressed: false, isEmulated: false,
                                     frameSizes: [FrameSizeOption(sizes: range, frameRateRanges: rates(30))])]
        // 1200 clamps to 1000; 16 + round(984 / 16) * 16 = 1008 > 1000, but the last size on the grid is 992.
        let choice = try choose(FormatRequest(size: Size(width: 1200, height: 1200)), formats)
        XCTAssertTrue(range.contains(choice.size), "chose \(choice.size), which \(range) does not contain")
        XCTAssertEqual(choice.size, Size(width: 992, height: 992))
    }

    func testContinuousSizeIsClamped() throws {
        let range = FrameSizeRange.continuous(min: Size(width: 64, height: 64), max: Size(width: 1024, height: 768))
        let formats = [CaptureFormat(pixelFormat: .nv12, description: "NV12", isCompressed: false, isEmulated: false,
                                     frameSizes: [FrameSizeOption(sizes: range, frameRateRanges: rates(30))])]
        XCTAssertEqual(try choose(FormatRequest(size: Size(width: 333, height: 222)), formats).size, Size(width: 333, height: 222))
        XCTAssertEqual(try choose(FormatRequest(size: Size(width: 2000, height: 10)), formats).size, Size(width: 1024, height: 64))
    }

    func testRateComesFromTheChosenSize() throws {
        let formats = [CaptureFormat(pixelFormat: .yuyv, description: "YUYV", isCompressed: false, isEmulated: false,
                                     frameSizes: [FrameSizeOption(sizes: .discrete(.hd720), frameRateRanges: rates(10)),
                                                  FrameSizeOption(sizes: .discrete(.vga), frameRateRanges: rates(30, 25))])]
        XCTAssertEqual(try choose(FormatRequest(size: .hd720), formats).frameRate, FrameRate(10))
        XCTAssertEqual(try choose(FormatRequest(size: .vga, frameRate: FrameRate(29)), formats).frameRate, FrameRate(25))
    }

    func testFrameSizeRangeContains() {
        let stepwise = FrameSizeRange.stepwise(min: Size(width: 16, height: 16), max: Size(width: 64, height: 64),
                                               step: Size(width: 16, height: 8))
        XCTAssertTrue(stepwise.contains(Size(width: 48, height: 24)))
        XCTAssertFalse(stepwise.contains(Size(width: 40, height: 24)))
        XCTAssertFalse(stepwise.contains(Size(width: 80, height: 24)))
        XCTAssertTrue(FrameSizeRange.discrete(.vga).contains(Size(width: 640, height: 480)))
        XCTAssertFalse(FrameSizeRange.discrete(.vga).contains(Size(width: 640, height: 360)))
        XCTAssertEqual(stepwise.maxSize, Size(width: 64, height: 64))
    }

    func testSizeParsing() {
        XCTAssertEqual(Size(parsing: "1280x720"), Size(width: 1280, height: 720))
        XCTAssertEqual(Size(parsing: "640X480"), Size(width: 640, height: 480))
        XCTAssertNil(Size(parsing: "640"))
        XCTAssertNil(Size(parsing: "0x480"))
    }
}
