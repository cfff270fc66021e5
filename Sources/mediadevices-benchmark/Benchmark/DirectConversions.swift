import CYUV
import MediaDevices
import MediaDevicesCommandLine

/// The libyuv calls the pipeline makes for one conversion (see `PixelWriters` and
/// `GeometrySteps` in the library), made directly on the benchmark's own buffers: the reference
/// the pipeline's overhead is measured against. Where the pipeline needs more than one call
/// (formats libyuv reads only through an intermediate), the reference makes the same chain.
final class DirectConversion {
    /// The libyuv functions called, in order (`YUY2ToI420 + I420ToNV12`).
    let calls: String
    let run: () -> Int32
    private let scratch: [UnsafeMutableRawPointer]

    private init(_ calls: String, scratch: [UnsafeMutableRawPointer] = [], _ run: @escaping () -> Int32) {
        self.calls = calls
        self.run = run
        self.scratch = scratch
    }

    deinit { for block in scratch { block.deallocate() } }

    typealias Pointer = UnsafeMutablePointer<UInt8>

    /// The family libyuv reads `format` with, by V4L2 fourcc (as the library's `PixelKind`).
    static func family(_ format: PixelFormat) -> (name: String, swapped: Bool)? {
        switch format.fourCC.description {
        case "YU12", "YM12": return ("i420", false)
        case "YV12": return ("i420", true)
        case "NV12", "NM12": return ("nv12", false)
        case "NV21", "NM21": return ("nv12", true)
        case "NV16": return ("nv16", false)
        case "NV61": return ("nv16", true)
        case "YUYV": return ("yuy2", false)
        case "YVYU": return ("yuy2", true)
        case "UYVY": return ("uyvy", false)
        case "VYUY": return ("uyvy", true)
        case "GREY": return ("grey", false)
        case "RGB3": return ("raw", false)
        case "BGR3": return ("rgb24", false)
        case "AR24", "XR24": return ("argb", false)
        case "BA24", "BX24": return ("bgra", false)
        case "AB24", "XB24": return ("abgr", false)
        case "RA24", "RX24": return ("rgba", false)
        case "RGBP": return ("rgb565", false)
        default: return nil
        }
    }

    /// The calls converting `source` (cropped to `crop`, whole when nil) into `target` (NV12,
    /// I420 or ARGB) at the crop's size; nil for a source the pipeline does not read.
    static func make(source s: BenchmarkImage, target d: BenchmarkImage, crop: (x: Int, y: Int, width: Int, height: Int)? = nil) -> DirectConversion? {
        guard let (family, swapped) = family(s.format.pixelFormat) else { return nil }
        let region = crop ?? (0, 0, s.format.width, s.format.height)
        let w = Int32(region.width), h = Int32(region.height)
        // Source planes, moved to the crop's corner.
        let sourcePlaneCount = s.format.planeLocations.count
        func source(_ index: Int) -> (Pointer?, Int32) {
            guard index < sourcePlaneCount else { return (nil, 0) }
            let bytesPerPixel = index == 0 ? (s.format.bytesPerRow[0] / max(s.format.width, 1)) : 0
            let chromaRows = family == "nv16" ? region.y : region.y / 2
            let offset = index == 0 ? region.y * Int(s.stride(0)) + region.x * bytesPerPixel
                : chromaRows * Int(s.stride(index)) + (family == "i420" ? region.x / 2 : region.x)
            return (s.plane(index) + offset, s.stride(index))
        }
        let (s0, ss0) = source(0), (s1raw, ss1raw) = source(1), (s2raw, ss2raw) = source(2)
        // Planar sources with swapped chroma read V first.
        let (s1, ss1, s2, ss2) = family == "i420" && swapped ? (s2raw, ss2raw, s1raw, ss1raw) : (s1raw, ss1raw, s2raw, ss2raw)
        var blocks: [UnsafeMutableRawPointer] = []
        func scratch(_ bytes: Int) -> Pointer {
            let block = UnsafeMutableRawPointer.allocate(byteCount: bytes, alignment: 64)
            blocks.append(block)
            return block.assumingMemoryBound(to: UInt8.self)
        }
        let halfWidth = (w + 1) / 2

        /// Writes the source as I420 into the given planes, as `PixelWriters.toI420` does.
        func toI420(_ y: Pointer, _ ys: Int32, _ u: Pointer, _ us: Int32, _ v: Pointer, _ vs: Int32) -> (String, () -> Int32) {
            switch family {
            case "i420": return ("I420Copy", { I420Copy(s0, ss0, s1, ss1, s2, ss2, y, ys, u, us, v, vs, w, h) })
            case "nv12": return swapped ? ("NV21ToI420", { NV21ToI420(s0, ss0, s1, ss1, y, ys, u, us, v, vs, w, h) })
                : ("NV12ToI420", { NV12ToI420(s0, ss0, s1, ss1, y, ys, u, us, v, vs, w, h) })
            case "nv16":
                let su = scratch(Int(halfWidth * h)), sv = scratch(Int(halfWidth * h))
                let (pu, pv) = swapped ? (sv, su) : (su, sv)
                return ("SplitUVPlane + I422ToI420", {
                    SplitUVPlane(s1, ss1, pu, halfWidth, pv, halfWidth, halfWidth, h)
                    return I422ToI420(s0, ss0, su, halfWidth, sv, halfWidth, y, ys, u, us, v, vs, w, h)
                })
            case "yuy2": return swapped ? ("YUY2ToI420", { YUY2ToI420(s0, ss0, y, ys, v, vs, u, us, w, h) })
                : ("YUY2ToI420", { YUY2ToI420(s0, ss0, y, ys, u, us, v, vs, w, h) })
            case "uyvy": return swapped ? ("UYVYToI420", { UYVYToI420(s0, ss0, y, ys, v, vs, u, us, w, h) })
                : ("UYVYToI420", { UYVYToI420(s0, ss0, y, ys, u, us, v, vs, w, h) })
            case "grey": return ("I400ToI420", { I400ToI420(s0, ss0, y, ys, u, us, v, vs, w, h) })
            case "raw": return ("RAWToI420", { RAWToI420(s0, ss0, y, ys, u, us, v, vs, w, h) })
            case "rgb24": return ("RGB24ToI420", { RGB24ToI420(s0, ss0, y, ys, u, us, v, vs, w, h) })
            case "argb": return ("ARGBToI420", { ARGBToI420(s0, ss0, y, ys, u, us, v, vs, w, h) })
            case "bgra": return ("BGRAToI420", { BGRAToI420(s0, ss0, y, ys, u, us, v, vs, w, h) })
            case "abgr": return ("ABGRToI420", { ABGRToI420(s0, ss0, y, ys, u, us, v, vs, w, h) })
            case "rgba": return ("RGBAToI420", { RGBAToI420(s0, ss0, y, ys, u, us, v, vs, w, h) })
            default: return ("RGB565ToI420", { RGB565ToI420(s0, ss0, y, ys, u, us, v, vs, w, h) })
            }
        }

        let target = d.format.pixelFormat
        let result: (String, () -> Int32)
        if target == .yu12 {
            result = toI420(d.plane(0), d.stride(0), d.plane(1), d.stride(1), d.plane(2), d.stride(2))
        } else if target == .nv12 {
            let (y, ys, uv, uvs) = (d.plane(0), d.stride(0), d.plane(1), d.stride(1))
            switch (family, swapped) {
            case ("nv12", false): result = ("NV12Copy", { NV12Copy(s0, ss0, s1, ss1, y, ys, uv, uvs, w, h) })
            case ("nv12", true): result = ("NV21ToNV12", { NV21ToNV12(s0, ss0, s1, ss1, y, ys, uv, uvs, w, h) })
            case ("i420", _): result = ("I420ToNV12", { I420ToNV12(s0, ss0, s1, ss1, s2, ss2, y, ys, uv, uvs, w, h) })
            case ("yuy2", false): result = ("YUY2ToNV12", { YUY2ToNV12(s0, ss0, y, ys, uv, uvs, w, h) })
            case ("uyvy", false): result = ("UYVYToNV12", { UYVYToNV12(s0, ss0, y, ys, uv, uvs, w, h) })
            case ("grey", _): result = ("I400ToNV21", { I400ToNV21(s0, ss0, y, ys, uv, uvs, w, h) })
            case ("argb", _): result = ("ARGBToNV12", { ARGBToNV12(s0, ss0, y, ys, uv, uvs, w, h) })
            case ("abgr", _): result = ("ABGRToNV12", { ABGRToNV12(s0, ss0, y, ys, uv, uvs, w, h) })
            default:
                // Through I420, as the pipeline does.
                let cw = halfWidth, ch = (h + 1) / 2
                let (iy, iu, iv) = (scratch(Int(w * h)), scratch(Int(cw * ch)), scratch(Int(cw * ch)))
                let first = toI420(iy, w, iu, cw, iv, cw)
                result = (first.0 + " + I420ToNV12", {
                    let status = first.1()
                    return status != 0 ? status : I420ToNV12(iy, w, iu, cw, iv, cw, y, ys, uv, uvs, w, h)
                })
            }
        } else {
            let (a, stride) = (d.plane(0), d.stride(0))
            let k = constants(s.format.colorimetry)
            let standard = s.format.colorimetry == .bt601Limited
            switch family {
            case "i420": result = ("I420ToARGBMatrix", { I420ToARGBMatrix(s0, ss0, s1, ss1, s2, ss2, a, stride, k, w, h) })
            case "nv12": result = swapped ? ("NV21ToARGBMatrix", { NV21ToARGBMatrix(s0, ss0, s1, ss1, a, stride, k, w, h) })
                : ("NV12ToARGBMatrix", { NV12ToARGBMatrix(s0, ss0, s1, ss1, a, stride, k, w, h) })
            case "nv16":
                let su = scratch(Int(halfWidth * h)), sv = scratch(Int(halfWidth * h))
                let (pu, pv) = swapped ? (sv, su) : (su, sv)
                result = ("SplitUVPlane + I422ToARGBMatrix", {
                    SplitUVPlane(s1, ss1, pu, halfWidth, pv, halfWidth, halfWidth, h)
                    return I422ToARGBMatrix(s0, ss0, su, halfWidth, sv, halfWidth, a, stride, k, w, h)
                })
            case "yuy2" where standard && !swapped: result = ("YUY2ToARGB", { YUY2ToARGB(s0, ss0, a, stride, w, h) })
            case "uyvy" where standard && !swapped: result = ("UYVYToARGB", { UYVYToARGB(s0, ss0, a, stride, w, h) })
            case "yuy2", "uyvy":
                let (py, su, sv) = (scratch(Int(w * h)), scratch(Int(halfWidth * h)), scratch(Int(halfWidth * h)))
                let (pu, pv) = swapped ? (sv, su) : (su, sv)
                let unpack = family == "yuy2" ? YUY2ToI422 : UYVYToI422
                result = ((family == "yuy2" ? "YUY2ToI422" : "UYVYToI422") + " + I422ToARGBMatrix", {
                    let status = unpack(s0, ss0, py, w, pu, halfWidth, pv, halfWidth, w, h)
                    return status != 0 ? status : I422ToARGBMatrix(py, w, su, halfWidth, sv, halfWidth, a, stride, k, w, h)
                })
            case "grey":
                result = s.format.colorimetry.range == .full ? ("J400ToARGB", { J400ToARGB(s0, ss0, a, stride, w, h) })
                    : ("I400ToARGBMatrix", { I400ToARGBMatrix(s0, ss0, a, stride, k, w, h) })
            case "raw": result = ("RAWToARGB", { RAWToARGB(s0, ss0, a, stride, w, h) })
            case "rgb24": result = ("RGB24ToARGB", { RGB24ToARGB(s0, ss0, a, stride, w, h) })
            case "argb": result = ("ARGBCopy", { ARGBCopy(s0, ss0, a, stride, w, h) })
            case "bgra": result = ("BGRAToARGB", { BGRAToARGB(s0, ss0, a, stride, w, h) })
            case "abgr": result = ("ABGRToARGB", { ABGRToARGB(s0, ss0, a, stride, w, h) })
            case "rgba": result = ("RGBAToARGB", { RGBAToARGB(s0, ss0, a, stride, w, h) })
            default: result = ("RGB565ToARGB", { RGB565ToARGB(s0, ss0, a, stride, w, h) })
            }
        }
        return DirectConversion(result.0, scratch: blocks, result.1)
    }

    /// libyuv's YUV→RGB constants for `colorimetry`, chosen as the pipeline chooses them.
    static func constants(_ colorimetry: Colorimetry) -> UnsafePointer<YuvConstants> {
        let matrix: Int32 = colorimetry.matrix == .bt709 ? 1 : colorimetry.matrix == .bt2020 ? 2 : 0
        return cyuv_constants(matrix, colorimetry.range == .full ? 1 : 0)
    }

    /// The chain the pipeline makes for a crop + scale (+ rotation) request from a YUYV source
    /// to NV12: YUY2ToI420 of the cropped region, I420Scale (box) and/or I420Rotate, I420ToNV12.
    static func geometry(source s: BenchmarkImage, crop: (x: Int, y: Int, width: Int, height: Int),
                         scaledWidth: Int, scaledHeight: Int, rotation: RotationMode, target d: BenchmarkImage) -> DirectConversion {
        let scales = scaledWidth != crop.width || scaledHeight != crop.height
        let rotates = rotation != kRotate0
        if !scales && !rotates, let direct = make(source: s, target: d, crop: crop) {
            return direct   // a crop alone is one call from the cropped source, as in the pipeline
        }
        var blocks: [UnsafeMutableRawPointer] = []
        func scratch(_ bytes: Int) -> Pointer {
            let block = UnsafeMutableRawPointer.allocate(byteCount: bytes, alignment: 64)
            blocks.append(block)
            return block.assumingMemoryBound(to: UInt8.self)
        }
        func i420(_ width: Int, _ height: Int) -> (Pointer, Int32, Pointer, Int32, Pointer, Int32) {
            let cw = (width + 1) / 2, ch = (height + 1) / 2
            return (scratch(width * height), Int32(width), scratch(cw * ch), Int32(cw), scratch(cw * ch), Int32(cw))
        }
        let cw = Int32(crop.width), chh = Int32(crop.height)
        let source = s.plane(0) + crop.y * Int(s.stride(0)) + crop.x * 2
        let ss = s.stride(0)
        let stage = i420(crop.width, crop.height)
        let scaled = scales ? i420(scaledWidth, scaledHeight) : stage
        let turned = rotates ? (rotation == kRotate90 || rotation == kRotate270 ? i420(scaledHeight, scaledWidth) : i420(scaledWidth, scaledHeight)) : scaled
        let sw = Int32(scaledWidth), sh = Int32(scaledHeight)
        let ow = Int32(d.format.width), oh = Int32(d.format.height)
        let (y, ys, uv, uvs) = (d.plane(0), d.stride(0), d.plane(1), d.stride(1))
        var calls = ["YUY2ToI420"]
        if scales { calls.append("I420Scale") }
        if rotates { calls.append("I420Rotate") }
        calls.append("I420ToNV12")
        return DirectConversion(calls.joined(separator: " + "), scratch: blocks) {
            var status = YUY2ToI420(source, ss, stage.0, stage.1, stage.2, stage.3, stage.4, stage.5, cw, chh)
            if status == 0 && scales {
                status = I420Scale(stage.0, stage.1, stage.2, stage.3, stage.4, stage.5, cw, chh,
                                   scaled.0, scaled.1, scaled.2, scaled.3, scaled.4, scaled.5, sw, sh, kFilterBox)
            }
            if status == 0 && rotates {
                status = I420Rotate(scaled.0, scaled.1, scaled.2, scaled.3, scaled.4, scaled.5,
                                    turned.0, turned.1, turned.2, turned.3, turned.4, turned.5, sw, sh, rotation)
            }
            return status != 0 ? status
                : I420ToNV12(turned.0, turned.1, turned.2, turned.3, turned.4, turned.5, y, ys, uv, uvs, ow, oh)
        }
    }
}
