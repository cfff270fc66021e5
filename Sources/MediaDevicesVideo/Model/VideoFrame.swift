import MediaDevicesCore
/// One plane of a frame: where its bytes are and how long a row is.
public struct FramePlane {
    /// The plane's bytes. Valid only as long as the frame that holds the plane.
    public let bytes: UnsafeRawBufferPointer
    /// Bytes per row, including padding.
    public let bytesPerRow: Int

    /// A plane over `bytes` with rows `bytesPerRow` apart.
    public init(bytes: UnsafeRawBufferPointer, bytesPerRow: Int) {
        self.bytes = bytes
        self.bytesPerRow = bytesPerRow
    }

    /// A plane with no bytes, for the unused plane slots of a frame.
    public static var empty: FramePlane { FramePlane(bytes: UnsafeRawBufferPointer(start: nil, count: 0), bytesPerRow: 0) }
}

/// A captured video frame, lent to a consumer for the duration of one callback.
///
/// The planes point straight into the driver's mmap'd buffer (zero-copy); the buffer is given
/// back to the driver when the callback returns, so a consumer that wants to keep the pixels
/// copies them, or reads a `frames()` sequence, whose ``VideoFrameBuffer``s keep the driver's
/// buffer on lease. Building a frame allocates nothing.
/// Frames are deliberately not `Sendable`: they cannot be handed to another task.
public struct VideoFrame {
    /// The frame's format; the strides in `format.bytesPerRow` match the planes.
    public let format: VideoFormat
    /// When the driver captured the frame (`CLOCK_MONOTONIC`, the clock of audio samples too).
    public let timestamp: MonotonicInstant
    /// The driver's frame sequence number; a gap means frames were dropped before delivery.
    public let sequence: UInt32
    /// Which way up the content is.
    public let orientation: VideoOrientation
    /// Dequeue time minus driver timestamp: how long the frame waited before reaching us.
    public let captureDelay: Duration
    /// How many planes the frame has (1 for packed formats, 2 for NV12, 3 for YU12).
    public let planeCount: Int
    /// Bytes of payload in buffer 0 (`bytesused`): the JPEG size for compressed frames.
    public let bytesUsed: Int
    /// The same pixels as DMA-BUFs, for importing into a hardware encoder, EGL, Vulkan or
    /// GStreamer without a copy: set when the source exports its buffers (a ``CameraSource`` or
    /// a KMS ``ScreenSource`` made with `exportsDMABuf`); the descriptors are valid as long as the
    /// frame's planes. The `M` formats have one descriptor per plane.
    public let dmaBuf: DMABufFrame?
    /// The driver buffer the planes are in, when the source can lend it past the callback.
    let lendable: LendableBuffer?
    private let plane0: FramePlane
    private let plane1: FramePlane
    private let plane2: FramePlane

    /// A frame over up to three planes, with their DMA-BUF export if there is one.
    public init(format: VideoFormat, timestamp: MonotonicInstant, sequence: UInt32, orientation: VideoOrientation,
                captureDelay: Duration, planeCount: Int, bytesUsed: Int,
                plane0: FramePlane, plane1: FramePlane = .empty, plane2: FramePlane = .empty,
                dmaBuf: DMABufFrame? = nil) {
        self.init(format: format, timestamp: timestamp, sequence: sequence, orientation: orientation,
                  captureDelay: captureDelay, planeCount: planeCount, bytesUsed: bytesUsed,
                  plane0: plane0, plane1: plane1, plane2: plane2, dmaBuf: dmaBuf, lendable: nil)
    }

    /// A frame whose planes are in a buffer `lendable` can lend past the callback.
    init(format: VideoFormat, timestamp: MonotonicInstant, sequence: UInt32, orientation: VideoOrientation,
         captureDelay: Duration, planeCount: Int, bytesUsed: Int,
         plane0: FramePlane, plane1: FramePlane, plane2: FramePlane,
         dmaBuf: DMABufFrame?, lendable: LendableBuffer?) {
        self.dmaBuf = dmaBuf
        self.lendable = lendable
        self.format = format
        self.timestamp = timestamp
        self.sequence = sequence
        self.orientation = orientation
        self.captureDelay = captureDelay
        self.planeCount = planeCount
        self.bytesUsed = bytesUsed
        self.plane0 = plane0
        self.plane1 = plane1
        self.plane2 = plane2
    }

    /// Plane `index` (0 ..< ``planeCount``).
    public func plane(_ index: Int) -> FramePlane {
        switch index {
        case 0: return plane0
        case 1: return plane1
        default: return plane2
        }
    }

    /// Whether the planes follow one another in memory without gaps (packed formats always;
    /// planar formats in one buffer; not the multi-planar `M` formats).
    var planesAreContiguous: Bool {
        var index = 1
        while index < planeCount {
            let previous = plane(index - 1).bytes
            guard let end = previous.baseAddress.map({ $0 + previous.count }), plane(index).bytes.baseAddress == end else { return false }
            index += 1
        }
        return true
    }

    /// The width in pixels.
    public var width: Int { format.width }
    /// The height in pixels.
    public var height: Int { format.height }
}
