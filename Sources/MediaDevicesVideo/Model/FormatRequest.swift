import MediaDevicesCore
/// How a source chooses its device format when the application names none.
public enum FormatPreference: String, Sendable, Hashable, Encodable, CaseIterable {
    /// The cheapest to process: a raw format when one gives the size and rate, MJPEG only when
    /// none does (webcams often give 720p and above at full rate only as MJPEG).
    case automatic
    /// Raw formats only, even at a lower rate: no decoding, no compression artefacts.
    case rawOnly
    /// The fewest bytes per frame over the bus (MJPEG when offered, else the most subsampled
    /// raw format): for several cameras on one USB bus.
    case lowestBandwidth
    /// The most colour information: raw before compressed, then RGB and 4:4:4 before 4:2:2
    /// before 4:2:0, then formats with fewer than 8 bits a component (RGB565, YUV555, ...),
    /// then grey.
    case bestQuality
}

/// What an application asks a source for. Any field left `nil` is chosen for it: the device
/// format by `preference` (by default a raw format when one gives the size and rate),
/// 640x480 (or the size nearest to it), the highest rate.
public struct FormatRequest: Sendable, Hashable, CustomStringConvertible {
    /// The pixel format, or `nil` to let the source choose.
    public var pixelFormat: PixelFormat?
    /// The frame size, or `nil` for the default (640x480 or nearest).
    public var size: Size?
    /// The desired rate: the best rate at or below it is chosen. `nil` for the highest.
    public var frameRate: FrameRate?
    /// How to choose the pixel format when `pixelFormat` is `nil`.
    public var preference: FormatPreference

    /// A request.
    public init(pixelFormat: PixelFormat? = nil, size: Size? = nil, frameRate: FrameRate? = nil,
                preference: FormatPreference = .automatic) {
        self.pixelFormat = pixelFormat
        self.size = size
        self.frameRate = frameRate
        self.preference = preference
    }

    /// `"YUYV 640x480 @ 30 fps"`, with `any` for open fields.
    public var description: String {
        "\(pixelFormat?.name ?? "any") \(size?.description ?? "any size") @ \(frameRate?.description ?? "highest rate")"
    }
}

/// One thing that came out different from what was asked, and why.
public struct FormatAdjustment: Sendable, Hashable, CustomStringConvertible {
    /// What was adjusted.
    public enum Field: String, Sendable {
        /// The pixel format.
        case pixelFormat
        /// The frame size.
        case size
        /// The row stride (padding added by the driver).
        case bytesPerRow
        /// The frame rate.
        case frameRate
    }
    /// What was adjusted.
    public let field: Field
    /// What was asked (`"any"` when nothing was).
    public let requested: String
    /// What is in force.
    public let chosen: String
    /// Why.
    public let reason: String

    /// An adjustment.
    package init(field: Field, requested: String, chosen: String, reason: String) {
        self.field = field
        self.requested = requested
        self.chosen = chosen
        self.reason = reason
    }

    /// `"size: 641x480 -> 640x480 (driver adjusted it in VIDIOC_S_FMT)"`.
    public var description: String { "\(field.rawValue): \(requested) -> \(chosen) (\(reason))" }
}

/// The outcome of configuring a source: the format and rate in force, and every adjustment made
/// to the request along the way (by the selection over the supported formats, or by the driver).
public struct FormatNegotiation: Sendable, Hashable {
    /// What was asked.
    public let request: FormatRequest
    /// The format in force, with the driver's strides and buffer sizes.
    public let format: VideoFormat
    /// The frame rate in force; `nil` when the driver cannot set or report one.
    public let frameRate: FrameRate?
    /// What differs from the request, and why; empty when everything was granted as asked.
    public let adjustments: [FormatAdjustment]

    /// A negotiation result.
    package init(request: FormatRequest, format: VideoFormat, frameRate: FrameRate?, adjustments: [FormatAdjustment]) {
        self.request = request
        self.format = format
        self.frameRate = frameRate
        self.adjustments = adjustments
    }
}
