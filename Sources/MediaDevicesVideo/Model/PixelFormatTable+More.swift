import MediaDevicesCore
// More V4L2 pixel formats the pipeline reads (issue 12): planar and semi-planar 4:2:2 and 4:4:4,
// packed 32-bit 4:4:4 YUV, 16-bit grey, 15/16-bit RGB and the deprecated 32-bit RGB codes.
// Byte orders are V4L2's (bytes in memory; a 16-bit format's fields are given as its
// little-endian word, high bits first, unless it says big-endian). No DRM codes are paired yet.

extension PixelFormat {
    /// YUV 4:2:2 planar Y, Cb, Cr in one buffer (V4L2 `YUV422P`).
    package static let yuv422p = PixelFormat("422P", drm: nil, name: "YUV422P", layout: .planar(horizontal: 2, vertical: 1), yuv: true)
    /// YUV 4:2:2 planar Y, Cb, Cr in three buffers (multi-planar API).
    package static let yuv422m = PixelFormat("YM16", drm: nil, name: "YUV422M", layout: .planar(horizontal: 2, vertical: 1, memoryPlanes: 3), yuv: true)
    /// YUV 4:2:2 planar Y, Cr, Cb in three buffers (multi-planar API).
    package static let yvu422m = PixelFormat("YM61", drm: nil, name: "YVU422M", layout: .planar(horizontal: 2, vertical: 1, memoryPlanes: 3), yuv: true)
    /// YUV 4:4:4 planar Y, Cb, Cr in three buffers (multi-planar API).
    package static let yuv444m = PixelFormat("YM24", drm: nil, name: "YUV444M", layout: .planar(horizontal: 1, vertical: 1, memoryPlanes: 3), yuv: true)
    /// YUV 4:4:4 planar Y, Cr, Cb in three buffers (multi-planar API).
    package static let yvu444m = PixelFormat("YM42", drm: nil, name: "YVU444M", layout: .planar(horizontal: 1, vertical: 1, memoryPlanes: 3), yuv: true)
    /// YUV 4:2:0 planar Y, Cr, Cb in three buffers (multi-planar API).
    package static let yvu420m = PixelFormat("YM21", drm: nil, name: "YVU420M", layout: .planar420(memoryPlanes: 3), yuv: true)
    /// NV16 with the Y and CbCr planes in two buffers (multi-planar API).
    package static let nv16m = PixelFormat("NM16", drm: nil, name: "NV16M", layout: .semiPlanar(vertical: 1, memoryPlanes: 2), yuv: true)
    /// NV61 with the Y and CrCb planes in two buffers (multi-planar API).
    package static let nv61m = PixelFormat("NM61", drm: nil, name: "NV61M", layout: .semiPlanar(vertical: 1, memoryPlanes: 2), yuv: true)
    /// YUV 4:4:4, a Y plane then an interleaved CbCr plane, in one buffer.
    package static let nv24 = PixelFormat("NV24", drm: nil, name: "NV24", layout: .semiPlanar(horizontal: 1, vertical: 1), yuv: true)
    /// YUV 4:4:4, a Y plane then an interleaved CrCb plane, in one buffer.
    package static let nv42 = PixelFormat("NV42", drm: nil, name: "NV42", layout: .semiPlanar(horizontal: 1, vertical: 1), yuv: true)

    /// Packed YUV 4:4:4, bytes A/X, Y, Cb, Cr (V4L2 `YUV32`, deprecated: alpha or not is unsaid).
    package static let yuv32 = PixelFormat("YUV4", drm: nil, name: "YUV32", layout: .packed(4), yuv: true)
    /// Packed YUV 4:4:4, bytes A, Y, Cb, Cr.
    package static let ayuv32 = PixelFormat("AYUV", drm: nil, name: "AYUV32", layout: .packed(4), yuv: true)
    /// Packed YUV 4:4:4, bytes X, Y, Cb, Cr.
    package static let xyuv32 = PixelFormat("XYUV", drm: nil, name: "XYUV32", layout: .packed(4), yuv: true)
    /// Packed YUV 4:4:4, bytes Cr, Cb, Y, A (libyuv's AYUV).
    package static let vuya32 = PixelFormat("VUYA", drm: nil, name: "VUYA32", layout: .packed(4), yuv: true)
    /// Packed YUV 4:4:4, bytes Cr, Cb, Y, X.
    package static let vuyx32 = PixelFormat("VUYX", drm: nil, name: "VUYX32", layout: .packed(4), yuv: true)
    /// Packed YUV 4:4:4, bytes Y, Cb, Cr, A.
    package static let yuva32 = PixelFormat("YUVA", drm: nil, name: "YUVA32", layout: .packed(4), yuv: true)
    /// Packed YUV 4:4:4, bytes Y, Cb, Cr, X.
    package static let yuvx32 = PixelFormat("YUVX", drm: nil, name: "YUVX32", layout: .packed(4), yuv: true)

    /// 10-bit greyscale in the low bits of a little-endian 16-bit word.
    package static let y10 = PixelFormat("Y10 ", drm: nil, name: "Y10", layout: .packed(2), yuv: false)
    /// 12-bit greyscale in the low bits of a little-endian 16-bit word.
    package static let y12 = PixelFormat("Y12 ", drm: nil, name: "Y12", layout: .packed(2), yuv: false)
    /// 16-bit greyscale, little-endian.
    public static let y16 = PixelFormat("Y16 ", drm: nil, name: "Y16", layout: .packed(2), yuv: false)
    /// 16-bit greyscale, big-endian (V4L2 `Y16_BE`: the fourcc `Y16 ` with the big-endian flag).
    package static let y16BigEndian = PixelFormat(FourCC(rawValue: FourCC("Y16 ").rawValue | 0x8000_0000), drm: nil,
                                                 name: "Y16_BE", layout: .packed(2), yuv: false)

    /// 32-bit, bytes A/X, R, G, B (V4L2 `RGB32`, deprecated: alpha or not is unsaid).
    package static let rgb32 = PixelFormat("RGB4", drm: nil, name: "RGB32", layout: .packed(4), yuv: false)
    /// 32-bit, bytes B, G, R, A/X (V4L2 `BGR32`, deprecated).
    package static let bgr32 = PixelFormat("BGR4", drm: nil, name: "BGR32", layout: .packed(4), yuv: false)

    /// 16-bit word x:1 R:5 G:5 B:5, little-endian (V4L2 `RGB555`, deprecated).
    package static let rgb555 = PixelFormat("RGBO", drm: nil, name: "RGB555", layout: .packed(2), yuv: false)
    /// 16-bit word X:1 R:5 G:5 B:5, little-endian.
    package static let xrgb555 = PixelFormat("XR15", drm: nil, name: "XRGB555", layout: .packed(2), yuv: false)
    /// 16-bit word A:1 R:5 G:5 B:5, little-endian.
    package static let argb555 = PixelFormat("AR15", drm: nil, name: "ARGB555", layout: .packed(2), yuv: false)
    /// 16-bit word X:1 B:5 G:5 R:5, little-endian.
    package static let xbgr555 = PixelFormat("XB15", drm: nil, name: "XBGR555", layout: .packed(2), yuv: false)
    /// 16-bit word A:1 B:5 G:5 R:5, little-endian.
    package static let abgr555 = PixelFormat("AB15", drm: nil, name: "ABGR555", layout: .packed(2), yuv: false)
    /// 16-bit word x:1 R:5 G:5 B:5, big-endian (V4L2 `RGB555X`).
    package static let rgb555BigEndian = PixelFormat("RGBQ", drm: nil, name: "RGB555X", layout: .packed(2), yuv: false)
    /// 16-bit word X:1 R:5 G:5 B:5, big-endian (V4L2 `XRGB555X`: `XR15` with the big-endian flag).
    package static let xrgb555BigEndian = PixelFormat(FourCC(rawValue: FourCC("XR15").rawValue | 0x8000_0000), drm: nil,
                                                     name: "XRGB555X", layout: .packed(2), yuv: false)
    /// 16-bit word A:1 R:5 G:5 B:5, big-endian (V4L2 `ARGB555X`: `AR15` with the big-endian flag).
    package static let argb555BigEndian = PixelFormat(FourCC(rawValue: FourCC("AR15").rawValue | 0x8000_0000), drm: nil,
                                                     name: "ARGB555X", layout: .packed(2), yuv: false)
    /// 16-bit word R:5 G:6 B:5, big-endian (V4L2 `RGB565X`).
    package static let rgb565BigEndian = PixelFormat("RGBR", drm: nil, name: "RGB565X", layout: .packed(2), yuv: false)

    /// 16-bit word x:4 R:4 G:4 B:4, little-endian (V4L2 `RGB444`, deprecated).
    package static let rgb444 = PixelFormat("R444", drm: nil, name: "RGB444", layout: .packed(2), yuv: false)
    /// 16-bit word X:4 R:4 G:4 B:4, little-endian.
    package static let xrgb444 = PixelFormat("XR12", drm: nil, name: "XRGB444", layout: .packed(2), yuv: false)
    /// 16-bit word A:4 R:4 G:4 B:4, little-endian.
    package static let argb444 = PixelFormat("AR12", drm: nil, name: "ARGB444", layout: .packed(2), yuv: false)
    /// 16-bit word R:4 G:4 B:4 X:4, little-endian.
    package static let rgbx444 = PixelFormat("RX12", drm: nil, name: "RGBX444", layout: .packed(2), yuv: false)
    /// 16-bit word R:4 G:4 B:4 A:4, little-endian.
    package static let rgba444 = PixelFormat("RA12", drm: nil, name: "RGBA444", layout: .packed(2), yuv: false)
    /// 16-bit word X:4 B:4 G:4 R:4, little-endian.
    package static let xbgr444 = PixelFormat("XB12", drm: nil, name: "XBGR444", layout: .packed(2), yuv: false)
    /// 16-bit word A:4 B:4 G:4 R:4, little-endian.
    package static let abgr444 = PixelFormat("AB12", drm: nil, name: "ABGR444", layout: .packed(2), yuv: false)
    /// 16-bit word B:4 G:4 R:4 X:4, little-endian.
    package static let bgrx444 = PixelFormat("BX12", drm: nil, name: "BGRX444", layout: .packed(2), yuv: false)
    /// 16-bit word B:4 G:4 R:4 A:4, little-endian.
    package static let bgra444 = PixelFormat("GA12", drm: nil, name: "BGRA444", layout: .packed(2), yuv: false)

    /// The formats of this file, in the order `PixelFormat.all` lists them.
    static let moreFormats: [PixelFormat] = [
        .yuv422p, .yuv422m, .yvu422m, .yuv444m, .yvu444m, .yvu420m, .nv16m, .nv61m, .nv24, .nv42,
        .yuv32, .ayuv32, .xyuv32, .vuya32, .vuyx32, .yuva32, .yuvx32,
        .y10, .y12, .y16, .y16BigEndian,
        .rgb32, .bgr32,
        .rgb555, .xrgb555, .argb555, .xbgr555, .abgr555, .rgb555BigEndian, .xrgb555BigEndian, .argb555BigEndian,
        .rgb565BigEndian,
        .rgb444, .xrgb444, .argb444, .rgbx444, .rgba444, .xbgr444, .abgr444, .bgrx444, .bgra444,
    ]
}
