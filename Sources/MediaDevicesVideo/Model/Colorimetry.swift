import MediaDevicesCore
/// How a YUV frame's numbers map to colours: the matrix (BT.601, BT.709, BT.2020) and the range
/// (limited 16–235 or full 0–255). V4L2 reports both with each format (`ycbcr_enc`,
/// `quantization`); conversion to and from RGB uses them where libyuv offers the matrix.
public struct Colorimetry: Hashable, Sendable, CustomStringConvertible {
    /// The YCbCr encoding matrix.
    public enum Matrix: Hashable, Sendable {
        /// ITU-R BT.601 (standard definition, most webcams, JPEG).
        case bt601
        /// ITU-R BT.709 (HD).
        case bt709
        /// ITU-R BT.2020 (UHD).
        case bt2020
    }

    /// The quantization range.
    public enum Range: Hashable, Sendable {
        /// Y in 16...235, Cb/Cr in 16...240 (video).
        case limited
        /// 0...255 (JPEG, sRGB).
        case full
    }

    /// The matrix.
    public var matrix: Matrix
    /// The range.
    public var range: Range
    /// For HSV formats, the hue's steps in a full turn as V4L2's `hsv_enc` states it: 180
    /// (`V4L2_HSV_ENC_180`, 2° a step) or 256 (`V4L2_HSV_ENC_256`); `nil` for other formats,
    /// and HSV frames without it are read as 180.
    package var hueSteps: Int?

    /// A colorimetry of `matrix` and `range`.
    public init(matrix: Matrix, range: Range) {
        self.matrix = matrix
        self.range = range
    }

    /// BT.601 limited range: what a YUV frame with no other information is taken to be.
    package static let bt601Limited = Colorimetry(matrix: .bt601, range: .limited)
    /// BT.601 full range: JPEG's (and so MJPEG's) colorimetry.
    package static let jpeg = Colorimetry(matrix: .bt601, range: .full)

    /// What data of `format` is taken to be when nothing says otherwise: BT.601 limited range for
    /// YUV (JPEG's full range is applied by the decoder), full range for RGB and grey.
    package static func `default`(for format: PixelFormat) -> Colorimetry {
        format.isYUV ? .bt601Limited : .jpeg
    }

    /// `"bt601/limited"`.
    public var description: String { "\(matrix)/\(range)" }
}
