/// How libyuv reads a pixel format: which family of its functions applies and whether the
/// chroma planes (or samples) come in V-then-U order. libyuv names byte orders after the
/// little-endian 32-bit word (its `ARGB` is bytes B, G, R, A), V4L2 after the bytes in memory;
/// this is where the two meet.
enum PixelKind: Equatable {
    /// Three planes, 4:2:0 (YU12, YUV420M; YV12 with `swapped`).
    case i420(swapped: Bool)
    /// Y plane and interleaved chroma, 4:2:0 (NV12, NV12M; NV21, NV21M with `swapped`).
    case nv12(swapped: Bool)
    /// Y plane and interleaved chroma, 4:2:2 (NV16; NV61 with `swapped`).
    case nv16(swapped: Bool)
    /// Packed Y0 U Y1 V (YUYV; YVYU with `swapped`).
    case yuy2(swapped: Bool)
    /// Packed U Y0 V Y1 (UYVY; VYUY with `swapped`).
    case uyvy(swapped: Bool)
    /// Luma only.
    case grey
    /// Bytes R, G, B (V4L2 RGB24; libyuv RAW).
    case raw
    /// Bytes B, G, R (V4L2 BGR24; libyuv RGB24).
    case rgb24
    /// Bytes B, G, R, A/X (V4L2 ABGR32/XBGR32, DRM ARGB8888/XRGB8888; libyuv ARGB).
    case argb
    /// Bytes A/X, R, G, B (V4L2 ARGB32/XRGB32, DRM BGRA8888/BGRX8888; libyuv BGRA).
    case bgra
    /// Bytes R, G, B, A/X (V4L2 RGBA32/RGBX32, DRM ABGR8888/XBGR8888; libyuv ABGR).
    case abgr
    /// Bytes A/X, B, G, R (V4L2 BGRA32/BGRX32, DRM RGBA8888/RGBX8888; libyuv RGBA).
    case rgba
    /// 16-bit R5 G6 B5, little-endian (V4L2 RGB565, DRM RGB565).
    case rgb565
    /// 32-bit 2:10:10:10, little-endian (DRM ARGB2101010/XRGB2101010; libyuv AR30).
    case ar30
    /// A JPEG image (MJPEG, JPEG).
    case jpeg

    /// The kind of `format`, or `nil` when the pipeline cannot read it.
    init?(_ format: PixelFormat) {
        switch format.fourCC.description {
        case "YU12", "YM12": self = .i420(swapped: false)
        case "YV12": self = .i420(swapped: true)
        case "NV12", "NM12": self = .nv12(swapped: false)
        case "NV21", "NM21": self = .nv12(swapped: true)
        case "NV16": self = .nv16(swapped: false)
        case "NV61": self = .nv16(swapped: true)
        case "YUYV": self = .yuy2(swapped: false)
        case "YVYU": self = .yuy2(swapped: true)
        case "UYVY": self = .uyvy(swapped: false)
        case "VYUY": self = .uyvy(swapped: true)
        case "GREY": self = .grey
        case "RGB3": self = .raw
        case "BGR3": self = .rgb24
        case "AR24", "XR24": self = .argb
        case "BA24", "BX24": self = .bgra
        case "AB24", "XB24": self = .abgr
        case "RA24", "RX24": self = .rgba
        case "RGBP": self = .rgb565
        case "MJPG", "JPEG": self = .jpeg
        default:
            switch format.drmFourCC?.description {
            case "AR30", "XR30": self = .ar30
            default: return nil
            }
        }
    }
}
