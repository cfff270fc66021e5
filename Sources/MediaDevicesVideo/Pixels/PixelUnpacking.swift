import MediaDevicesCore
import CYUV

/// The formats libyuv converts only after one preparatory pass, which turns them into a kind
/// its converters read directly (`PixelKind.needsUnpacking`). Each pass is one libyuv call into
/// a scratch buffer prepared at the view's size (grown once, like every buffer of the pipeline):
///
/// - NV24/NV42: `SplitUVPlane` → planar 4:4:4 (the luma stays in the source).
/// - packed 32-bit 4:4:4 YUV: `SplitARGBPlane` (a per-byte split) → planar 4:4:4.
/// - Y10/Y12/Y16: `Convert16To8Plane` → 8-bit grey.
/// - Y16_BE: `SplitUVPlane` (high bytes one way, low bytes the other) → 8-bit grey.
/// - big-endian 16-bit RGB: `SwapUVPlane` (swaps each byte pair) → the little-endian format.
/// - 16-bit RGB in orders other than A/X-R-G-B: `ARGB1555ToARGB` / `ARGB4444ToARGB` → a 32-bit
///   format whose byte order is then fixed by the writer (`ABGRToARGB`...); packed 16-bit YUV the
///   same way → packed 32-bit YUV, which a second pass splits.
/// - 16-bit RGB with the alpha bit last: `ConvertToLSBPlane_16` (each word shifted right by one)
///   → the A/X-first layout.
/// - RGB332, BGR666, HSV: `ScalarUnpacking` (no library reads them) → ARGB.
///
/// A pass may return a kind that needs a second pass (packed 16-bit YUV, BGRX555): the writers
/// give that pass the other of their two unpacking buffers, so no pass reads what it writes.
enum PixelUnpacking {
    /// `s` rewritten into `scratch` as the returned kind, with libyuv's status (0 on success);
    /// `nil` when `kind` needs no pass. `spare` is memory of at least `s.width` × `s.height`
    /// bytes with its row stride that the pass may fill with bytes it throws away (alpha, the
    /// low byte of Y16_BE): the writer's destination plane 0, overwritten by the writer after.
    static func unpack(_ s: ImageView, _ kind: PixelKind, into scratch: ImageBuffer,
                       spare: (base: UnsafeMutablePointer<UInt8>, stride: Int32))
        -> (status: Int32, view: ImageView, kind: PixelKind)? {
        let (w, h) = (s.width, s.height)
        let size = Size(width: Int(w), height: Int(h))
        switch kind {
        case .nv24(let swapped):
            scratch.prepare(.planar444, size, colorimetry: s.colorimetry)
            var (u, us, v, vs) = (scratch.plane(1), scratch.stride(1), scratch.plane(2), scratch.stride(2))
            if swapped { swap(&u, &v); swap(&us, &vs) }
            SplitUVPlane(s.plane1.base, s.plane1.stride, u, us, v, vs, w, h)
            var view = scratch.view
            view.plane0 = s.plane0
            return (0, view, .i444(swapped: false))
        case .yuv32(let y, let u, let v):
            scratch.prepare(.planar444, size, colorimetry: s.colorimetry)
            // libyuv's ARGB is bytes B, G, R, A: byte 0 goes to its "B" plane, and so on. The
            // alpha byte is thrown away: skipped when it is the last one, else into `spare`.
            let (b, bs) = destination(ofByte: 0, y: y, u: u, v: v, scratch, spare)
            let (g, gs) = destination(ofByte: 1, y: y, u: u, v: v, scratch, spare)
            let (r, rs) = destination(ofByte: 2, y: y, u: u, v: v, scratch, spare)
            let (a, alphaStride) = destination(ofByte: 3, y: y, u: u, v: v, scratch, spare)
            SplitARGBPlane(s.plane0.base, s.plane0.stride, r, rs, g, gs, b, bs, a, alphaStride, w, h)
            return (0, scratch.view, .i444(swapped: false))
        case .grey16(let bits):
            scratch.prepare(.grey, size, colorimetry: s.colorimetry)
            let samples = UnsafeRawPointer(s.plane0.base)?.assumingMemoryBound(to: UInt16.self)
            // libyuv's scale: 16384 for 10 bits, 4096 for 12, 256 for 16 (value × scale >> 16).
            Convert16To8Plane(samples, s.plane0.stride / 2, scratch.plane(0), scratch.stride(0), 1 << (24 - bits), w, h)
            return (0, scratch.view, .grey)
        case .grey16BigEndian:
            scratch.prepare(.grey, size, colorimetry: s.colorimetry)
            SplitUVPlane(s.plane0.base, s.plane0.stride, scratch.plane(0), scratch.stride(0), spare.base, spare.stride, w, h)
            return (0, scratch.view, .grey)
        case .bigEndian16(let inner):
            scratch.prepare(s.pixelFormat, size, colorimetry: s.colorimetry)
            SwapUVPlane(s.plane0.base, s.plane0.stride, scratch.plane(0), scratch.stride(0), w, h)
            return (0, scratch.view, inner)
        case .widened16(let inner, let order):
            let widened = PixelWriters.widen(s, inner, into: scratch)
            return (widened.status, widened.view, order)
        case .shifted16(let inner):
            scratch.prepare(s.pixelFormat, size, colorimetry: s.colorimetry)
            let words = UnsafeRawPointer(s.plane0.base)?.assumingMemoryBound(to: UInt16.self)
            let out = UnsafeMutableRawPointer(scratch.plane(0)).assumingMemoryBound(to: UInt16.self)
            // libyuv's scale: value × 2^15 >> 16, one bit to the right.
            ConvertToLSBPlane_16(words, s.plane0.stride / 2, out, scratch.stride(0) / 2, w, h, 15)
            return (0, scratch.view, inner)
        case .scalar(let layout):
            scratch.prepare(.argb, size, colorimetry: s.colorimetry)
            let status = ScalarUnpacking.toARGB(layout, s.plane0, scratch.plane(0), scratch.stride(0), width: w, height: h,
                                                hueSteps: s.colorimetry.hueSteps ?? 180)
            return (status, scratch.view, .argb)
        default:
            return nil
        }
    }

    /// Where byte `index` of a packed 32-bit YUV pixel goes: its plane of `scratch` (planar
    /// 4:4:4), or for the alpha byte nothing (the last byte) or `spare`.
    private static func destination(ofByte index: Int, y: Int, u: Int, v: Int, _ scratch: ImageBuffer,
                                     _ spare: (base: UnsafeMutablePointer<UInt8>, stride: Int32)) -> (UnsafeMutablePointer<UInt8>?, Int32) {
        switch index {
        case y: return (scratch.plane(0), scratch.stride(0))
        case u: return (scratch.plane(1), scratch.stride(1))
        case v: return (scratch.plane(2), scratch.stride(2))
        case 3: return (nil, 0)
        default: return (spare.base, spare.stride)
        }
    }
}
