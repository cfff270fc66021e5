import XCTest
@testable import MediaDevices
@testable import MediaDevicesAudio
@testable import MediaDevicesVideo
@testable import MediaDevicesCore
import CV4L2
import CDRM

final class PixelFormatTableTests: XCTestCase {
    /// Every table entry with the kernel's V4L2 code and the DRM code of the same memory layout.
    /// V4L2 names RGB by byte order in memory, DRM by a little-endian word, hence the swaps.
    static let expected: [(format: PixelFormat, v4l2: UInt32, drm: UInt32?)] = [
        (.yuyv, cv4l2_PIX_FMT_YUYV, cdrm_FORMAT_YUYV),
        (.uyvy, cv4l2_PIX_FMT_UYVY, cdrm_FORMAT_UYVY),
        (.yvyu, cv4l2_PIX_FMT_YVYU, cdrm_FORMAT_YVYU),
        (.vyuy, cv4l2_PIX_FMT_VYUY, cdrm_FORMAT_VYUY),
        (.nv12, cv4l2_PIX_FMT_NV12, cdrm_FORMAT_NV12),
        (.nv21, cv4l2_PIX_FMT_NV21, cdrm_FORMAT_NV21),
        (.nv16, cv4l2_PIX_FMT_NV16, cdrm_FORMAT_NV16),
        (.nv61, cv4l2_PIX_FMT_NV61, cdrm_FORMAT_NV61),
        (.yu12, cv4l2_PIX_FMT_YUV420, cdrm_FORMAT_YUV420),
        (.yv12, cv4l2_PIX_FMT_YVU420, cdrm_FORMAT_YVU420),
        (.nv12m, cv4l2_PIX_FMT_NV12M, cdrm_FORMAT_NV12),
        (.nv21m, cv4l2_PIX_FMT_NV21M, cdrm_FORMAT_NV21),
        (.yuv420m, cv4l2_PIX_FMT_YUV420M, cdrm_FORMAT_YUV420),
        (.grey, cv4l2_PIX_FMT_GREY, cdrm_FORMAT_R8),
        (.rgb24, cv4l2_PIX_FMT_RGB24, cdrm_FORMAT_BGR888),
        (.bgr24, cv4l2_PIX_FMT_BGR24, cdrm_FORMAT_RGB888),
        (.xrgb32, cv4l2_PIX_FMT_XRGB32, cdrm_FORMAT_BGRX8888),
        (.argb32, cv4l2_PIX_FMT_ARGB32, cdrm_FORMAT_BGRA8888),
        (.xbgr32, cv4l2_PIX_FMT_XBGR32, cdrm_FORMAT_XRGB8888),
        (.abgr32, cv4l2_PIX_FMT_ABGR32, cdrm_FORMAT_ARGB8888),
        (.rgbx32, cv4l2_PIX_FMT_RGBX32, cdrm_FORMAT_XBGR8888),
        (.rgba32, cv4l2_PIX_FMT_RGBA32, cdrm_FORMAT_ABGR8888),
        (.bgrx32, cv4l2_PIX_FMT_BGRX32, cdrm_FORMAT_RGBX8888),
        (.bgra32, cv4l2_PIX_FMT_BGRA32, cdrm_FORMAT_RGBA8888),
        (.rgb565, cv4l2_PIX_FMT_RGB565, cdrm_FORMAT_RGB565),
        (.mjpeg, cv4l2_PIX_FMT_MJPEG, nil),
        (.jpeg, cv4l2_PIX_FMT_JPEG, nil),
        (.yuv422p, cv4l2_PIX_FMT_YUV422P, nil),
        (.yuv422m, cv4l2_PIX_FMT_YUV422M, nil),
        (.yvu422m, cv4l2_PIX_FMT_YVU422M, nil),
        (.yuv444m, cv4l2_PIX_FMT_YUV444M, nil),
        (.yvu444m, cv4l2_PIX_FMT_YVU444M, nil),
        (.yvu420m, cv4l2_PIX_FMT_YVU420M, nil),
        (.nv16m, cv4l2_PIX_FMT_NV16M, nil),
        (.nv61m, cv4l2_PIX_FMT_NV61M, nil),
        (.nv24, cv4l2_PIX_FMT_NV24, nil),
        (.nv42, cv4l2_PIX_FMT_NV42, nil),
        (.yuv32, cv4l2_PIX_FMT_YUV32, nil),
        (.ayuv32, cv4l2_PIX_FMT_AYUV32, nil),
        (.xyuv32, cv4l2_PIX_FMT_XYUV32, nil),
        (.vuya32, cv4l2_PIX_FMT_VUYA32, nil),
        (.vuyx32, cv4l2_PIX_FMT_VUYX32, nil),
        (.yuva32, cv4l2_PIX_FMT_YUVA32, nil),
        (.yuvx32, cv4l2_PIX_FMT_YUVX32, nil),
        (.y10, cv4l2_PIX_FMT_Y10, nil),
        (.y12, cv4l2_PIX_FMT_Y12, nil),
        (.y16, cv4l2_PIX_FMT_Y16, nil),
        (.y16BigEndian, cv4l2_PIX_FMT_Y16_BE, nil),
        (.rgb32, cv4l2_PIX_FMT_RGB32, nil),
        (.bgr32, cv4l2_PIX_FMT_BGR32, nil),
        (.rgb555, cv4l2_PIX_FMT_RGB555, nil),
        (.xrgb555, cv4l2_PIX_FMT_XRGB555, nil),
        (.argb555, cv4l2_PIX_FMT_ARGB555, nil),
        (.xbgr555, cv4l2_PIX_FMT_XBGR555, nil),
        (.abgr555, cv4l2_PIX_FMT_ABGR555, nil),
        (.rgb555BigEndian, cv4l2_PIX_FMT_RGB555X, nil),
        (.xrgb555BigEndian, cv4l2_PIX_FMT_XRGB555X, nil),
        (.argb555BigEndian, cv4l2_PIX_FMT_ARGB555X, nil),
        (.rgb565BigEndian, cv4l2_PIX_FMT_RGB565X, nil),
        (.rgb444, cv4l2_PIX_FMT_RGB444, nil),
        (.xrgb444, cv4l2_PIX_FMT_XRGB444, nil),
        (.argb444, cv4l2_PIX_FMT_ARGB444, nil),
        (.rgbx444, cv4l2_PIX_FMT_RGBX444, nil),
        (.rgba444, cv4l2_PIX_FMT_RGBA444, nil),
        (.xbgr444, cv4l2_PIX_FMT_XBGR444, nil),
        (.abgr444, cv4l2_PIX_FMT_ABGR444, nil),
        (.bgrx444, cv4l2_PIX_FMT_BGRX444, nil),
        (.bgra444, cv4l2_PIX_FMT_BGRA444, nil),
        (.sbggr8, cv4l2_PIX_FMT_SBGGR8, nil),
        (.sgbrg8, cv4l2_PIX_FMT_SGBRG8, nil),
        (.sgrbg8, cv4l2_PIX_FMT_SGRBG8, nil),
        (.srggb8, cv4l2_PIX_FMT_SRGGB8, nil),
        (.sbggr10, cv4l2_PIX_FMT_SBGGR10, nil),
        (.sgbrg10, cv4l2_PIX_FMT_SGBRG10, nil),
        (.sgrbg10, cv4l2_PIX_FMT_SGRBG10, nil),
        (.srggb10, cv4l2_PIX_FMT_SRGGB10, nil),
        (.sbggr16, cv4l2_PIX_FMT_SBGGR16, nil),
        (.sgbrg16, cv4l2_PIX_FMT_SGBRG16, nil),
        (.sgrbg16, cv4l2_PIX_FMT_SGRBG16, nil),
        (.srggb16, cv4l2_PIX_FMT_SRGGB16, nil),
        (.sbggr12, cv4l2_PIX_FMT_SBGGR12, nil),
        (.sgbrg12, cv4l2_PIX_FMT_SGBRG12, nil),
        (.sgrbg12, cv4l2_PIX_FMT_SGRBG12, nil),
        (.srggb12, cv4l2_PIX_FMT_SRGGB12, nil),
        (.rgb332, cv4l2_PIX_FMT_RGB332, nil),
        (.bgr666, cv4l2_PIX_FMT_BGR666, nil),
        (.rgbx555, cv4l2_PIX_FMT_RGBX555, nil),
        (.rgba555, cv4l2_PIX_FMT_RGBA555, nil),
        (.bgrx555, cv4l2_PIX_FMT_BGRX555, nil),
        (.bgra555, cv4l2_PIX_FMT_BGRA555, nil),
        (.yuv444, cv4l2_PIX_FMT_YUV444, nil),
        (.yuv555, cv4l2_PIX_FMT_YUV555, nil),
        (.yuv565, cv4l2_PIX_FMT_YUV565, nil),
        (.hsv24, cv4l2_PIX_FMT_HSV24, nil),
        (.hsv32, cv4l2_PIX_FMT_HSV32, nil),
    ]

    func testEveryEntryMatchesTheKernelCodes() {
        for entry in Self.expected {
            XCTAssertEqual(entry.format.fourCC.rawValue, entry.v4l2, "V4L2 code of \(entry.format.name)")
            XCTAssertEqual(entry.format.drmFourCC?.rawValue, entry.drm, "DRM code of \(entry.format.name)")
        }
    }

    func testTableIsCoveredAndUnique() {
        XCTAssertEqual(PixelFormat.all.count, Self.expected.count)
        XCTAssertEqual(Set(PixelFormat.all.map(\.fourCC)), Set(Self.expected.map { FourCC(rawValue: $0.v4l2) }))
    }

    func testLookupByV4L2Code() {
        XCTAssertEqual(PixelFormat(v4l2: FourCC(rawValue: cv4l2_PIX_FMT_YUV420)).name, "YU12")
        XCTAssertEqual(PixelFormat(v4l2: FourCC(rawValue: cv4l2_PIX_FMT_NV12M)).name, "NV12M")
        XCTAssertTrue(PixelFormat(v4l2: FourCC(rawValue: cv4l2_PIX_FMT_ABGR32)).isKnown)
    }

    func testLookupByDRMCode() {
        XCTAssertEqual(PixelFormat(drm: FourCC(rawValue: cdrm_FORMAT_XRGB8888))?.fourCC.rawValue, cv4l2_PIX_FMT_XBGR32)
        XCTAssertEqual(PixelFormat(drm: FourCC(rawValue: cdrm_FORMAT_NV12))?.fourCC.rawValue, cv4l2_PIX_FMT_NV12)
        XCTAssertEqual(PixelFormat(drm: FourCC(rawValue: cdrm_FORMAT_BGR888))?.fourCC.rawValue, cv4l2_PIX_FMT_RGB24)
        XCTAssertNil(PixelFormat(drm: FourCC(rawValue: cdrm_FORMAT_XRGB2101010)))
    }

    func testPackedLayouts() throws {
        let yuyv = try XCTUnwrap(PixelFormat.yuyv.layout)
        XCTAssertEqual(yuyv.planes.count, 1)
        XCTAssertEqual(yuyv.bytesPerPixel, 2)
        XCTAssertEqual(yuyv.memoryPlaneCount, 1)
        XCTAssertEqual(yuyv.chromaSubsampling.horizontal, 2)
        XCTAssertEqual(yuyv.chromaSubsampling.vertical, 1)
        XCTAssertFalse(yuyv.isCompressed)
        XCTAssertEqual(PixelFormat.rgb24.layout?.bytesPerPixel, 3)
        XCTAssertEqual(PixelFormat.xbgr32.layout?.bytesPerPixel, 4)
        XCTAssertEqual(PixelFormat.grey.layout?.bytesPerPixel, 1)
        XCTAssertEqual(PixelFormat.rgb565.layout?.bytesPerPixel, 2)
    }

    func testSemiPlanarLayouts() throws {
        let nv12 = try XCTUnwrap(PixelFormat.nv12.layout)
        XCTAssertEqual(nv12.planes.count, 2)
        XCTAssertEqual(nv12.memoryPlaneCount, 1)
        XCTAssertEqual(nv12.chromaSubsampling.horizontal, 2)
        XCTAssertEqual(nv12.chromaSubsampling.vertical, 2)
        XCTAssertEqual(nv12.planes[1], PlaneDescription(bytesPerSample: 2, horizontalSubsampling: 2, verticalSubsampling: 2))
        let nv16 = try XCTUnwrap(PixelFormat.nv16.layout)
        XCTAssertEqual(nv16.chromaSubsampling.vertical, 1)
        XCTAssertEqual(nv16.planes[1].verticalSubsampling, 1)
        XCTAssertEqual(PixelFormat.nv12m.layout?.memoryPlaneCount, 2)
        XCTAssertEqual(PixelFormat.nv12m.layout?.planes.count, 2)
    }

    func testPlanarLayouts() throws {
        let yu12 = try XCTUnwrap(PixelFormat.yu12.layout)
        XCTAssertEqual(yu12.planes.count, 3)
        XCTAssertEqual(yu12.memoryPlaneCount, 1)
        XCTAssertEqual(yu12.planes[1], PlaneDescription(bytesPerSample: 1, horizontalSubsampling: 2, verticalSubsampling: 2))
        XCTAssertEqual(yu12.planes[2], yu12.planes[1])
        XCTAssertEqual(PixelFormat.yuv420m.layout?.memoryPlaneCount, 3)
        XCTAssertEqual(PixelFormat.yuv420m.layout?.planes.count, 3)
    }

    func testCompressedFormats() {
        XCTAssertTrue(PixelFormat.mjpeg.isCompressed)
        XCTAssertTrue(PixelFormat.jpeg.isCompressed)
        XCTAssertFalse(PixelFormat.yuyv.isCompressed)
        XCTAssertFalse(PixelFormat(v4l2: "ABCD").isCompressed)
    }

    func testYUVFlag() {
        XCTAssertTrue(PixelFormat.nv12.isYUV)
        XCTAssertTrue(PixelFormat.yuyv.isYUV)
        XCTAssertFalse(PixelFormat.rgb24.isYUV)
        XCTAssertFalse(PixelFormat.grey.isYUV)
    }

    func testLookupByName() {
        XCTAssertEqual(PixelFormat(named: "I420")?.fourCC.rawValue, cv4l2_PIX_FMT_YUV420)
        XCTAssertEqual(PixelFormat(named: "YUYV")?.fourCC.rawValue, cv4l2_PIX_FMT_YUYV)
        XCTAssertEqual(PixelFormat(named: "YUY2")?.fourCC.rawValue, cv4l2_PIX_FMT_YUYV)
        XCTAssertEqual(PixelFormat(named: "MJPG")?.fourCC.rawValue, cv4l2_PIX_FMT_MJPEG)
        XCTAssertEqual(PixelFormat(named: "MJPEG")?.fourCC.rawValue, cv4l2_PIX_FMT_MJPEG)
        XCTAssertEqual(PixelFormat(named: "NV12M")?.fourCC.rawValue, cv4l2_PIX_FMT_NV12M)
        XCTAssertEqual(PixelFormat(named: "NM12")?.fourCC.rawValue, cv4l2_PIX_FMT_NV12M)
        XCTAssertEqual(PixelFormat(named: "RGB3")?.fourCC.rawValue, cv4l2_PIX_FMT_RGB24)
        // "ARGB" means B,G,R,A bytes to libyuv and A,R,G,B to FFmpeg: not guessed, kept as a fourcc.
        XCTAssertEqual(PixelFormat(named: "ARGB")?.isKnown, false)
        XCTAssertEqual(PixelFormat(named: "ABGR32")?.fourCC.rawValue, cv4l2_PIX_FMT_ABGR32)
        XCTAssertNil(PixelFormat(named: "nonsense"))
        XCTAssertNil(PixelFormat(named: ""))
        let unknown = PixelFormat(named: "WXYZ")
        XCTAssertEqual(unknown?.fourCC.rawValue, 0x5A59_5857)
        XCTAssertEqual(unknown?.name, "WXYZ")
        XCTAssertEqual(unknown?.isKnown, false)
    }
}
