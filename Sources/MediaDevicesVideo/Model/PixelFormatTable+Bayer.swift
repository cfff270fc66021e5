import MediaDevicesCore
// Raw Bayer formats the pipeline reads (through libv4lconvert): one colour sample per pixel, in
// rows alternating two colours. The name gives the first two rows' first two samples: BGGR is
// rows B G B G... then G R G R... 10-, 12- and 16-bit samples are little-endian 16-bit words
// (10 and 12 bits in the low bits), reduced to 8 bits with libyuv before libv4lconvert demosaics
// them. The packed (MIPI) variants are not read.

extension PixelFormat {
    /// 8-bit Bayer, rows BGBG.., GRGR.. (V4L2 `SBGGR8`).
    public static let sbggr8 = PixelFormat("BA81", drm: nil, name: "SBGGR8", layout: .packed(1), yuv: false)
    /// 8-bit Bayer, rows GBGB.., RGRG.. (V4L2 `SGBRG8`).
    public static let sgbrg8 = PixelFormat("GBRG", drm: nil, name: "SGBRG8", layout: .packed(1), yuv: false)
    /// 8-bit Bayer, rows GRGR.., BGBG.. (V4L2 `SGRBG8`).
    public static let sgrbg8 = PixelFormat("GRBG", drm: nil, name: "SGRBG8", layout: .packed(1), yuv: false)
    /// 8-bit Bayer, rows RGRG.., GBGB.. (V4L2 `SRGGB8`).
    public static let srggb8 = PixelFormat("RGGB", drm: nil, name: "SRGGB8", layout: .packed(1), yuv: false)
    /// 10-bit Bayer in 16-bit words, rows BGBG.., GRGR.. (V4L2 `SBGGR10`).
    public static let sbggr10 = PixelFormat("BG10", drm: nil, name: "SBGGR10", layout: .packed(2), yuv: false)
    /// 10-bit Bayer in 16-bit words, rows GBGB.., RGRG.. (V4L2 `SGBRG10`).
    public static let sgbrg10 = PixelFormat("GB10", drm: nil, name: "SGBRG10", layout: .packed(2), yuv: false)
    /// 10-bit Bayer in 16-bit words, rows GRGR.., BGBG.. (V4L2 `SGRBG10`).
    public static let sgrbg10 = PixelFormat("BA10", drm: nil, name: "SGRBG10", layout: .packed(2), yuv: false)
    /// 10-bit Bayer in 16-bit words, rows RGRG.., GBGB.. (V4L2 `SRGGB10`).
    public static let srggb10 = PixelFormat("RG10", drm: nil, name: "SRGGB10", layout: .packed(2), yuv: false)
    /// 12-bit Bayer in 16-bit words, rows BGBG.., GRGR.. (V4L2 `SBGGR12`).
    public static let sbggr12 = PixelFormat("BG12", drm: nil, name: "SBGGR12", layout: .packed(2), yuv: false)
    /// 12-bit Bayer in 16-bit words, rows GBGB.., RGRG.. (V4L2 `SGBRG12`).
    public static let sgbrg12 = PixelFormat("GB12", drm: nil, name: "SGBRG12", layout: .packed(2), yuv: false)
    /// 12-bit Bayer in 16-bit words, rows GRGR.., BGBG.. (V4L2 `SGRBG12`).
    public static let sgrbg12 = PixelFormat("BA12", drm: nil, name: "SGRBG12", layout: .packed(2), yuv: false)
    /// 12-bit Bayer in 16-bit words, rows RGRG.., GBGB.. (V4L2 `SRGGB12`).
    public static let srggb12 = PixelFormat("RG12", drm: nil, name: "SRGGB12", layout: .packed(2), yuv: false)
    /// 16-bit Bayer, rows BGBG.., GRGR.. (V4L2 `SBGGR16`).
    public static let sbggr16 = PixelFormat("BYR2", drm: nil, name: "SBGGR16", layout: .packed(2), yuv: false)
    /// 16-bit Bayer, rows GBGB.., RGRG.. (V4L2 `SGBRG16`).
    public static let sgbrg16 = PixelFormat("GB16", drm: nil, name: "SGBRG16", layout: .packed(2), yuv: false)
    /// 16-bit Bayer, rows GRGR.., BGBG.. (V4L2 `SGRBG16`).
    public static let sgrbg16 = PixelFormat("GR16", drm: nil, name: "SGRBG16", layout: .packed(2), yuv: false)
    /// 16-bit Bayer, rows RGRG.., GBGB.. (V4L2 `SRGGB16`).
    public static let srggb16 = PixelFormat("RG16", drm: nil, name: "SRGGB16", layout: .packed(2), yuv: false)

    /// The formats of this file, in the order `PixelFormat.all` lists them.
    static let bayerFormats: [PixelFormat] = [
        .sbggr8, .sgbrg8, .sgrbg8, .srggb8, .sbggr10, .sgbrg10, .sgrbg10, .srggb10,
        .sbggr12, .sgbrg12, .sgrbg12, .srggb12, .sbggr16, .sgbrg16, .sgrbg16, .srggb16,
    ]
}
