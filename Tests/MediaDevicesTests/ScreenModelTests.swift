import CDRM
@testable import MediaDevices
@testable import MediaDevicesAudio
@testable import MediaDevicesVideo
@testable import MediaDevicesCore
import XCTest

/// The screen model without a device: EDID monitor names, mode refresh rates, framebuffer
/// format codes.
final class ScreenModelTests: XCTestCase {
    /// A base EDID block with `descriptors` (18 bytes each) at offsets 54, 72, 90, 108.
    private func edid(_ descriptors: [[UInt8]]) -> [UInt8] {
        var bytes = [0x00, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x00] + [UInt8](repeating: 0, count: 120)
        for (index, descriptor) in descriptors.enumerated() { bytes.replaceSubrange((54 + 18 * index)..<(72 + 18 * index), with: descriptor) }
        return bytes
    }

    private func text(_ tag: UInt8, _ text: String) -> [UInt8] {
        var payload = Array(text.utf8.prefix(13))
        if payload.count < 13 { payload.append(0x0A) }
        while payload.count < 13 { payload.append(0x20) }
        return [0, 0, 0, tag, 0] + payload
    }

    func testMonitorNameIsTheFCDescriptor() {
        let timing: [UInt8] = [0x01, 0x1D] + [UInt8](repeating: 0x10, count: 16)  // a detailed timing (pixel clock ≠ 0)
        XCTAssertEqual(EDID.monitorName(edid([timing, text(0xFF, "SERIAL123"), text(0xFC, "DELL U2720Q")])), "DELL U2720Q")
        XCTAssertEqual(EDID.monitorName(edid([text(0xFC, "QEMU Monitor")])), "QEMU Monitor")
        XCTAssertEqual(EDID.monitorName(edid([text(0xFC, "ABCDEFGHIJKLM")])), "ABCDEFGHIJKLM", "13 characters, no line feed")
    }

    func testNoNameForBadOrNamelessBlocks() {
        XCTAssertNil(EDID.monitorName(edid([text(0xFE, "unspecified")])))
        XCTAssertNil(EDID.monitorName(Array(edid([text(0xFC, "X")]).prefix(100))), "too short")
        var broken = edid([text(0xFC, "X")])
        broken[1] = 0
        XCTAssertNil(EDID.monitorName(broken), "wrong header")
        XCTAssertNil(EDID.monitorName(edid([text(0xFC, "   ")])), "blank name")
    }

    func testRefreshRateIsExactFromTheTimings() {
        var info = drmModeModeInfoStandIn(clock: 148_500, htotal: 2200, vtotal: 1125)
        XCTAssertEqual(info.refreshRate, FrameRate(60), "CEA 1080p60")
        info = drmModeModeInfoStandIn(clock: 148_352, htotal: 2200, vtotal: 1125)
        XCTAssertEqual(info.refreshRate.framesPerSecond, Fraction(148_352_000, 2_475_000), "59.94 as the exact fraction")
    }

    /// Builds the mode the way the enumeration does.
    private func drmModeModeInfoStandIn(clock: UInt32, htotal: UInt16, vtotal: UInt16) -> DisplayMode {
        var info = drm_mode_modeinfo()
        info.clock = clock
        info.htotal = htotal
        info.vtotal = vtotal
        info.hdisplay = 1920
        info.vdisplay = 1080
        return DisplayMode(info)
    }

    func testFramebufferFormatsByDRMCode() {
        XCTAssertEqual(PixelFormat.framebufferFormat(drm: FourCC("XR24").rawValue), .xbgr32)
        XCTAssertEqual(PixelFormat.framebufferFormat(drm: FourCC("AR24").rawValue), .abgr32)
        XCTAssertEqual(PixelFormat.framebufferFormat(drm: FourCC("XB24").rawValue), .rgbx32)
        XCTAssertEqual(PixelFormat.framebufferFormat(drm: FourCC("AB24").rawValue), .rgba32)
        XCTAssertEqual(PixelFormat.framebufferFormat(drm: FourCC("RG16").rawValue), .rgb565)
        XCTAssertEqual(PixelFormat.framebufferFormat(drm: FourCC("XR30").rawValue), .xrgb2101010)
        XCTAssertEqual(PixelFormat.framebufferFormat(drm: FourCC("AR30").rawValue), .argb2101010)
        XCTAssertNil(PixelFormat.framebufferFormat(drm: FourCC("Q401").rawValue))
        for format in [PixelFormat.xbgr32, .abgr32, .rgbx32, .rgba32, .rgb565, .xrgb2101010] {
            XCTAssertTrue(FrameConverter.canConvert(format), "\(format) converts to NV12/ARGB")
        }
    }

    func testModifierNamesComeFromLibdrm() {
        XCTAssertEqual(Framebuffer.modifierName(0), "linear")
        let yTiled: UInt64 = 0x0100_0000_0000_0002  // fourcc_mod_code(INTEL, 2): I915_FORMAT_MOD_Y_TILED
        let name = Framebuffer.modifierName(yTiled)
        XCTAssertTrue(name.contains("Y_TILED"), name)
        XCTAssertTrue(name.contains("0x0100000000000002"), name)
    }
}
