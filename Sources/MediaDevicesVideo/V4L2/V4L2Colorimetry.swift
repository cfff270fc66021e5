import MediaDevicesCore
import CV4L2

extension Colorimetry {
    /// The colorimetry a V4L2 format states, with the kernel's rules for the `DEFAULT` values
    /// (`V4L2_MAP_YCBCR_ENC_DEFAULT`, `V4L2_MAP_QUANTIZATION_DEFAULT` in videodev2.h): the
    /// encoding follows the colorspace (REC709 and DCI-P3 → BT.709, BT2020 → BT.2020, else
    /// BT.601); the range is full for RGB and for the JPEG colorspace, limited otherwise. For
    /// HSV formats the field holds the hue encoding instead (`hueSteps`).
    init(v4l2Colorspace colorspace: UInt32, encoding: UInt32, quantization: UInt32, isYUV: Bool) {
        let matrix: Matrix
        switch encoding {
        case V4L2_YCBCR_ENC_709.rawValue, V4L2_YCBCR_ENC_XV709.rawValue: matrix = .bt709
        case V4L2_YCBCR_ENC_BT2020.rawValue, V4L2_YCBCR_ENC_BT2020_CONST_LUM.rawValue: matrix = .bt2020
        case V4L2_YCBCR_ENC_DEFAULT.rawValue:
            switch colorspace {
            case V4L2_COLORSPACE_REC709.rawValue, V4L2_COLORSPACE_DCI_P3.rawValue: matrix = .bt709
            case V4L2_COLORSPACE_BT2020.rawValue: matrix = .bt2020
            default: matrix = .bt601
            }
        default: matrix = .bt601
        }
        let range: Range
        switch quantization {
        case V4L2_QUANTIZATION_FULL_RANGE.rawValue: range = .full
        case V4L2_QUANTIZATION_LIM_RANGE.rawValue: range = .limited
        default: range = !isYUV || colorspace == V4L2_COLORSPACE_JPEG.rawValue ? .full : .limited
        }
        self.init(matrix: matrix, range: range)
        // HSV formats state their hue encoding in the same field (`hsv_enc`).
        switch encoding {
        case V4L2_HSV_ENC_180.rawValue: hueSteps = 180
        case V4L2_HSV_ENC_256.rawValue: hueSteps = 256
        default: break
        }
    }
}
