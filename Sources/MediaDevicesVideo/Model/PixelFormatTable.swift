import MediaDevicesCore
// The pixel formats the library knows. Each V4L2 fourcc is paired with the DRM fourcc of the
// same memory layout (V4L2 names RGB formats by component order in a 32-bit word read
// big-endian; DRM names them little-endian, so V4L2 RGB24 'RGB3' is DRM BGR888 'BG24').

extension PixelFormat {
    /// YUV 4:2:2 packed, Y0 Cb Y1 Cr.
    public static let yuyv = PixelFormat("YUYV", drm: "YUYV", name: "YUYV", layout: .packed(2, chroma: (2, 1)), yuv: true)
    /// YUV 4:2:2 packed, Cb Y0 Cr Y1.
    public static let uyvy = PixelFormat("UYVY", drm: "UYVY", name: "UYVY", layout: .packed(2, chroma: (2, 1)), yuv: true)
    /// YUV 4:2:2 packed, Y0 Cr Y1 Cb.
    public static let yvyu = PixelFormat("YVYU", drm: "YVYU", name: "YVYU", layout: .packed(2, chroma: (2, 1)), yuv: true)
    /// YUV 4:2:2 packed, Cr Y0 Cb Y1.
    public static let vyuy = PixelFormat("VYUY", drm: "VYUY", name: "VYUY", layout: .packed(2, chroma: (2, 1)), yuv: true)
    /// YUV 4:2:0, a Y plane then an interleaved CbCr plane, in one buffer.
    public static let nv12 = PixelFormat("NV12", drm: "NV12", name: "NV12", layout: .semiPlanar(vertical: 2), yuv: true)
    /// YUV 4:2:0, a Y plane then an interleaved CrCb plane, in one buffer.
    public static let nv21 = PixelFormat("NV21", drm: "NV21", name: "NV21", layout: .semiPlanar(vertical: 2), yuv: true)
    /// YUV 4:2:2, a Y plane then an interleaved CbCr plane, in one buffer.
    public static let nv16 = PixelFormat("NV16", drm: "NV16", name: "NV16", layout: .semiPlanar(vertical: 1), yuv: true)
    /// YUV 4:2:2, a Y plane then an interleaved CrCb plane, in one buffer.
    public static let nv61 = PixelFormat("NV61", drm: "NV61", name: "NV61", layout: .semiPlanar(vertical: 1), yuv: true)
    /// YUV 4:2:0 planar Y, Cb, Cr in one buffer (I420; V4L2 `YUV420`).
    public static let yu12 = PixelFormat("YU12", drm: "YU12", name: "YU12", layout: .planar420(), yuv: true)
    /// YUV 4:2:0 planar Y, Cr, Cb in one buffer (V4L2 `YVU420`).
    public static let yv12 = PixelFormat("YV12", drm: "YV12", name: "YV12", layout: .planar420(), yuv: true)
    /// NV12 with the Y and CbCr planes in two separate buffers (multi-planar API).
    public static let nv12m = PixelFormat("NM12", drm: "NV12", name: "NV12M", layout: .semiPlanar(vertical: 2, memoryPlanes: 2), yuv: true)
    /// NV21 with the Y and CrCb planes in two separate buffers (multi-planar API).
    public static let nv21m = PixelFormat("NM21", drm: "NV21", name: "NV21M", layout: .semiPlanar(vertical: 2, memoryPlanes: 2), yuv: true)
    /// YU12 with Y, Cb and Cr in three separate buffers (multi-planar API).
    public static let yuv420m = PixelFormat("YM12", drm: "YU12", name: "YUV420M", layout: .planar420(memoryPlanes: 3), yuv: true)
    /// 8-bit greyscale.
    public static let grey = PixelFormat("GREY", drm: "R8", name: "GREY", layout: .packed(1), yuv: false)
    /// 24-bit RGB, bytes R, G, B.
    public static let rgb24 = PixelFormat("RGB3", drm: "BG24", name: "RGB24", layout: .packed(3), yuv: false)
    /// 24-bit BGR, bytes B, G, R.
    public static let bgr24 = PixelFormat("BGR3", drm: "RG24", name: "BGR24", layout: .packed(3), yuv: false)
    /// 32-bit, bytes X, R, G, B.
    public static let xrgb32 = PixelFormat("BX24", drm: "BX24", name: "XRGB32", layout: .packed(4), yuv: false)
    /// 32-bit, bytes A, R, G, B.
    public static let argb32 = PixelFormat("BA24", drm: "BA24", name: "ARGB32", layout: .packed(4), yuv: false)
    /// 32-bit, bytes B, G, R, X (DRM XRGB8888, the usual framebuffer format).
    public static let xbgr32 = PixelFormat("XR24", drm: "XR24", name: "XBGR32", layout: .packed(4), yuv: false)
    /// 32-bit, bytes B, G, R, A (DRM ARGB8888).
    public static let abgr32 = PixelFormat("AR24", drm: "AR24", name: "ABGR32", layout: .packed(4), yuv: false)
    /// 32-bit, bytes R, G, B, X.
    public static let rgbx32 = PixelFormat("XB24", drm: "XB24", name: "RGBX32", layout: .packed(4), yuv: false)
    /// 32-bit, bytes R, G, B, A.
    public static let rgba32 = PixelFormat("AB24", drm: "AB24", name: "RGBA32", layout: .packed(4), yuv: false)
    /// 32-bit, bytes X, B, G, R.
    public static let bgrx32 = PixelFormat("RX24", drm: "RX24", name: "BGRX32", layout: .packed(4), yuv: false)
    /// 32-bit, bytes A, B, G, R.
    public static let bgra32 = PixelFormat("RA24", drm: "RA24", name: "BGRA32", layout: .packed(4), yuv: false)
    /// 16-bit RGB 5:6:5, little-endian.
    public static let rgb565 = PixelFormat("RGBP", drm: "RG16", name: "RGB565", layout: .packed(2), yuv: false)
    /// Motion JPEG: each frame is a JPEG image, possibly without Huffman tables.
    public static let mjpeg = PixelFormat("MJPG", drm: nil, name: "MJPEG", layout: .compressed, yuv: true)
    /// JFIF JPEG frames.
    public static let jpeg = PixelFormat("JPEG", drm: nil, name: "JPEG", layout: .compressed, yuv: true)

    /// Every format in the table.
    public static let all: [PixelFormat] = [
        .yuyv, .uyvy, .yvyu, .vyuy, .nv12, .nv21, .nv16, .nv61, .yu12, .yv12, .nv12m, .nv21m,
        .yuv420m, .grey, .rgb24, .bgr24, .xrgb32, .argb32, .xbgr32, .abgr32, .rgbx32, .rgba32,
        .bgrx32, .bgra32, .rgb565, .mjpeg, .jpeg,
    ] + moreFormats + bayerFormats + rareFormats

    static let byV4L2Code: [FourCC: PixelFormat] = Dictionary(uniqueKeysWithValues: all.map { ($0.fourCC, $0) })

    /// Names applications use for these formats elsewhere (GStreamer, FFmpeg, libyuv).
    static let aliases: [String: PixelFormat] = [
        "I420": .yu12, "YUV420": .yu12, "YUV420P": .yu12, "YVU420": .yv12, "YUY2": .yuyv,
        "MJPEG": .mjpeg, "MJPG": .mjpeg,
        "GRAY": .grey, "GRAY8": .grey, "RGB": .rgb24, "BGR": .bgr24,
    ]
}
