import XCTest
@testable import MediaDevices
@testable import MediaDevicesAudio
@testable import MediaDevicesVideo
@testable import MediaDevicesCore

/// Device-format choice by `FormatPreference`, over a capability table shaped like a real UVC
/// webcam: YUYV at full rate only up to 640x480, MJPEG at full rate up to 1080p, NV12 and RGB3
/// (from an ISP) at 720p.
final class FormatPreferenceTests: XCTestCase {
    private func option(_ size: Size, _ rates: Int...) -> FrameSizeOption {
        FrameSizeOption(sizes: .discrete(size), frameRateRanges: rates.map { FrameRateRange(discrete: FrameRate($0)) })
    }

    private func format(_ pixelFormat: PixelFormat, _ options: [FrameSizeOption]) -> CaptureFormat {
        CaptureFormat(pixelFormat: pixelFormat, description: pixelFormat.name, isCompressed: pixelFormat.isCompressed,
                      isEmulated: false, frameSizes: options)
    }

    private var webcam: [CaptureFormat] {
        [
            format(.yuyv, [option(.vga, 30, 15), option(.hd720, 10, 5)]),
            format(.mjpeg, [option(.vga, 30), option(.hd720, 30, 15), option(.hd1080, 30)]),
            format(.nv12, [option(.hd720, 15)]),
            format(.rgb24, [option(.hd720, 10)]),
        ]
    }

    private func choose(_ preference: FormatPreference, size: Size, rate: Int? = nil) throws -> FormatChoice {
        try FormatSelection.choose(FormatRequest(size: size, frameRate: rate.map { FrameRate($0) }, preference: preference),
                                   from: webcam, device: "/dev/video9")
    }

    func testAutomaticTakesRawWhenRawGivesSizeAndRate() throws {
        let choice = try choose(.automatic, size: .vga, rate: 30)
        XCTAssertEqual(choice.pixelFormat, .yuyv)
        XCTAssertEqual(choice.frameRate, FrameRate(30))
        XCTAssertTrue(choice.adjustments[0].reason.contains("first raw format"), choice.adjustments[0].reason)
    }

    func testAutomaticTakesMJPEGOnlyWhenNoRawFormatReachesTheRate() throws {
        let choice = try choose(.automatic, size: .hd720, rate: 30)
        XCTAssertEqual(choice.pixelFormat, .mjpeg)
        XCTAssertEqual(choice.frameRate, FrameRate(30))
        let reason = choice.adjustments.first { $0.field == .pixelFormat }!.reason
        XCTAssertTrue(reason.contains("no raw format gives 1280x720 at 30 fps") && reason.contains("YUYV at most 10 fps"), reason)
    }

    func testAutomaticWithoutRateWantsThirtyWhereOffered() throws {
        XCTAssertEqual(try choose(.automatic, size: .hd720).pixelFormat, .mjpeg)
        XCTAssertEqual(try choose(.automatic, size: .hd720, rate: 15).pixelFormat, .nv12, "NV12 reaches 15 fps at 720p")
    }

    /// A 16-bit packed 4:4:4 pixel has 4 to 6 bits a component: below 8-bit 4:4:4, 4:2:2 and 4:2:0.
    func testBestQualityRanksFewerBitsAComponentBelowEightBitFormats() throws {
        let vga = [option(.vga, 30)]
        for reduced in [PixelFormat.yuv444, .yuv555, .yuv565, .rgb565, .rgb555, .rgb444] {
            for full in [PixelFormat.xyuv32, .yuv444m, .rgb24, .yuyv, .nv12] {
                for offers in [[format(reduced, vga), format(full, vga)], [format(full, vga), format(reduced, vga)]] {
                    let choice = try FormatSelection.choose(FormatRequest(size: .vga, preference: .bestQuality), from: offers, device: "x")
                    XCTAssertEqual(choice.pixelFormat, full, "\(full.name) over \(reduced.name), offered \(offers.map(\.pixelFormat.name))")
                }
            }
            XCTAssertGreaterThan(FormatSelection.quality(format(reduced, vga)), FormatSelection.quality(format(.grey, vga)), "\(reduced.name) over grey")
        }
    }

    func testRawOnlyNeverTakesMJPEGAndSettlesForALowerRate() throws {
        let choice = try choose(.rawOnly, size: .hd720, rate: 30)
        XCTAssertFalse(choice.pixelFormat.isCompressed)
        XCTAssertEqual(choice.pixelFormat, .yuyv, "first raw format offering the size when none reaches the rate")
        XCTAssertEqual(choice.frameRate, FrameRate(10))
        XCTAssertTrue(choice.adjustments.contains { $0.field == .frameRate })
        XCTAssertThrowsError(try FormatSelection.choose(FormatRequest(preference: .rawOnly), from: [webcam[1]], device: "x")) {
            XCTAssertEqual(($0 as? MediaDevicesError)?.code, .unsupportedFormat)
        }
    }

    func testLowestBandwidthPrefersMJPEGThenTheMostSubsampledRawFormat() throws {
        XCTAssertEqual(try choose(.lowestBandwidth, size: .vga, rate: 30).pixelFormat, .mjpeg)
        let raw = try FormatSelection.choose(FormatRequest(size: .hd720, frameRate: FrameRate(5), preference: .lowestBandwidth),
                                             from: webcam.filter { !$0.isCompressed }, device: "x")
        XCTAssertEqual(raw.pixelFormat, .nv12, "NV12 is 1.5 bytes per pixel, YUYV 2, RGB3 3")
    }

    func testBestQualityPrefersFullChroma() throws {
        XCTAssertEqual(try choose(.bestQuality, size: .hd720, rate: 10).pixelFormat, .rgb24)
        XCTAssertEqual(try choose(.bestQuality, size: .hd720, rate: 15).pixelFormat, .nv12, "only NV12 and MJPEG reach 15 fps")
        XCTAssertEqual(try choose(.bestQuality, size: .vga, rate: 30).pixelFormat, .yuyv)
    }

    /// A Bayer sensor's format the pipeline cannot read (10-bit DPCM-compressed to 8 bits:
    /// libv4lconvert does not demosaic it) is listed first and costs the fewest bytes, yet no preference picks it
    /// while a readable format gives the size.
    func testNoPreferencePicksAFormatThePipelineCannotRead() throws {
        let bayer = CaptureFormat(pixelFormat: PixelFormat(v4l2: FourCC("bBA8")), description: "10-bit Bayer DPCM 8", isCompressed: false,
                                  isEmulated: false, frameSizes: [option(.vga, 30)])
        XCTAssertFalse(bayer.isConvertible)
        let formats = [bayer, format(.yuyv, [option(.vga, 30)])]
        for preference in [FormatPreference.automatic, .rawOnly, .lowestBandwidth, .bestQuality] {
            let choice = try FormatSelection.choose(FormatRequest(size: .vga, preference: preference), from: formats, device: "/dev/video9")
            XCTAssertEqual(choice.pixelFormat, .yuyv, "\(preference)")
        }
        // Asked for by name, it is what the caller gets.
        let named = try FormatSelection.choose(FormatRequest(pixelFormat: bayer.pixelFormat, size: .vga), from: formats, device: "/dev/video9")
        XCTAssertEqual(named.pixelFormat.fourCC, FourCC("bBA8"))
    }

    /// Best quality never takes 16-bit grey for colour (two bytes a sample made Y16 rank with
    /// 4:4:4), and ranks Bayer (one colour sample a pixel) below 4:2:2 and above grey.
    func testBestQualityRanksWideGreyAsGreyAndBayerAsFourTwoZero() throws {
        let formats = [format(.y16, [option(.vga, 30)]), format(.srggb16, [option(.vga, 30)]),
                       format(.yuyv, [option(.vga, 30)]), format(.y10, [option(.vga, 30)])]
        let best = try FormatSelection.choose(FormatRequest(size: .vga, preference: .bestQuality), from: formats, device: "/dev/video9")
        XCTAssertEqual(best.pixelFormat, .yuyv)
        let withoutYUV = try FormatSelection.choose(FormatRequest(size: .vga, preference: .bestQuality),
                                                    from: formats.filter { $0.pixelFormat != .yuyv }, device: "/dev/video9")
        XCTAssertEqual(withoutYUV.pixelFormat, .srggb16, "Bayer carries colour; Y16 does not")
    }
}
