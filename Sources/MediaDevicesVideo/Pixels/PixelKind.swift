import MediaDevicesCore
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
    /// Three planes, 4:2:2 (422P, YUV422M; YVU422M with `swapped`).
    case i422(swapped: Bool)
    /// Three planes, 4:4:4 (YUV444M; YVU444M with `swapped`).
    case i444(swapped: Bool)
    /// 16-bit A/X:1 R:5 G:5 B:5, little-endian (V4L2 RGB555, XRGB555, ARGB555; libyuv ARGB1555).
    case argb1555
    /// 16-bit A/X:4 R:4 G:4 B:4, little-endian (V4L2 RGB444, XRGB444, ARGB444; libyuv ARGB4444).
    case argb4444

    // The kinds below are read after one preparatory libyuv pass into scratch memory that turns
    // them into one of the kinds above (`PixelUnpacking`).

    /// Y plane and interleaved chroma, 4:4:4 (NV24; NV42 with `swapped`): the chroma is split
    /// into planes (`i444`).
    case nv24(swapped: Bool)
    /// Packed 4:4:4, one byte each of Y, Cb, Cr and A/X at byte indices `y`, `u`, `v` (the
    /// alpha byte is the one left): split into planes (`i444`).
    case yuv32(y: Int, u: Int, v: Int)
    /// Grey in little-endian 16-bit words, `bits` of them significant (Y10, Y12, Y16): reduced
    /// to 8 bits (`grey`).
    case grey16(bits: Int)
    /// Grey in big-endian 16-bit words (Y16_BE): its high bytes (`grey`).
    case grey16BigEndian
    /// A big-endian 16-bit RGB format (RGB565X, RGB555X, XRGB555X, ARGB555X): its bytes swapped
    /// in pairs, then read as the little-endian kind it holds (`rgb565`, `argb1555`).
    indirect case bigEndian16(PixelKind)
    /// A 16-bit RGB format libyuv expands only in the ARGB order (`argb1555`, `argb4444`) with its
    /// channels in another order: expanded to 32 bits, which then read as the 32-bit kind `as`
    /// (XBGR555 as `abgr`, RGBA444 as `rgba`, BGRA444 as `bgra`...; packed 16-bit YUV as `yuv32`,
    /// which takes a second pass).
    indirect case widened16(PixelKind, as: PixelKind)

    /// A 16-bit format with its one-bit alpha field last (RGBX555, RGBA555, BGRX555, BGRA555):
    /// its words shifted right by one bit (libyuv's `ConvertToLSBPlane_16`), which makes the
    /// A/X-first layout of the kind it holds (`argb1555`, or XBGR555 read as `widened16`).
    indirect case shifted16(PixelKind)
    /// A format no library reads (RGB332, BGR666, HSV): unpacked into ARGB by `ScalarUnpacking`.
    case scalar(ScalarUnpacking.Layout)

    /// Raw Bayer samples (8, 10, 12 or 16 bits; BGGR, GBRG, GRBG, RGGB): demosaiced to RGB24 by
    /// libv4lconvert (`BayerDecoder`) before any libyuv step, as JPEG is decoded first.
    case bayer

    /// Whether frames of this kind go through `PixelUnpacking` before a libyuv writer reads them.
    var needsUnpacking: Bool {
        switch self {
        case .nv24, .yuv32, .grey16, .grey16BigEndian, .bigEndian16, .widened16, .shifted16, .scalar: return true
        default: return false
        }
    }

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
        case "422P", "YM16": self = .i422(swapped: false)
        case "YM61": self = .i422(swapped: true)
        case "YM24": self = .i444(swapped: false)
        case "YM42": self = .i444(swapped: true)
        case "YM21": self = .i420(swapped: true)
        case "NM16": self = .nv16(swapped: false)
        case "NM61": self = .nv16(swapped: true)
        case "NV24": self = .nv24(swapped: false)
        case "NV42": self = .nv24(swapped: true)
        case "YUV4", "AYUV", "XYUV": self = .yuv32(y: 1, u: 2, v: 3)
        case "VUYA", "VUYX": self = .yuv32(y: 2, u: 1, v: 0)
        case "YUVA", "YUVX": self = .yuv32(y: 0, u: 1, v: 2)
        case "Y10 ": self = .grey16(bits: 10)
        case "Y12 ": self = .grey16(bits: 12)
        case "Y16 ": self = .grey16(bits: 16)
        case "Y16 -BE": self = .grey16BigEndian
        case "RGB4": self = .bgra
        case "BGR4": self = .argb
        case "RGBO", "XR15", "AR15": self = .argb1555
        case "XB15", "AB15": self = .widened16(.argb1555, as: .abgr)
        case "RGBQ", "XR15-BE", "AR15-BE": self = .bigEndian16(.argb1555)
        case "RGBR": self = .bigEndian16(.rgb565)
        case "R444", "XR12", "AR12": self = .argb4444
        case "RX12", "RA12": self = .widened16(.argb4444, as: .rgba)
        case "XB12", "AB12": self = .widened16(.argb4444, as: .abgr)
        case "BX12", "GA12": self = .widened16(.argb4444, as: .bgra)
        case "RX15", "RA15": self = .shifted16(.argb1555)
        case "BX15", "BA15": self = .shifted16(.widened16(.argb1555, as: .abgr))
        // Packed 16-bit YUV has the fields of 16-bit RGB with Y, Cb, Cr for R, G, B: libyuv
        // widens them to bytes Cr, Cb, Y, A, which split as VUYA does.
        case "Y444": self = .widened16(.argb4444, as: .yuv32(y: 2, u: 1, v: 0))
        case "YUVO": self = .widened16(.argb1555, as: .yuv32(y: 2, u: 1, v: 0))
        case "YUVP": self = .widened16(.rgb565, as: .yuv32(y: 2, u: 1, v: 0))
        case "RGB1": self = .scalar(.rgb332)
        case "BGRH": self = .scalar(.bgr666)
        case "HSV3": self = .scalar(.hsv24)
        case "HSV4": self = .scalar(.hsv32)
        case "BA81", "GBRG", "GRBG", "RGGB", "BG10", "GB10", "BA10", "RG10", "BG12", "GB12", "BA12", "RG12",
             "BYR2", "GB16", "GR16", "RG16": self = .bayer
        default:
            switch format.drmFourCC?.description {
            case "AR30", "XR30": self = .ar30
            default: return nil
            }
        }
    }
}
