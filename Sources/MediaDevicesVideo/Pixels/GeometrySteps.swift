import MediaDevicesCore
import CYUV

/// The geometric steps of a conversion (scale, rotate, mirror), each one libyuv call from a view
/// into a buffer, in the working format: I420 for YUV outputs, ARGB for ARGB.
enum GeometrySteps {
    /// Scales `s` into `d` (prepared at the new size). Box filtering: libyuv's best for
    /// downscaling, and it falls back to bilinear when scaling up.
    static func scale(_ s: ImageView, into d: ImageBuffer) -> Int32 {
        let dw = Int32(d.format.width), dh = Int32(d.format.height)
        if s.pixelFormat == .argb {
            return ARGBScale(s.plane0.base, s.plane0.stride, s.width, s.height, d.plane(0), d.stride(0), dw, dh, kFilterBox)
        }
        return I420Scale(s.plane0.base, s.plane0.stride, s.plane1.base, s.plane1.stride, s.plane2.base, s.plane2.stride,
                         s.width, s.height, d.plane(0), d.stride(0), d.plane(1), d.stride(1), d.plane(2), d.stride(2),
                         dw, dh, kFilterBox)
    }

    /// Rotates `s` clockwise by `rotation` into `d`.
    static func rotate(_ s: ImageView, by rotation: FrameRotation, into d: ImageBuffer) -> Int32 {
        if s.pixelFormat == .argb {
            return ARGBRotate(s.plane0.base, s.plane0.stride, d.plane(0), d.stride(0), s.width, s.height, rotation.libyuvMode)
        }
        return I420Rotate(s.plane0.base, s.plane0.stride, s.plane1.base, s.plane1.stride, s.plane2.base, s.plane2.stride,
                          d.plane(0), d.stride(0), d.plane(1), d.stride(1), d.plane(2), d.stride(2),
                          s.width, s.height, rotation.libyuvMode)
    }

    /// Mirrors `s` left to right into `d`.
    static func mirror(_ s: ImageView, into d: ImageBuffer) -> Int32 {
        if s.pixelFormat == .argb {
            return ARGBMirror(s.plane0.base, s.plane0.stride, d.plane(0), d.stride(0), s.width, s.height)
        }
        return I420Mirror(s.plane0.base, s.plane0.stride, s.plane1.base, s.plane1.stride, s.plane2.base, s.plane2.stride,
                          d.plane(0), d.stride(0), d.plane(1), d.stride(1), d.plane(2), d.stride(2), s.width, s.height)
    }

    /// Writes the I420 view `s` as NV12 into `d`.
    static func interleave(_ s: ImageView, into d: ImageBuffer) -> Int32 {
        I420ToNV12(s.plane0.base, s.plane0.stride, s.plane1.base, s.plane1.stride, s.plane2.base, s.plane2.stride,
                   d.plane(0), d.stride(0), d.plane(1), d.stride(1), s.width, s.height)
    }

    /// Writes the planar 4:2:2 or 4:4:4 view `s` (a decoded JPEG) as I420 into `d`.
    static func subsampleToI420(_ s: ImageView, into d: ImageBuffer) -> Int32 {
        let convert = s.pixelFormat == .planar444 ? I444ToI420 : I422ToI420
        return convert(s.plane0.base, s.plane0.stride, s.plane1.base, s.plane1.stride, s.plane2.base, s.plane2.stride,
                       d.plane(0), d.stride(0), d.plane(1), d.stride(1), d.plane(2), d.stride(2), s.width, s.height)
    }
}
