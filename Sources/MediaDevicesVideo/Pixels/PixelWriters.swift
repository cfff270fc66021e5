import MediaDevicesCore
import CYUV

/// The first step of every conversion: one libyuv call (two for the formats libyuv reads only
/// through an intermediate, `PixelUnpacking`'s among them) from a source view into a buffer already prepared at the
/// view's size. Each function returns libyuv's status (0 on success).
enum PixelWriters {
    /// libyuv's YUV→RGB constants for `colorimetry`.
    static func constants(_ colorimetry: Colorimetry) -> UnsafePointer<YuvConstants> {
        let matrix: Int32 = colorimetry.matrix == .bt709 ? 1 : colorimetry.matrix == .bt2020 ? 2 : 0
        return cyuv_constants(matrix, colorimetry.range == .full ? 1 : 0)
    }

    /// Writes `s` as I420 into `d`. `scratch` holds intermediates for NV16 and 10- and 16-bit
    /// RGB; `unpacked` holds what `PixelUnpacking` prepares for the kinds that need it (a second
    /// pass writes into the other buffer of the two).
    static func toI420(_ s: ImageView, _ kind: PixelKind, _ d: ImageBuffer, scratch: ImageBuffer,
                       unpacked: (ImageBuffer, ImageBuffer)) -> Int32 {
        if let prepared = PixelUnpacking.unpack(s, kind, into: unpacked.0, spare: (d.plane(0), d.stride(0))) {
            guard prepared.status == 0 else { return prepared.status }
            return toI420(prepared.view, prepared.kind, d, scratch: scratch, unpacked: (unpacked.1, unpacked.0))
        }
        let w = s.width, h = s.height
        let (y, ys) = (d.plane(0), d.stride(0))
        var (u, us, v, vs) = (d.plane(1), d.stride(1), d.plane(2), d.stride(2))
        switch kind {
        case .i420(let swapped):
            let (su, sv) = swapped ? (s.plane2, s.plane1) : (s.plane1, s.plane2)
            return I420Copy(s.plane0.base, s.plane0.stride, su.base, su.stride, sv.base, sv.stride, y, ys, u, us, v, vs, w, h)
        case .nv12(let swapped):
            return swapped
                ? NV21ToI420(s.plane0.base, s.plane0.stride, s.plane1.base, s.plane1.stride, y, ys, u, us, v, vs, w, h)
                : NV12ToI420(s.plane0.base, s.plane0.stride, s.plane1.base, s.plane1.stride, y, ys, u, us, v, vs, w, h)
        case .nv16(let swapped):
            let i422 = splitNV16(s, swapped: swapped, into: scratch)
            return I422ToI420(s.plane0.base, s.plane0.stride, i422.plane1.base, i422.plane1.stride,
                              i422.plane2.base, i422.plane2.stride, y, ys, u, us, v, vs, w, h)
        case .yuy2(let swapped):
            if swapped { swap(&u, &v); swap(&us, &vs) }
            return YUY2ToI420(s.plane0.base, s.plane0.stride, y, ys, u, us, v, vs, w, h)
        case .uyvy(let swapped):
            if swapped { swap(&u, &v); swap(&us, &vs) }
            return UYVYToI420(s.plane0.base, s.plane0.stride, y, ys, u, us, v, vs, w, h)
        case .grey: return I400ToI420(s.plane0.base, s.plane0.stride, y, ys, u, us, v, vs, w, h)
        case .argb: return ARGBToI420(s.plane0.base, s.plane0.stride, y, ys, u, us, v, vs, w, h)
        case .bgra: return BGRAToI420(s.plane0.base, s.plane0.stride, y, ys, u, us, v, vs, w, h)
        case .abgr: return ABGRToI420(s.plane0.base, s.plane0.stride, y, ys, u, us, v, vs, w, h)
        case .rgba: return RGBAToI420(s.plane0.base, s.plane0.stride, y, ys, u, us, v, vs, w, h)
        case .raw, .rgb24, .rgb565, .argb1555, .argb4444:
            // libyuv's RAWToI420, RGB24ToI420, RGB565ToI420, ARGB1555ToI420 and ARGB4444ToI420
            // allocate a row buffer per call on x86 (measured: MoreFormatConversionTests,
            // BayerConversionTests): widen to ARGB first instead.
            let argb = widen(s, kind, into: scratch)
            guard argb.status == 0 else { return argb.status }
            return ARGBToI420(argb.view.plane0.base, argb.view.plane0.stride, y, ys, u, us, v, vs, w, h)
        case .ar30:
            let argb = expandAR30(s, into: scratch)
            return ARGBToI420(argb.plane0.base, argb.plane0.stride, y, ys, u, us, v, vs, w, h)
        case .i422(let swapped):
            let (su, sv) = swapped ? (s.plane2, s.plane1) : (s.plane1, s.plane2)
            return I422ToI420(s.plane0.base, s.plane0.stride, su.base, su.stride, sv.base, sv.stride, y, ys, u, us, v, vs, w, h)
        case .i444(let swapped):
            let (su, sv) = swapped ? (s.plane2, s.plane1) : (s.plane1, s.plane2)
            return I444ToI420(s.plane0.base, s.plane0.stride, su.base, su.stride, sv.base, sv.stride, y, ys, u, us, v, vs, w, h)
        case .jpeg, .bayer, .nv24, .yuv32, .grey16, .grey16BigEndian, .bigEndian16, .widened16, .shifted16, .scalar: return -1
        }
    }

    /// Writes `s` as NV12 into `d` when libyuv does it in one call; `nil` otherwise (the caller
    /// goes through I420).
    static func toNV12(_ s: ImageView, _ kind: PixelKind, _ d: ImageBuffer) -> Int32? {
        let w = s.width, h = s.height
        let (y, ys, uv, uvs) = (d.plane(0), d.stride(0), d.plane(1), d.stride(1))
        switch kind {
        case .nv12(false): return NV12Copy(s.plane0.base, s.plane0.stride, s.plane1.base, s.plane1.stride, y, ys, uv, uvs, w, h)
        case .nv12(true): return NV21ToNV12(s.plane0.base, s.plane0.stride, s.plane1.base, s.plane1.stride, y, ys, uv, uvs, w, h)
        case .i420(let swapped):
            let (su, sv) = swapped ? (s.plane2, s.plane1) : (s.plane1, s.plane2)
            return I420ToNV12(s.plane0.base, s.plane0.stride, su.base, su.stride, sv.base, sv.stride, y, ys, uv, uvs, w, h)
        case .yuy2(false): return YUY2ToNV12(s.plane0.base, s.plane0.stride, y, ys, uv, uvs, w, h)
        case .uyvy(false): return UYVYToNV12(s.plane0.base, s.plane0.stride, y, ys, uv, uvs, w, h)
        // Neutral chroma (128, 128) reads the same as NV21 or NV12.
        case .grey: return I400ToNV21(s.plane0.base, s.plane0.stride, y, ys, uv, uvs, w, h)
        case .argb: return ARGBToNV12(s.plane0.base, s.plane0.stride, y, ys, uv, uvs, w, h)
        case .abgr: return ABGRToNV12(s.plane0.base, s.plane0.stride, y, ys, uv, uvs, w, h)
        case .i444(let swapped):
            let (su, sv) = swapped ? (s.plane2, s.plane1) : (s.plane1, s.plane2)
            return I444ToNV12(s.plane0.base, s.plane0.stride, su.base, su.stride, sv.base, sv.stride, y, ys, uv, uvs, w, h)
        default: return nil
        }
    }

    /// Writes `s` as ARGB (bytes B, G, R, A) into `d`, with `s`'s matrix and range for YUV.
    /// `scratch` and `unpacked` as for `toI420`.
    static func toARGB(_ s: ImageView, _ kind: PixelKind, _ d: ImageBuffer, scratch: ImageBuffer,
                       unpacked: (ImageBuffer, ImageBuffer)) -> Int32 {
        if let prepared = PixelUnpacking.unpack(s, kind, into: unpacked.0, spare: (d.plane(0), d.stride(0))) {
            guard prepared.status == 0 else { return prepared.status }
            return toARGB(prepared.view, prepared.kind, d, scratch: scratch, unpacked: (unpacked.1, unpacked.0))
        }
        let w = s.width, h = s.height
        let (a, stride) = (d.plane(0), d.stride(0))
        let k = constants(s.colorimetry)
        let standard = s.colorimetry == .bt601Limited
        switch kind {
        case .i420(let swapped):
            let (su, sv) = swapped ? (s.plane2, s.plane1) : (s.plane1, s.plane2)
            return I420ToARGBMatrix(s.plane0.base, s.plane0.stride, su.base, su.stride, sv.base, sv.stride, a, stride, k, w, h)
        case .nv12(let swapped):
            return swapped
                ? NV21ToARGBMatrix(s.plane0.base, s.plane0.stride, s.plane1.base, s.plane1.stride, a, stride, k, w, h)
                : NV12ToARGBMatrix(s.plane0.base, s.plane0.stride, s.plane1.base, s.plane1.stride, a, stride, k, w, h)
        case .nv16(let swapped):
            let i = splitNV16(s, swapped: swapped, into: scratch)
            return I422ToARGBMatrix(s.plane0.base, s.plane0.stride, i.plane1.base, i.plane1.stride,
                                    i.plane2.base, i.plane2.stride, a, stride, k, w, h)
        case .yuy2(false) where standard: return YUY2ToARGB(s.plane0.base, s.plane0.stride, a, stride, w, h)
        case .uyvy(false) where standard: return UYVYToARGB(s.plane0.base, s.plane0.stride, a, stride, w, h)
        case .yuy2(let swapped), .uyvy(let swapped):
            // libyuv converts packed 4:2:2 straight to ARGB only with BT.601 limited: go
            // through planar 4:2:2 for the other matrices (and for the swapped orders).
            let i = unpack422(s, kind: kind, swapped: swapped, into: scratch)
            guard i.status == 0 else { return i.status }
            return I422ToARGBMatrix(i.view.plane0.base, i.view.plane0.stride, i.view.plane1.base, i.view.plane1.stride,
                                    i.view.plane2.base, i.view.plane2.stride, a, stride, k, w, h)
        case .grey:
            return s.colorimetry.range == .full
                ? J400ToARGB(s.plane0.base, s.plane0.stride, a, stride, w, h)
                : I400ToARGBMatrix(s.plane0.base, s.plane0.stride, a, stride, k, w, h)
        case .raw: return RAWToARGB(s.plane0.base, s.plane0.stride, a, stride, w, h)
        case .rgb24: return RGB24ToARGB(s.plane0.base, s.plane0.stride, a, stride, w, h)
        case .argb: return ARGBCopy(s.plane0.base, s.plane0.stride, a, stride, w, h)
        case .bgra: return BGRAToARGB(s.plane0.base, s.plane0.stride, a, stride, w, h)
        case .abgr: return ABGRToARGB(s.plane0.base, s.plane0.stride, a, stride, w, h)
        case .rgba: return RGBAToARGB(s.plane0.base, s.plane0.stride, a, stride, w, h)
        case .rgb565: return RGB565ToARGB(s.plane0.base, s.plane0.stride, a, stride, w, h)
        case .ar30: return AR30ToARGB(s.plane0.base, s.plane0.stride, a, stride, w, h)
        case .i422(let swapped):
            let (su, sv) = swapped ? (s.plane2, s.plane1) : (s.plane1, s.plane2)
            return I422ToARGBMatrix(s.plane0.base, s.plane0.stride, su.base, su.stride, sv.base, sv.stride, a, stride, k, w, h)
        case .i444(let swapped):
            let (su, sv) = swapped ? (s.plane2, s.plane1) : (s.plane1, s.plane2)
            return I444ToARGBMatrix(s.plane0.base, s.plane0.stride, su.base, su.stride, sv.base, sv.stride, a, stride, k, w, h)
        case .argb1555: return ARGB1555ToARGB(s.plane0.base, s.plane0.stride, a, stride, w, h)
        case .argb4444: return ARGB4444ToARGB(s.plane0.base, s.plane0.stride, a, stride, w, h)
        case .jpeg, .bayer, .nv24, .yuv32, .grey16, .grey16BigEndian, .bigEndian16, .widened16, .shifted16, .scalar: return -1
        }
    }

    /// NV16's interleaved chroma split into planar 4:2:2 chroma in `scratch` (planes 1 and 2 of
    /// the returned view; its plane 0 is unused: the luma stays in the source).
    static func splitNV16(_ s: ImageView, swapped: Bool, into scratch: ImageBuffer) -> ImageView {
        scratch.prepare(.planar422, Size(width: Int(s.width), height: Int(s.height)), colorimetry: s.colorimetry)
        var (u, us, v, vs) = (scratch.plane(1), scratch.stride(1), scratch.plane(2), scratch.stride(2))
        if swapped { swap(&u, &v); swap(&us, &vs) }
        SplitUVPlane(s.plane1.base, s.plane1.stride, u, us, v, vs, (s.width + 1) / 2, s.height)
        return scratch.view
    }

    /// Packed 4:2:2 (YUYV, UYVY and their swapped twins) unpacked into planar 4:2:2 in `scratch`.
    static func unpack422(_ s: ImageView, kind: PixelKind, swapped: Bool, into scratch: ImageBuffer)
        -> (status: Int32, view: ImageView) {
        scratch.prepare(.planar422, Size(width: Int(s.width), height: Int(s.height)), colorimetry: s.colorimetry)
        var (u, us, v, vs) = (scratch.plane(1), scratch.stride(1), scratch.plane(2), scratch.stride(2))
        if swapped { swap(&u, &v); swap(&us, &vs) }
        let status = kind == .yuy2(swapped: swapped)
            ? YUY2ToI422(s.plane0.base, s.plane0.stride, scratch.plane(0), scratch.stride(0), u, us, v, vs, s.width, s.height)
            : UYVYToI422(s.plane0.base, s.plane0.stride, scratch.plane(0), scratch.stride(0), u, us, v, vs, s.width, s.height)
        return (status, scratch.view)
    }

    /// 24- and 16-bit RGB (`raw`, `rgb24`, `rgb565`, `argb1555`, `argb4444`) widened to ARGB in
    /// `scratch`.
    static func widen(_ s: ImageView, _ kind: PixelKind, into scratch: ImageBuffer) -> (status: Int32, view: ImageView) {
        scratch.prepare(.argb, Size(width: Int(s.width), height: Int(s.height)), colorimetry: s.colorimetry)
        let (a, stride) = (scratch.plane(0), scratch.stride(0))
        let status: Int32
        switch kind {
        case .raw: status = RAWToARGB(s.plane0.base, s.plane0.stride, a, stride, s.width, s.height)
        case .rgb24: status = RGB24ToARGB(s.plane0.base, s.plane0.stride, a, stride, s.width, s.height)
        case .rgb565: status = RGB565ToARGB(s.plane0.base, s.plane0.stride, a, stride, s.width, s.height)
        case .argb1555: status = ARGB1555ToARGB(s.plane0.base, s.plane0.stride, a, stride, s.width, s.height)
        case .argb4444: status = ARGB4444ToARGB(s.plane0.base, s.plane0.stride, a, stride, s.width, s.height)
        default: status = -1
        }
        return (status, scratch.view)
    }

    /// 10-bit RGB expanded to 8-bit ARGB in `scratch`.
    static func expandAR30(_ s: ImageView, into scratch: ImageBuffer) -> ImageView {
        scratch.prepare(.argb, Size(width: Int(s.width), height: Int(s.height)), colorimetry: s.colorimetry)
        AR30ToARGB(s.plane0.base, s.plane0.stride, scratch.plane(0), scratch.stride(0), s.width, s.height)
        return scratch.view
    }
}

extension PixelFormat {
    /// Planar 4:2:2 (V4L2 `YUV422P`): an intermediate of the pipeline.
    static let planar422 = PixelFormat("422P", drm: "YU16", name: "YUV422P",
                                       layout: .planar(horizontal: 2, vertical: 1), yuv: true)
    /// Planar 4:4:4 (V4L2 `YUV444M` in one buffer): an intermediate of the pipeline (JPEG 4:4:4).
    static let planar444 = PixelFormat("444P", drm: "YU24", name: "YUV444P",
                                       layout: .planar(horizontal: 1, vertical: 1), yuv: true)
}
