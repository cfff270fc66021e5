import CPipeWire
import Glibc
import XCTest
@testable import MediaDevicesVideo
@testable import MediaDevicesCore

/// The formats a published PipeWire camera node offers: which ones, their buffer layouts, and
/// their EnumFormat pods as a consumer reads them (built by the shim, parsed back by the pod
/// parser the camera list uses). No PipeWire needed.
final class PipeWireCameraOfferTests: XCTestCase {
    func testStandardOffersAreTheSourceFormatThenNV12AndI420AtTheSourceAndSmallerSizes() {
        let offers = PipeWireCameraOffer.standard(sourceFormat: .yuyv, size: Size(width: 1280, height: 720), frameRate: FrameRate(30))
        XCTAssertEqual(offers.map(\.description), [
            "YUYV 1280x720 @ 30 fps", "NV12 1280x720 @ 30 fps", "YU12 1280x720 @ 30 fps",
            "NV12 640x480 @ 30 fps", "YU12 640x480 @ 30 fps", "NV12 640x360 @ 30 fps", "YU12 640x360 @ 30 fps",
            "NV12 320x240 @ 30 fps", "YU12 320x240 @ 30 fps",
        ])
        // An MJPEG camera: no raw source format to pass on; NV12 comes first.
        let fromJPEG = PipeWireCameraOffer.standard(sourceFormat: .mjpeg, size: Size(width: 640, height: 480), frameRate: FrameRate(15))
        XCTAssertEqual(fromJPEG.map(\.description), ["NV12 640x480 @ 15 fps", "YU12 640x480 @ 15 fps", "NV12 640x360 @ 15 fps",
                                                     "YU12 640x360 @ 15 fps", "NV12 320x240 @ 15 fps", "YU12 320x240 @ 15 fps"])
        // An NV12 source is offered once at its size.
        let fromNV12 = PipeWireCameraOffer.standard(sourceFormat: .nv12, size: Size(width: 320, height: 240), frameRate: FrameRate(30))
        XCTAssertEqual(fromNV12.map(\.description), ["NV12 320x240 @ 30 fps", "YU12 320x240 @ 30 fps"])
        XCTAssertNil(PipeWireCameraOffer(.mjpeg, size: Size(width: 640, height: 480), frameRate: FrameRate(30)), "compressed: not a raw offer")
        XCTAssertNil(PipeWireCameraOffer(.nv12m, size: Size(width: 640, height: 480), frameRate: FrameRate(30)), "two memory planes: not one buffer")
    }

    func testBufferLayoutIsOneTightlyPackedFrame() {
        let cases: [(PixelFormat, Int, Int, UInt32, UInt32)] = [
            (.yuyv, 640, 480, 614_400, 1280), (.nv12, 640, 480, 460_800, 640), (.yu12, 640, 480, 460_800, 640),
            (.yu12, 320, 240, 115_200, 320), (.nv12, 1280, 720, 1_382_400, 1280),
        ]
        for (format, width, height, size, stride) in cases {
            let offer = PipeWireCameraOffer(format, size: Size(width: width, height: height), frameRate: FrameRate(30))!
            let shim = offer.shimFormat
            XCTAssertEqual(shim.frame_size, size, "\(offer)")
            XCTAssertEqual(shim.stride, stride, "\(offer)")
            XCTAssertEqual(shim.width, UInt32(width))
            XCTAssertEqual(shim.height, UInt32(height))
            XCTAssertEqual(shim.rate_num, 30)
            XCTAssertEqual(shim.rate_denom, 1)
        }
        XCTAssertEqual(PipeWireCameraOffer(.yuyv, size: Size(width: 8, height: 8), frameRate: FrameRate(30))!.spaFormat, cpw_spa_format_named("YUY2"))
        XCTAssertEqual(PipeWireCameraOffer(.nv12, size: Size(width: 8, height: 8), frameRate: FrameRate(30))!.spaFormat, cpw_spa_format_named("NV12"))
        XCTAssertEqual(PipeWireCameraOffer(.yu12, size: Size(width: 8, height: 8), frameRate: FrameRate(30))!.spaFormat, cpw_spa_format_named("I420"))
    }

    /// Each offer's EnumFormat pod, parsed as a consumer (and our own camera list) reads it: one
    /// raw format, one fixed size, one rate.
    func testEnumFormatPodsReadBackAsTheOffers() throws {
        let offers = PipeWireCameraOffer.standard(sourceFormat: .yuyv, size: Size(width: 640, height: 480), frameRate: FrameRate(Fraction(30000, 1001)))
        for offer in offers {
            let read = offer.enumFormatAsRead
            XCTAssertEqual(read.count, 1, "\(offer): \(read)")
            let format = try XCTUnwrap(read.first)
            XCTAssertEqual(format.pixelFormat, offer.format.pixelFormat, "\(offer)")
            XCTAssertFalse(format.isCompressed)
            XCTAssertEqual(format.frameSizes.count, 1, "\(offer)")
            XCTAssertEqual(format.frameSizes.first?.sizes, .discrete(offer.format.size), "\(offer)")
            XCTAssertEqual(format.frameSizes.first?.frameRateRanges, [FrameRateRange(discrete: FrameRate(Fraction(30000, 1001)))], "\(offer)")
        }
        // The raw entries: the SPA format's short name as pw-cli prints it.
        var shim = offers[0].shimFormat
        var entries = [cpw_format_entry](repeating: cpw_format_entry(), count: 4)
        let count = entries.withUnsafeMutableBufferPointer { cpw_output_enum_format_entries(&shim, $0.baseAddress, $0.count) }
        XCTAssertEqual(count, 1)
        var entry = entries[0]
        let name = withUnsafeBytes(of: &entry.format_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        XCTAssertEqual(name, "YUY2")
        XCTAssertEqual(entry.subtype, CPW_SUBTYPE_RAW.rawValue)
        XCTAssertEqual(entry.size_kind, CPW_SIZE_FIXED.rawValue)
        XCTAssertEqual(entry.rate_kind, CPW_RATES_LIST.rawValue)
        XCTAssertEqual(entry.rates.0.num, 30000)
        XCTAssertEqual(entry.rates.0.denom, 1001)
        // A pod that does not fit its storage is refused, not cut.
        var small = [UInt8](repeating: 0, count: 16)
        XCTAssertEqual(cpw_output_build_enum_format(&shim, &small, small.count), -1)
    }

    /// Without PipeWire (nothing at PIPEWIRE_REMOTE) a node is `.notFound`, naming what to start;
    /// a node with nothing to offer is `.unsupportedFormat`.
    func testNoPipeWireIsNotFoundAndNoOffersIsUnsupported() {
        let saved = getenv("PIPEWIRE_REMOTE").map { String(cString: $0) }
        setenv("PIPEWIRE_REMOTE", "/nonexistent/mediadevices-test/pipewire-0", 1)
        defer { if let saved { setenv("PIPEWIRE_REMOTE", saved, 1) } else { unsetenv("PIPEWIRE_REMOTE") } }
        let offers = PipeWireCameraOffer.standard(sourceFormat: .yuyv, size: Size(width: 320, height: 240), frameRate: FrameRate(30))
        XCTAssertThrowsError(try PipeWireCameraOutput(name: "md_unit", description: "Unit", offers: offers, timeout: .seconds(2))) { error in
            let error = error as? MediaDevicesError
            XCTAssertEqual(error?.code, .notFound, "\(String(describing: error))")
            // pw_context_new fails first where PipeWire's client configuration is not installed
            // (a Debian 13 root with libpipewire only): not found either.
            XCTAssertTrue(["pw_context_connect", "pw_context_new"].contains(error?.operation ?? ""), "\(String(describing: error))")
            XCTAssertTrue(error?.remedy?.contains("wireplumber") == true, "\(String(describing: error))")
            if error?.operation == "pw_context_connect" {
                XCTAssertTrue(error?.detail.contains("/nonexistent/mediadevices-test/pipewire-0") == true, "\(String(describing: error))")
            }
        }
        XCTAssertThrowsError(try PipeWireCameraOutput(name: "md_unit", description: "Unit", offers: [])) { error in
            XCTAssertEqual((error as? MediaDevicesError)?.code, .unsupportedFormat, "\(error)")
        }
    }
}
