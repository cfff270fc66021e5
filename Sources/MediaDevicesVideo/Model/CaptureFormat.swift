import MediaDevicesCore
/// One pixel format a source offers, with every frame size and frame rate the driver reports
/// for it (one `VIDIOC_ENUM_FMT` entry with its `VIDIOC_ENUM_FRAMESIZES` and
/// `VIDIOC_ENUM_FRAMEINTERVALS` answers). AVFoundation's `AVCaptureDevice.Format`, grouped by
/// pixel format as `v4l2-ctl --list-formats-ext` prints it.
public struct CaptureFormat: Sendable, Hashable {
    /// The pixel format.
    public let pixelFormat: PixelFormat
    /// The driver's description (`"YUYV 4:2:2"`).
    public let description: String
    /// Whether the driver flags the format compressed (`V4L2_FMT_FLAG_COMPRESSED`).
    public let isCompressed: Bool
    /// Whether the format is emulated in software (`V4L2_FMT_FLAG_EMULATED`).
    public let isEmulated: Bool
    /// All of the driver's flags for the format (`V4L2_FMT_FLAG_*`), including the two above and
    /// the colour-space conversion flags (`V4L2_FMT_FLAG_CSC_*`).
    package let flags: UInt32
    /// The frame sizes, each with its frame rates, in driver order.
    public let frameSizes: [FrameSizeOption]

    /// A format entry.
    package init(pixelFormat: PixelFormat, description: String, isCompressed: Bool, isEmulated: Bool,
                flags: UInt32 = 0, frameSizes: [FrameSizeOption]) {
        self.pixelFormat = pixelFormat
        self.description = description
        self.isCompressed = isCompressed
        self.isEmulated = isEmulated
        self.flags = flags
        self.frameSizes = frameSizes
    }
}

/// One frame size entry of a pixel format and the frame rates offered at it. For stepwise and
/// continuous size ranges the rates are those the driver reports at the largest size.
public struct FrameSizeOption: Sendable, Hashable {
    /// The sizes.
    public let sizes: FrameSizeRange
    /// The frame rates at these sizes, in driver order (fastest first for most drivers).
    public let frameRateRanges: [FrameRateRange]

    /// A size entry.
    package init(sizes: FrameSizeRange, frameRateRanges: [FrameRateRange]) {
        self.sizes = sizes
        self.frameRateRanges = frameRateRanges
    }
}
