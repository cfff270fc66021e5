import MediaDevicesCore
// The rarer packed V4L2 formats the pipeline reads (issue 12): 8- and 18-bit RGB, 16-bit RGB with
// the alpha bit last, packed 16-bit YUV 4:4:4 and HSV. vivid offers every one of them. Byte
// orders as in `PixelFormatTable+More`: a 16-bit format's fields are given as its little-endian
// word, high bits first.

extension PixelFormat {
    /// 8-bit byte R:3 G:3 B:2 (V4L2 `RGB332`).
    package static let rgb332 = PixelFormat("RGB1", drm: nil, name: "RGB332", layout: .packed(1), yuv: false)
    /// 18-bit B:6 G:6 R:6 from the most significant bit of the first of four bytes, the rest
    /// unused (V4L2 `BGR666`).
    package static let bgr666 = PixelFormat("BGRH", drm: nil, name: "BGR666", layout: .packed(4), yuv: false)
    /// 16-bit word R:5 G:5 B:5 X:1, little-endian (V4L2 `RGBX555`).
    package static let rgbx555 = PixelFormat("RX15", drm: nil, name: "RGBX555", layout: .packed(2), yuv: false)
    /// 16-bit word R:5 G:5 B:5 A:1, little-endian (V4L2 `RGBA555`).
    package static let rgba555 = PixelFormat("RA15", drm: nil, name: "RGBA555", layout: .packed(2), yuv: false)
    /// 16-bit word B:5 G:5 R:5 X:1, little-endian (V4L2 `BGRX555`).
    package static let bgrx555 = PixelFormat("BX15", drm: nil, name: "BGRX555", layout: .packed(2), yuv: false)
    /// 16-bit word B:5 G:5 R:5 A:1, little-endian (V4L2 `BGRA555`).
    package static let bgra555 = PixelFormat("BA15", drm: nil, name: "BGRA555", layout: .packed(2), yuv: false)
    /// Packed YUV 4:4:4, 16-bit word A/X:4 Y:4 Cb:4 Cr:4, little-endian (V4L2 `YUV444`).
    package static let yuv444 = PixelFormat("Y444", drm: nil, name: "YUV444", layout: .packed(2), yuv: true)
    /// Packed YUV 4:4:4, 16-bit word A/X:1 Y:5 Cb:5 Cr:5, little-endian (V4L2 `YUV555`).
    package static let yuv555 = PixelFormat("YUVO", drm: nil, name: "YUV555", layout: .packed(2), yuv: true)
    /// Packed YUV 4:4:4, 16-bit word Y:5 Cb:6 Cr:5, little-endian (V4L2 `YUV565`).
    package static let yuv565 = PixelFormat("YUVP", drm: nil, name: "YUV565", layout: .packed(2), yuv: true)
    /// Bytes H, S, V (V4L2 `HSV24`); the hue in 180 or 256 steps a turn, as the format's
    /// `hsv_enc` says (`Colorimetry.hueSteps`).
    package static let hsv24 = PixelFormat("HSV3", drm: nil, name: "HSV24", layout: .packed(3), yuv: false)
    /// Bytes X, H, S, V (V4L2 `HSV32`); the hue as for `hsv24`.
    package static let hsv32 = PixelFormat("HSV4", drm: nil, name: "HSV32", layout: .packed(4), yuv: false)

    /// The formats of this file, in the order `PixelFormat.all` lists them.
    static let rareFormats: [PixelFormat] = [
        .rgb332, .bgr666, .rgbx555, .rgba555, .bgrx555, .bgra555, .yuv444, .yuv555, .yuv565, .hsv24, .hsv32,
    ]
}
