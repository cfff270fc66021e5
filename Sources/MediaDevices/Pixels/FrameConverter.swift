/// Converts frames of any format the pipeline reads (the raw formats cameras and screens give,
/// MJPEG/JPEG and Bayer) into one `OutputFormat`, with libyuv, libjpeg-turbo and (for Bayer)
/// libv4lconvert, into buffers it owns.
///
/// When the request needs no scaling, rotation or mirroring, a frame costs one libyuv call from
/// the (cropped) source straight into the output. Otherwise the frame goes to the working format
/// (I420, or ARGB for ARGB output) and through one libyuv call per step. The buffers grow to
/// the largest frame seen and are reused: steady-state conversion allocates nothing (libjpeg
/// allocates inside each JPEG decode; that is its memory manager, not ours).
///
/// A converter serves one thread at a time (a source's capture thread, typically).
public final class FrameConverter: @unchecked Sendable {
    /// The output this converter produces.
    public let output: OutputFormat
    private let device: String?
    /// Where the result goes: the converter's own buffer, or the caller's (`convert(_:into:_:)`).
    private var out = ImageBuffer()
    private let stage = ImageBuffer()
    private let scratch = ImageBuffer()
    private let unpacked = (ImageBuffer(), ImageBuffer())
    private let stepA = ImageBuffer()
    private let stepB = ImageBuffer()
    private let decoded = ImageBuffer()
    private let decodedNative = ImageBuffer()
    private var jpeg: JPEGDecoder?
    private var bayer: BayerDecoder?
    private var cachedKind: (fourCC: UInt32, drm: UInt32?, kind: PixelKind?)?
    private var cachedPlan: (width: Int32, height: Int32, format: PixelFormat, orientation: VideoOrientation, plan: ConversionPlan)?

    /// A converter to `output`; `device` names the source in errors. Throws `.unsupportedFormat`
    /// when `output.pixelFormat` is not one of `OutputFormat.producibleFormats`.
    public init(output: OutputFormat, device: String? = nil) throws {
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
    public static func canConvert(_ format: PixelFormat) -> Bool { PixelKind(format) != nil }

    /// Converts `frame` and calls `body` with the result, which is valid only during the call.
    /// Throws `.unsupportedFormat` for a format the pipeline cannot read and `.corruptFrame` for
    /// a frame it cannot use (a corrupt JPEG, a short buffer): drop that frame and go on.
    public func convert<R>(_ frame: VideoFrame, _ body: (VideoFrame) throws -> R) throws -> R {
        guard let frameKind = kind(of: frame.format.pixelFormat) else {
            throw MediaDevicesError(.unsupportedFormat, device: device, operation: "convert",
                                    detail: "the pipeline cannot read \(frame.format.pixelFormat.fourCC) frames; ask the source for a raw format")
        }
        let target = output.pixelFormat
        var source: ImageView
        var kind = frameKind
        if frameKind == .jpeg {
            if try decodeJPEG(frame, target: target) {
                return try out.withFrame(timing: frame, orientation: orientation(of: frame), body)
            }
            source = decoded.view
            kind = source.pixelFormat == .grey ? .grey : .i420(swapped: false)
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
        }
        let plan = plan(for: source, orientation: frame.orientation)
        source = source.cropped(to: plan.crop)
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
    func convert<R>(_ frame: VideoFrame, into destination: ImageBuffer, _ body: (VideoFrame) throws -> R) throws -> R {
        let own = out
        out = destination
        defer { out = own }
        return try convert(frame, body)
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
    private func plan(for source: ImageView, orientation: VideoOrientation) -> ConversionPlan {
        if let cached = cachedPlan, cached.width == source.width, cached.height == source.height,
           cached.format.fourCC == source.pixelFormat.fourCC, cached.orientation == orientation {
            return cached.plan
        }
        let plan = ConversionPlan(source: Size(width: Int(source.width), height: Int(source.height)),
                                  orientation: orientation, request: output,
                                  alignment: ConversionPlan.alignment(of: source.pixelFormat))
        cachedPlan = (source.width, source.height, source.pixelFormat, orientation, plan)
        return plan
    }

    /// One step from the source into `destination` (prepared at the source view's size) in `format`.
    private func write(_ source: ImageView, _ kind: PixelKind, into destination: ImageBuffer, as format: PixelFormat) throws {
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
    private func transform(_ source: ImageView, _ kind: PixelKind, plan: ConversionPlan, colorimetry: Colorimetry) throws {
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

    /// Decodes a JPEG frame into `decoded` (I420 or grey) and returns false; or, when the output
    /// is I420 and the request needs nothing else, writes the I420 image straight into `out`
    /// (decoding into it, or subsampling 4:2:2/4:4:4 into it) and returns true.
    private func decodeJPEG(_ frame: VideoFrame, target: PixelFormat) throws -> Bool {
        if jpeg == nil { jpeg = try JPEGDecoder() }
        let decoder = jpeg!
        let whole = frame.plane(0).bytes
        let data = UnsafeRawBufferPointer(rebasing: whole[0..<min(max(frame.bytesUsed, 0), whole.count)])
        let header = try decoder.header(data, device: device)
        let size = Size(width: header.width, height: header.height)
        // A corrupt header can claim up to 65535x65535 from a few hundred bytes: gigabytes of
        // buffers (kept: they grow to the largest frame). Larger than the stream's size (plus one
        // 16-pixel MCU of slack) is a corrupt frame. Found by the fuzzer.
        let stream = frame.format
        if stream.width > 0, stream.height > 0, header.width > stream.width + 16 || header.height > stream.height + 16 {
            throw MediaDevicesError(.corruptFrame, device: device, operation: "JPEG decode",
                                    detail: "the JPEG header says \(size), larger than the stream's \(stream.width)x\(stream.height); the frame is dropped and counted")
        }
        // I420 output and nothing else asked: the last step writes straight into `out`.
        let straight = target == .yu12 && output.crop == nil && output.rotation == .none && !output.mirrored
            && (output.size == nil || output.size == size) && (!output.upright || frame.orientation == .up)
        if header.layout == .yu12 && straight {
            out.prepare(.yu12, size, colorimetry: .jpeg)
            try decoder.decode(data, header: header, into: out, decoding: output.jpegDecoding, device: device)
            return true
        }
        if header.layout == .yu12 || header.layout == .grey {
            decoded.prepare(header.layout, size, colorimetry: .jpeg)
            try decoder.decode(data, header: header, into: decoded, decoding: output.jpegDecoding, device: device)
        } else {
            decodedNative.prepare(header.layout, size, colorimetry: .jpeg)
            try decoder.decode(data, header: header, into: decodedNative, decoding: output.jpegDecoding, device: device)
            let destination = straight ? out : decoded
            destination.prepare(.yu12, size, colorimetry: .jpeg)
            try check(GeometrySteps.subsampleToI420(decodedNative.view, into: destination), "JPEG chroma to 4:2:0")
            if straight { return true }
        }
        return false
    }

    /// A raw frame whose planes are shorter than its format needs (a driver error) is corrupt;
    /// `device` names the source in the error.
    static func checkLength(_ frame: VideoFrame, device: String?) throws {
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

    private func check(_ status: Int32, _ step: @autoclosure () -> String) throws {
        guard status != 0 else { return }
        throw MediaDevicesError(.io, device: device, operation: "convert",
                                detail: "libyuv refused the step \(step()) (status \(status)); this is a MediaDevices bug: please report the formats involved")
    }
}
