import XCTest
@testable import MediaDevices
@testable import MediaDevicesAudio
@testable import MediaDevicesVideo
@testable import MediaDevicesCore
import CV4L2
import CDRM
import Foundation

final class FourCCTests: XCTestCase {
    func testPackingMatchesKernelMacro() {
        XCTAssertEqual(FourCC("YUYV").rawValue, cv4l2_PIX_FMT_YUYV)
        XCTAssertEqual(FourCC("MJPG").rawValue, cv4l2_PIX_FMT_MJPEG)
        XCTAssertEqual(FourCC("NM12").rawValue, cv4l2_PIX_FMT_NV12M)
        // 'Y' | 'U' << 8 | 'Y' << 16 | 'V' << 24, by hand.
        XCTAssertEqual(FourCC("YUYV").rawValue, 0x5659_5559)
        let literal: FourCC = "NV12"
        XCTAssertEqual(literal.rawValue, cv4l2_PIX_FMT_NV12)
    }

    func testShortTextIsPaddedWithSpaces() {
        XCTAssertEqual(FourCC("R8").rawValue, cdrm_FORMAT_R8)
        XCTAssertEqual(FourCC("R8").rawValue, 0x2020_3852)
    }

    func testDescriptionRoundTrip() {
        XCTAssertEqual(FourCC(rawValue: cv4l2_PIX_FMT_YUYV).description, "YUYV")
        XCTAssertEqual(FourCC(rawValue: cv4l2_PIX_FMT_RGB24).description, "RGB3")
        XCTAssertEqual(FourCC(rawValue: cdrm_FORMAT_XRGB8888).description, "XR24")
        for text in ["YUYV", "NV12", "MJPG", "BX24", "R8  ", "ABCD"] {
            XCTAssertEqual(FourCC(FourCC(text).description), FourCC(text), text)
            XCTAssertEqual(FourCC(text).description, text)
        }
    }

    func testNonPrintableBytesShownAsDots() {
        XCTAssertEqual(FourCC(rawValue: 0x0403_0201).description, "....")
        XCTAssertEqual(FourCC(rawValue: 0x4100_0042).description, "B..A")
    }

    func testBigEndianFlag() {
        // V4L2_PIX_FMT_Y16_BE = v4l2_fourcc_be('Y', '1', '6', ' '), by hand.
        let y16be = FourCC(rawValue: 0xA036_3159)
        XCTAssertTrue(y16be.isBigEndian)
        XCTAssertEqual(y16be.description, "Y16 -BE")
        XCTAssertFalse(FourCC("Y16 ").isBigEndian)
        XCTAssertFalse(FourCC(rawValue: cv4l2_PIX_FMT_YUYV).isBigEndian)
    }

    func testUnknownCodeIsKept() {
        let format = PixelFormat(v4l2: FourCC("ABCD"))
        XCTAssertEqual(format.name, "ABCD")
        XCTAssertFalse(format.isKnown)
        XCTAssertNil(format.layout)
        XCTAssertNil(format.drmFourCC)
        XCTAssertEqual(format.v4l2Code, 0x4443_4241)
    }

    func testCodableUsesTheFourCharacters() throws {
        let data = try JSONEncoder().encode([FourCC("YUYV")])
        XCTAssertEqual(String(decoding: data, as: UTF8.self), #"["YUYV"]"#)
        let decoded = try JSONDecoder().decode([FourCC].self, from: data)
        XCTAssertEqual(decoded, [FourCC(rawValue: cv4l2_PIX_FMT_YUYV)])
    }

    /// Unknown codes are "kept, never dropped", so a big-endian code must survive encoding.
    func testCodableRoundTripKeepsBigEndianFlag() throws {
        let y16be = FourCC(rawValue: 0xA036_3159)
        let decoded = try JSONDecoder().decode([FourCC].self, from: JSONEncoder().encode([y16be]))
        XCTAssertEqual(decoded.first?.rawValue, 0xA036_3159, "Codable round trip lost the big-endian flag")
    }
}
