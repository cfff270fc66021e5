import MediaDevicesCore
/// Converts frames of any format the pipeline reads (the raw formats cameras and screens give,
/// MJPEG/JPEG and Bayer) into one ``OutputFormat``, with libyuv, libjpeg-turbo and (for Bayer)
/// libv4lconvert, into buffers it owns.
///
/// When the request needs no scaling, rotation or mirroring, a frame costs one libyuv call from
/// the (cropped) source straight into the output. Otherwise the frame goes to the working format
/// (I420, or ARGB for ARGB output) and through one libyuv call per step. The buffers grow to
/// the largest frame seen and are reused: steady-state conversion allocates nothing (libjpeg
/// allocates inside each JPEG decode; that is its memory manager, not ours).
///
/// To convert a stream of frames yourself, make one converter and call ``convert(_:_:)`` for every
/// frame: the first frame of a shape (format, size, orientation) allocates the converter's
/// buffers and, for MJPEG, its TurboJPEG decompressor; every later frame of that shape reuses
/// them and allocates nothing, except, for MJPEG, what libjpeg-turbo allocates inside each header
/// read and decode (6 blocks a frame with libjpeg-turbo 2.1: its row pointers and per-image
/// memory). A converter made per frame pays the first-frame cost every time. The result lives in
/// the converter's buffers, so it is valid only until the next call: copy what you keep.
///
/// A converter serves one thread at a time (a source's capture thread, typically).
public final class FrameConverter {
    /// The output this converter produces.
    public let output: OutputFormat
    /// The source named in errors.
    let device: String?
    /// Where the result goes: the converter's own buffer, or the caller's (`convert(_:into:_:)`).
    private var out = ImageBuffer()
    private let stage = ImageBuffer()
    private let scratch = ImageBuffer()
    private let unpacked = (ImageBuffer(), ImageBuffer())
    private let stepA = ImageBuffer()
    private let stepB = ImageBuffer()
    private let decoded = ImageBuffer()
    private let decodedNative = ImageBuffer()
    private let jpeg = JPEGFrameDecoder()
    private var bayer: BayerDecoder?
    private var cachedKind: (fourCC: UInt32, drm: UInt32?, kind: PixelKind?)?
    private var cachedPlan: (width: Int, height: Int, format: PixelFormat, orientation: VideoOrientation, plan: ConversionPlan)?
    /// The DCT scale the last MJPEG frame was decoded at (`nil` after a frame of another format).
    private(set) var lastDecodeScale: JPEGScale?

    /// A converter to `output`; `device` names the source in errors. Throws
    /// ``/MediaDevicesCore/MediaDevicesError/Code/unsupportedFormat`` when `output.pixelFormat` is not one
    /// the pipeline produces (NV12, YU12 or ARGB).
    public init(output: OutputFormat, device: String? = nil) throws(MediaDevicesError) {
        guard OutputFormat.producibleFormats.contains(output.pixelFormat) else {
            throw MediaDevicesError(.unsupportedFormat, device: device, operation: "convert",
                                    detail: "the pipeline produces NV12, I420 (YU12) or ARGB, not \(output.pixelFormat.fourCC)")
        }
        if let size = output.size, size.width <= 0 || size.height <= 0 {
            throw MediaDevicesError(.unsupportedFormat, device: device, operation: "convert",
                                    detail: "the output size \(size) is empty")
        }
        self.output = output
        self.device = device
    }

    /// Whether the pipeline reads frames of `format`.
    package static func canConvert(_ format: PixelFormat) -> Bool { PixelKind(format) != nil }

    /// Converts `frame` and calls `body` with the result, which is valid only during the call (it is in the
    /// converter's buffers, which the next call overwrites). Call it again on the same converter for the next
    /// frame: after the first frame of a shape, nothing is allocated (see the type's notes for MJPEG). Throws
    /// ``/MediaDevicesCore/MediaDevicesError/Code/unsupportedFormat`` for a format the pipeline cannot read
    /// and ``/MediaDevicesCore/MediaDevicesError/Code/corruptFrame`` for a frame it cannot use (a corrupt
    /// JPEG, a short buffer): drop that frame and go on. An error `body` throws comes out as a
    /// ``/MediaDevicesCore/MediaDevicesError`` whose ``/MediaDevicesCore/MediaDevicesError/underlying`` is
    /// that error.
    public func convert<R>(_ frame: VideoFrame, _ body: (VideoFrame) throws -> R) throws(MediaDevicesError) -> R {
        try convertTyped(frame) { (converted) throws(MediaDevicesError) in
            try MediaDevicesError.catching(device: device, operation: "FrameConverter.convert's body") { try body(converted) }
        }
    }

    /// `convert(_:_:)` for the library's own bodies, whose errors are already typed.
    func convertTyped<R>(_ frame: VideoFrame, _ body: (VideoFrame) throws(MediaDevicesError) -> R) throws(MediaDevicesError) -> R {
        guard let frameKind = kind(of: frame.format.pixelFormat) else {
            throw MediaDevicesError(.unsupportedFormat, device: device, operation: "convert",
                                    detail: "the pipeline cannot read \(frame.format.pixelFormat.fourCC) frames; ask the source for a raw format")
        }
        let target = output.pixelFormat
        let source: ImageView
        let kind: PixelKind
        lastDecodeScale = nil
        if frameKind == .jpeg {
            let (data, header) = try jpeg.header(of: frame, device: device)
            let size = Size(width: header.width, height: header.height)
            let scale = decodeScale(source: size, layout: header.layout, orientation: frame.orientation)
            // I420 output and nothing else asked: the decode (or the 4:2:0 subsampling) writes
            // straight into `out`.
            let straight = scale.isFull && header.layout != .grey && target == .yu12 && output.crop == nil
                && output.rotation == .none && !output.mirrored && (output.size == nil || output.size == size)
                && (!output.upright || frame.orientation == .up)
            let picture = try jpeg.decode(data, header: header, scale: scale, decoding: output.jpegDecoding,
                                          into: straight ? out : decoded, device: device)
            lastDecodeScale = scale
            if straight { return try out.withFrame(timing: frame, orientation: orientation(of: frame), body) }
            return try convert(frame, decoded: picture, body)
        } else if frameKind == .bayer {
            try Self.checkLength(frame, device: device)
            if bayer == nil { bayer = try BayerDecoder(device: device) }
            decoded.prepare(.rgb24, Size(width: frame.width, height: frame.height), colorimetry: frame.format.colorimetry)
            try bayer!.decode(frame, into: decoded, samples: decodedNative, device: device)
            source = decoded.view
            kind = .raw
        } else {
            try Self.checkLength(frame, device: device)
            source = ImageView(frame)
            kind = frameKind
        }
        let plan = plan(for: Size(width: Int(source.width), height: Int(source.height)), format: source.pixelFormat,
                        orientation: frame.orientation)
        return try finish(frame, source.cropped(to: plan.crop), kind, plan: plan, body)
    }

    /// Converts `frame` from `picture`, its MJPEG image already decoded (by this converter, or
    /// once for several converters at the largest scale any of them needs), and calls `body`
    /// with the result, valid only during the call.
    func convert<R>(_ frame: VideoFrame, decoded picture: DecodedJPEG, _ body: (VideoFrame) throws(MediaDevicesError) -> R) throws(MediaDevicesError) -> R {
        let kind: PixelKind = picture.view.pixelFormat == .grey ? .grey : .i420(swapped: false)
        let plan = plan(for: picture.source, format: picture.view.pixelFormat, orientation: frame.orientation)
            .onDecoded(at: picture.scale, decoded: Size(width: Int(picture.view.width), height: Int(picture.view.height)))
        lastDecodeScale = picture.scale
        return try finish(frame, picture.view.cropped(to: plan.crop), kind, plan: plan, body)
    }

    /// Like `convert(_:decoded:_:)`, into `destination` (a pooled buffer of the caller's).
    func convert<R>(_ frame: VideoFrame, decoded picture: DecodedJPEG, into destination: ImageBuffer,
                    _ body: (VideoFrame) throws(MediaDevicesError) -> R) throws(MediaDevicesError) -> R {
        let own = out
        out = destination
        defer { out = own }
        return try convert(frame, decoded: picture, body)
    }

    /// The DCT scale this converter's request lets an MJPEG frame of `source` pixels decode at
    /// (`layout`: the JPEG's planes; content `orientation`): the smallest TurboJPEG reduction that
    /// still covers the requested size, or `.full`.
    func decodeScale(source: Size, layout: PixelFormat, orientation: VideoOrientation) -> JPEGScale {
        guard output.size != nil, output.jpegScaledDecoding else { return .full }
        return plan(for: source, format: layout == .grey ? .grey : .yu12, orientation: orientation)
            .smallestCoveringScale(source: source)
    }

    /// The last steps of a conversion: from `source` (already cropped to `plan.crop`) in one
    /// call, or through the working format, into `out`; then `body`.
    private func finish<R>(_ frame: VideoFrame, _ source: ImageView, _ kind: PixelKind, plan: ConversionPlan,
                           _ body: (VideoFrame) throws(MediaDevicesError) -> R) throws(MediaDevicesError) -> R {
        let target = output.pixelFormat
        let outputColorimetry = ConversionPlan.colorimetry(of: target, from: frame.format)
        if plan.isDirect {
            out.prepare(target, plan.outputSize, colorimetry: outputColorimetry)
            try write(source, kind, into: out, as: target)
        } else {
            try transform(source, kind, plan: plan, colorimetry: outputColorimetry)
        }
        return try out.withFrame(timing: frame, orientation: orientation(of: frame), body)
    }

    /// Converts `frame` into `destination` (a pooled buffer of the caller's) instead of the
    /// converter's own buffer, and calls `body` with the result, which lives in `destination`.
    func convert<R>(_ frame: VideoFrame, into destination: ImageBuffer, _ body: (VideoFrame) throws(MediaDevicesError) -> R) throws(MediaDevicesError) -> R {
        let own = out
        out = destination
        defer { out = own }
        return try convertTyped(frame, body)
    }

    /// The libyuv family for `format`, worked out once per format change (by fourcc: it is the
    /// per-frame path).
    private func kind(of format: PixelFormat) -> PixelKind? {
        if let cached = cachedKind, cached.fourCC == format.fourCC.rawValue, cached.drm == format.drmFourCC?.rawValue {
            return cached.kind
        }
        let kind = PixelKind(format)
        cachedKind = (format.fourCC.rawValue, format.drmFourCC?.rawValue, kind)
        return kind
    }

    /// The orientation the converted frame carries.
    private func orientation(of frame: VideoFrame) -> VideoOrientation { output.upright ? .up : frame.orientation }

    /// The plan for this source geometry, computed once per format change.
    private func plan(for source: Size, format: PixelFormat, orientation: VideoOrientation) -> ConversionPlan {
        if let cached = cachedPlan, cached.width == source.width, cached.height == source.height,
           cached.format.fourCC == format.fourCC, cached.orientation == orientation {
            return cached.plan
        }
        let plan = ConversionPlan(source: source, orientation: orientation, request: output,
                                  alignment: ConversionPlan.alignment(of: format))
        cachedPlan = (source.width, source.height, format, orientation, plan)
        return plan
    }

    /// One step from the source into `destination` (prepared at the source view's size) in `format`.
    private func write(_ source: ImageView, _ kind: PixelKind, into destination: ImageBuffer, as format: PixelFormat) throws(MediaDevicesError) {
        let status: Int32
        switch format {
        case .argb: status = PixelWriters.toARGB(source, kind, destination, scratch: scratch, unpacked: unpacked)
        case .yu12: status = PixelWriters.toI420(source, kind, destination, scratch: scratch, unpacked: unpacked)
        default:
            if let direct = PixelWriters.toNV12(source, kind, destination) {
                status = direct
            } else {
                stage.prepare(.yu12, Size(width: Int(source.width), height: Int(source.height)), colorimetry: source.colorimetry)
                try check(PixelWriters.toI420(source, kind, stage, scratch: scratch, unpacked: unpacked), "to I420")
                status = GeometrySteps.interleave(stage.view, into: destination)
            }
        }
        try check(status, "\(source.pixelFormat.fourCC) to \(format.fourCC)")
    }

    /// Crop, scale, rotate and mirror through the working format, ending in `out`.
    private func transform(_ source: ImageView, _ kind: PixelKind, plan: ConversionPlan, colorimetry: Colorimetry) throws(MediaDevicesError) {
        let target = output.pixelFormat
        let working: PixelFormat = target == .argb ? .argb : .yu12
        var current = source
        let alreadyWorking = (working == .yu12 && kind == .i420(swapped: false)) || (working == .argb && kind == .argb)
        if !alreadyWorking {
            stage.prepare(working, plan.crop.size, colorimetry: source.colorimetry)
            try write(source, kind, into: stage, as: working)
            current = stage.view
        }
        // Each step writes into the next of two scratch buffers, the last one into `out`.
        // (Plain variables, not a local function capturing them: unoptimized builds box
        // captured variables on the heap.)
        var remaining = (plan.scaledSize != plan.crop.size ? 1 : 0) + (plan.rotation != .none ? 1 : 0) + (plan.mirrored ? 1 : 0)
        var useA = true
        if plan.scaledSize != plan.crop.size {
            remaining -= 1
            let next = remaining == 0 && target == working ? out : (useA ? stepA : stepB)
            useA.toggle()
            next.prepare(working, plan.scaledSize, colorimetry: colorimetry)
            try check(GeometrySteps.scale(current, into: next), "scale")
            current = next.view
        }
        if plan.rotation != .none {
            remaining -= 1
            let next = remaining == 0 && target == working ? out : (useA ? stepA : stepB)
            useA.toggle()
            next.prepare(working, plan.outputSize, colorimetry: colorimetry)
            try check(GeometrySteps.rotate(current, by: plan.rotation, into: next), "rotate")
            current = next.view
        }
        if plan.mirrored {
            let next = target == working ? out : (useA ? stepA : stepB)
            next.prepare(working, plan.outputSize, colorimetry: colorimetry)
            try check(GeometrySteps.mirror(current, into: next), "mirror")
            current = next.view
        }
        if target != working {
            out.prepare(target, plan.outputSize, colorimetry: colorimetry)
            try check(GeometrySteps.interleave(current, into: out), "I420 to NV12")
        }
    }

    /// A raw frame whose planes are shorter than its format needs (a driver error) is corrupt;
    /// `device` names the source in the error.
    static func checkLength(_ frame: VideoFrame, device: String?) throws(MediaDevicesError) {
        guard let layout = frame.format.pixelFormat.layout else { return }
        var index = 0
        while index < min(frame.planeCount, layout.planes.count) {
            let plane = frame.plane(index)
            let rows = layout.planes[index].rows(height: frame.height)
            let needed = (rows - 1) * plane.bytesPerRow + layout.planes[index].minimumBytesPerRow(width: frame.width)
            if plane.bytes.count < needed || plane.bytes.baseAddress == nil {
                throw MediaDevicesError(.corruptFrame, device: device, operation: "convert",
                                        detail: "short frame: plane \(index) has \(plane.bytes.count) bytes of the \(needed) its format needs; the frame is dropped and counted")
            }
            index += 1
        }
    }

    private func check(_ status: Int32, _ step: @autoclosure () -> String) throws(MediaDevicesError) {
        try Self.check(status, step(), device: device)
    }

    /// Throws the error for a libyuv step (named `step`) that returned a failure `status`.
    static func check(_ status: Int32, _ step: @autoclosure () -> String, device: String?) throws(MediaDevicesError) {
        guard status != 0 else { return }
        throw MediaDevicesError(.io, device: device, operation: "convert",
                                detail: "libyuv refused the step \(step()) (status \(status)); this is a MediaDevices bug: please report the formats involved")
    }
}
