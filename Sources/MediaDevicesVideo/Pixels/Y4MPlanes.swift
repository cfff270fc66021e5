import MediaDevicesCore
import CYUV

/// Frames as the planes a YUV4MPEG2 file holds: Y, then Cb and Cr at the chroma resolution the
/// source has (4:2:0, 4:2:2 or 4:4:4), or Y alone for grey. Planar sources are read where they
/// lie; packed and semi-planar ones are split with libyuv (`YUY2ToI422`, `UYVYToI422`,
/// `SplitUVPlane`, `PixelUnpacking`'s passes) and ARGB — what the pipeline makes of RGB, Bayer
/// and HSV — with `ARGBToI444` (BT.601, limited range), into buffers that grow once. A frame
/// costs no allocation.
final class Y4MPlanes {
    /// A Y4M chroma layout: its `C` tag in the stream header.
    enum Chroma: String {
        case c420 = "420jpeg"
        case c422 = "422"
        case c444 = "444"
        case mono = "mono"
    }

    /// The layout `format` is written in, or `nil` when Y4M cannot take it without the pipeline
    /// converting it first (`FrameFileWriter.y4mIntermediate(for:)`).
    static func chroma(of format: PixelFormat) -> Chroma? {
        guard let kind = PixelKind(format) else { return nil }
        return chroma(of: kind)
    }

    private static func chroma(of kind: PixelKind) -> Chroma? {
        switch kind {
        case .i420: return .c420
        case .grey, .grey16, .grey16BigEndian: return .mono
        case .i422, .nv16, .yuy2, .uyvy: return .c422
        case .i444, .nv24, .yuv32, .argb: return .c444
        case .widened16(_, let order): return order == .yuv32(y: 2, u: 1, v: 0) ? .c444 : nil
        default: return nil
        }
    }

    /// The range the written samples have: libyuv's ARGB → I444 gives limited range; the other
    /// sources keep theirs.
    static func range(of format: VideoFormat) -> Colorimetry.Range {
        PixelKind(format.pixelFormat) == .argb ? .limited : format.colorimetry.range
    }

    private let unpacked = (ImageBuffer(), ImageBuffer())
    private let spare = ImageBuffer()
    private let planar = ImageBuffer()
    /// The kind of the last frame's format: making a kind with an indirect case allocates.
    private var cachedKind: (fourCC: UInt32, kind: PixelKind?)?

    /// `frame`'s planes in Y4M's order and resolution (plane 0 alone for grey), valid until the
    /// next call, with libyuv's status (0 on success).
    func planes(of frame: VideoFrame) -> (status: Int32, view: ImageView, chroma: Chroma)? {
        let fourCC = frame.format.pixelFormat.fourCC.rawValue
        if cachedKind?.fourCC != fourCC { cachedKind = (fourCC, PixelKind(frame.format.pixelFormat)) }
        guard var kind = cachedKind?.kind, Self.chroma(of: kind) != nil else { return nil }
        var view = ImageView(frame)
        let size = Size(width: frame.width, height: frame.height)
        var buffers = unpacked
        while kind.needsUnpacking {
            spare.prepare(.grey, size, colorimetry: view.colorimetry)
            guard let pass = PixelUnpacking.unpack(view, kind, into: buffers.0, spare: (spare.plane(0), spare.stride(0))),
                  pass.status == 0 else { return nil }
            (view, kind) = (pass.view, pass.kind)
            buffers = (buffers.1, buffers.0)
        }
        let (w, h) = (view.width, view.height)
        switch kind {
        case .grey:
            return (0, view, .mono)
        case .i420(let swapped), .i422(let swapped), .i444(let swapped):
            if swapped { swap(&view.plane1, &view.plane2) }
            return (0, view, kind == .i420(swapped: swapped) ? .c420 : kind == .i422(swapped: swapped) ? .c422 : .c444)
        case .nv16(let swapped):
            var split = PixelWriters.splitNV16(view, swapped: swapped, into: planar)
            split.plane0 = view.plane0
            return (0, split, .c422)
        case .yuy2(let swapped), .uyvy(let swapped):
            let split = PixelWriters.unpack422(view, kind: kind, swapped: swapped, into: planar)
            return (split.status, split.view, .c422)
        case .argb:
            planar.prepare(.planar444, size, colorimetry: .bt601Limited)
            let status = ARGBToI444(view.plane0.base, view.plane0.stride, planar.plane(0), planar.stride(0),
                                    planar.plane(1), planar.stride(1), planar.plane(2), planar.stride(2), w, h)
            return (status, planar.view, .c444)
        default:
            return nil
        }
    }
}
