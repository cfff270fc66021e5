import MediaDevicesCore
/// What a consumer asks of a stream (Twilio's `requestOutputFormat`): a pixel format, a size
/// reached by centre-cropping to its aspect ratio and then scaling, a rotation and mirroring.
/// Several consumers of one source may ask for different outputs.
public struct OutputFormat: Sendable, Hashable, CustomStringConvertible {
    /// The output pixel format: ``PixelFormat/nv12``, ``PixelFormat/yu12`` (I420) or ``PixelFormat/argb``.
    public var pixelFormat: PixelFormat
    /// The output size, after rotation; `nil` keeps the (cropped, rotated) source size.
    public var size: Size?
    /// A clockwise rotation, applied after cropping and scaling.
    public var rotation: FrameRotation
    /// Rotate each frame by its own ``VideoFrame/orientation`` as well, so that it arrives upright
    /// (``VideoOrientation/up``).
    public var upright: Bool
    /// Mirror left to right, last (a selfie view).
    public var mirrored: Bool
    /// A region of the source to use, before everything else; `nil` is the whole frame.
    public var crop: Rect?
    /// How MJPEG/JPEG frames are decoded (``JPEGDecoding/fast`` unless asked; see ``JPEGDecoding``). Raw
    /// sources ignore it.
    public var jpegDecoding: JPEGDecoding
    /// Whether an MJPEG/JPEG frame may be decoded at 1/2, 1/4 or 1/8 of its size inside
    /// libjpeg-turbo's inverse DCT when this output needs at most that much of it (`true` unless
    /// asked; a fraction of the decoding cost). `false` decodes the whole picture, then scales:
    /// the bytes earlier releases produced. Raw sources ignore it.
    public var jpegScaledDecoding: Bool

    /// The formats the pipeline produces.
    package static let producibleFormats: [PixelFormat] = [.nv12, .yu12, .argb]

    /// An output request. `pixelFormat` must be one the pipeline produces: ``PixelFormat/nv12``,
    /// ``PixelFormat/yu12`` (I420) or ``PixelFormat/argb``.
    public init(_ pixelFormat: PixelFormat = .nv12, size: Size? = nil, rotation: FrameRotation = .none,
                upright: Bool = false, mirrored: Bool = false, crop: Rect? = nil, jpegDecoding: JPEGDecoding = .fast,
                jpegScaledDecoding: Bool = true) {
        self.pixelFormat = pixelFormat
        self.size = size
        self.rotation = rotation
        self.upright = upright
        self.mirrored = mirrored
        self.crop = crop
        self.jpegDecoding = jpegDecoding
        self.jpegScaledDecoding = jpegScaledDecoding
    }

    /// Parses an output pixel format: `NV12`, `I420`/`YU12`, `ARGB` (libyuv's: bytes B, G, R, A).
    package static func pixelFormat(parsing text: String) -> PixelFormat? {
        switch text.uppercased() {
        case "ARGB", "AR24", "BGRA8888": return .argb
        case "I420", "YU12", "IYUV": return .yu12
        case "NV12": return .nv12
        default: return nil
        }
    }

    /// The format frames of `source` (content `orientation`) come out in: the size after
    /// cropping, scaling and rotating, tightly packed.
    public func format(for source: VideoFormat, orientation: VideoOrientation = .up) -> VideoFormat {
        let plan = ConversionPlan(source: source.size, orientation: orientation, request: self,
                                  alignment: ConversionPlan.alignment(of: source.pixelFormat))
        let size = plan.outputSize
        return VideoFormat(pixelFormat: pixelFormat, width: size.width, height: size.height,
                           colorimetry: ConversionPlan.colorimetry(of: pixelFormat, from: source))
    }

    /// `"NV12 480x480 rot90 mirrored crop 320x240+0+0"` (`" accurate IDCT"`, `" whole JPEG decode"`
    /// when asked).
    public var description: String {
        var text = "\(pixelFormat.fourCC)"
        if let size { text += " \(size)" }
        if rotation != .none { text += " rot\(rotation.rawValue)" }
        if upright { text += " upright" }
        if mirrored { text += " mirrored" }
        if let crop { text += " crop \(crop)" }
        if jpegDecoding == .accurate { text += " accurate IDCT" }
        if !jpegScaledDecoding { text += " whole JPEG decode" }
        return text
    }
}

extension PixelFormat {
    /// ARGB as libyuv, WebRTC and the video-chat SDKs mean it: 32 bits per pixel, bytes B, G, R, A
    /// in memory (DRM `ARGB8888`, V4L2 `ABGR32`, fourcc `AR24`).
    public static var argb: PixelFormat { .abgr32 }
}

/// The geometry of one conversion: which source region is read, what size it is scaled to,
/// and how it is turned. Computed once per source format and request, not per frame.
struct ConversionPlan: Equatable {
    /// The source region read (aligned to the source's chroma subsampling).
    var crop: Rect
    /// The size the region is scaled to, before rotation.
    var scaledSize: Size
    /// The total clockwise rotation.
    var rotation: FrameRotation
    /// Mirror after rotating.
    var mirrored: Bool

    /// The output size.
    var outputSize: Size {
        rotation.swapsDimensions ? Size(width: scaledSize.height, height: scaledSize.width) : scaledSize
    }

    /// Whether a single conversion call from the cropped source does the whole job.
    var isDirect: Bool { scaledSize == crop.size && rotation == .none && !mirrored }

    /// The plan for a `source` frame of `orientation` under `request`. `alignment` is the
    /// source's chroma subsampling: crop edges fall on whole chroma samples.
    init(source: Size, orientation: VideoOrientation, request: OutputFormat,
         alignment: (horizontal: Int, vertical: Int)) {
        var region = Rect(source)
        if let crop = request.crop {
            let x = min(max(crop.x, 0), source.width - 1), y = min(max(crop.y, 0), source.height - 1)
            region = Rect(x: x, y: y, width: max(1, min(crop.width, source.width - x)),
                          height: max(1, min(crop.height, source.height - y)))
        }
        var rotation = request.rotation
        if request.upright, let upright = FrameRotation(degrees: orientation.rotationDegrees) {
            rotation = upright.adding(rotation)
        }
        // The requested size as seen before rotating.
        var target = request.size.map { rotation.swapsDimensions ? Size(width: $0.height, height: $0.width) : $0 }
        if let wanted = target {
            // Centre-crop the region to the wanted aspect ratio.
            if region.width * wanted.height > region.height * wanted.width {
                let width = max(1, region.height * wanted.width / wanted.height)
                region.x += (region.width - width) / 2
                region.width = width
            } else if region.width * wanted.height < region.height * wanted.width {
                let height = max(1, region.width * wanted.height / wanted.width)
                region.y += (region.height - height) / 2
                region.height = height
            }
        }
        region = ConversionPlan.aligned(region, to: alignment)
        if target == nil { target = region.size }
        crop = region
        scaledSize = target!
        self.rotation = rotation
        mirrored = request.mirrored
    }

    /// The colorimetry of `output` frames converted from `source` frames: RGB is full range; YUV
    /// keeps the source's (JPEG's is full-range BT.601), and RGB sources give libyuv's BT.601
    /// limited range.
    static func colorimetry(of output: PixelFormat, from source: VideoFormat) -> Colorimetry {
        if output == .argb || source.pixelFormat.layout?.isCompressed == true { return .jpeg }
        return source.pixelFormat.isYUV || source.pixelFormat == .grey ? source.colorimetry : .bt601Limited
    }

    /// The crop alignment for `format`: its chroma subsampling (JPEG frames decode to 4:2:0).
    static func alignment(of format: PixelFormat) -> (horizontal: Int, vertical: Int) {
        guard let layout = format.layout else { return (1, 1) }
        return layout.isCompressed ? (2, 2) : layout.chromaSubsampling
    }

    /// `region` with its edges moved inwards onto whole chroma samples.
    static func aligned(_ region: Rect, to alignment: (horizontal: Int, vertical: Int)) -> Rect {
        func align(_ start: Int, _ length: Int, _ step: Int) -> (Int, Int) {
            guard step > 1 else { return (start, length) }
            let first = (start + step - 1) / step * step
            let end = (start + length) / step * step
            return end - first >= step ? (first, end - first) : (start / step * step, max(length, step))
        }
        let (x, width) = align(region.x, region.width, alignment.horizontal)
        let (y, height) = align(region.y, region.height, alignment.vertical)
        return Rect(x: x, y: y, width: width, height: height)
    }
}
