import XCTest
@testable import MediaDevices
@testable import MediaDevicesAudio
@testable import MediaDevicesVideo
@testable import MediaDevicesCore

final class VideoFormatTests: XCTestCase {
    func testYUYVTight() {
        let format = VideoFormat(pixelFormat: .yuyv, width: 640, height: 480)
        XCTAssertEqual(format.bytesPerRow, [1280])
        XCTAssertEqual(format.bufferSizes, [614_400])
        XCTAssertEqual(format.imageSize, 614_400)
        XCTAssertEqual(format.size, Size(width: 640, height: 480))
    }

    func testNV12Tight() {
        let format = VideoFormat(pixelFormat: .nv12, width: 640, height: 480)
        XCTAssertEqual(format.bytesPerRow, [640, 640])
        XCTAssertEqual(format.bufferSizes, [460_800])  // 640*480 + 640*240
        XCTAssertEqual(format.planeLocations.map(\.buffer), [0, 0])
        XCTAssertEqual(format.planeLocations.map(\.offset), [0, 307_200])
    }

    func testYU12OddSizeRoundsChromaUp() {
        // Y: 641x481 = 308321. Cb, Cr: ceil(641/2) x ceil(481/2) = 321 x 241 = 77361 each.
        let format = VideoFormat(pixelFormat: .yu12, width: 641, height: 481)
        XCTAssertEqual(format.bytesPerRow, [641, 321, 321])
        XCTAssertEqual(format.bufferSizes, [308_321 + 2 * 77_361])
        XCTAssertEqual(format.planeLocations.map(\.buffer), [0, 0, 0])
        XCTAssertEqual(format.planeLocations.map(\.offset), [0, 308_321, 385_682])
    }

    func testNV12OddSize() {
        // Y: 5x3 = 15. CbCr: ceil(5/2)=3 pairs = 6 bytes per row, ceil(3/2) = 2 rows = 12.
        let format = VideoFormat(pixelFormat: .nv12, width: 5, height: 3)
        XCTAssertEqual(format.bytesPerRow, [5, 6])
        XCTAssertEqual(format.bufferSizes, [27])
    }

    func testNV12MHasOneBufferPerPlane() {
        let format = VideoFormat(pixelFormat: .nv12m, width: 640, height: 480)
        XCTAssertEqual(format.bufferSizes, [307_200, 153_600])
        XCTAssertEqual(format.imageSize, 460_800)
        XCTAssertEqual(format.planeLocations.map(\.buffer), [0, 1])
        XCTAssertEqual(format.planeLocations.map(\.offset), [0, 0])
    }

    func testYUV420MHasThreeBuffers() {
        let format = VideoFormat(pixelFormat: .yuv420m, width: 640, height: 480)
        XCTAssertEqual(format.bufferSizes, [307_200, 76_800, 76_800])
        XCTAssertEqual(format.planeLocations.map(\.buffer), [0, 1, 2])
        XCTAssertEqual(format.planeLocations.map(\.offset), [0, 0, 0])
    }

    func testPlaneLocationsUseDriverStrides() {
        // A driver that pads Y rows to 704 bytes and chroma rows to 352.
        let format = VideoFormat(pixelFormat: .yu12, width: 640, height: 480,
                                 bytesPerRow: [704, 352, 352], bufferSizes: [704 * 480 + 2 * 352 * 240])
        XCTAssertEqual(format.planeLocations.map(\.offset), [0, 337_920, 422_400])
    }

    func testPackedRGB() {
        let format = VideoFormat(pixelFormat: .rgb24, width: 3, height: 2)
        XCTAssertEqual(format.bytesPerRow, [9])
        XCTAssertEqual(format.bufferSizes, [18])
    }

    func testChromaStrideDerivedFromLuma() {
        // V4L2: NV12's CbCr rows are as long as the Y rows; YU12's Cb and Cr rows are half.
        let nv12 = PixelFormat.nv12.layout!.planes
        XCTAssertEqual(nv12[1].bytesPerRow(luminanceBytesPerRow: 1280, luminance: nv12[0]), 1280)
        let yu12 = PixelFormat.yu12.layout!.planes
        XCTAssertEqual(yu12[1].bytesPerRow(luminanceBytesPerRow: 1280, luminance: yu12[0]), 640)
        let yuyv = PixelFormat.yuyv.layout!.planes
        XCTAssertEqual(yuyv[0].bytesPerRow(luminanceBytesPerRow: 1280, luminance: yuyv[0]), 1280)
    }
}
