/// A captured frame the application owns: a copy of a lent `VideoFrame` in pooled memory.
/// Buffers come from a pool that belongs to one `VideoFrames` sequence and go back to it when
/// the application lets go of them, so steady-state capture allocates nothing.
public final class VideoFrameBuffer: @unchecked Sendable {
    /// The frame's format; `bytesPerRow` gives the strides of the copied planes.
    public private(set) var format: VideoFormat
    /// Driver timestamp in nanoseconds of `CLOCK_MONOTONIC`.
    public private(set) var timestamp: UInt64 = 0
    /// Driver sequence number.
    public private(set) var sequence: UInt32 = 0
    /// Which way up the content is.
    public private(set) var orientation: VideoOrientation = .up
    /// Dequeue time minus driver timestamp.
    public private(set) var captureDelay: Duration = .zero
    /// Bytes of payload (the JPEG size for compressed frames).
    public private(set) var bytesUsed: Int = 0
    private var storage: UnsafeMutableRawPointer
    private var capacity: Int
    private var planeCount = 0
    private var planeOffsets: (Int, Int, Int) = (0, 0, 0)
    private var planeLengths: (Int, Int, Int) = (0, 0, 0)

    init(format: VideoFormat) {
        self.format = format
        capacity = max(format.imageSize, 1)
        storage = .allocate(byteCount: capacity, alignment: 64)
    }

    deinit { storage.deallocate() }

    /// The number of copied bytes, all planes.
    public var byteCount: Int { planeOffsets.2 + planeLengths.2 }

    /// Lends all copied bytes, the planes one after another (valid only inside `body`: the
    /// buffer goes back to its pool once the application lets go of it).
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(start: storage, count: byteCount))
    }

    /// Lends the copy as a `VideoFrame` (valid only inside `body`).
    public func withFrame<R>(_ body: (VideoFrame) throws -> R) rethrows -> R {
        func plane(_ offset: Int, _ length: Int, _ index: Int) -> FramePlane {
            guard index < planeCount else { return .empty }
            let stride = index < format.bytesPerRow.count ? format.bytesPerRow[index] : 0
            return FramePlane(bytes: UnsafeRawBufferPointer(start: storage + offset, count: length), bytesPerRow: stride)
        }
        let frame = VideoFrame(format: format, timestamp: timestamp, sequence: sequence, orientation: orientation,
                               captureDelay: captureDelay, planeCount: planeCount, bytesUsed: bytesUsed,
                               plane0: plane(planeOffsets.0, planeLengths.0, 0),
                               plane1: plane(planeOffsets.1, planeLengths.1, 1),
                               plane2: plane(planeOffsets.2, planeLengths.2, 2))
        return try body(frame)
    }

    /// Copies `frame` in. Grows the storage only when the frame is larger than any before.
    func fill(from frame: VideoFrame) {
        var total = 0
        for index in 0..<frame.planeCount { total += frame.plane(index).bytes.count }
        if total > capacity {
            storage.deallocate()
            capacity = total
            storage = .allocate(byteCount: capacity, alignment: 64)
        }
        format = frame.format
        timestamp = frame.timestamp
        sequence = frame.sequence
        orientation = frame.orientation
        captureDelay = frame.captureDelay
        bytesUsed = frame.bytesUsed
        planeCount = min(frame.planeCount, 3)
        var offset = 0
        var offsets = (0, 0, 0)
        var lengths = (0, 0, 0)
        for index in 0..<planeCount {
            let source = frame.plane(index).bytes
            if let base = source.baseAddress { (storage + offset).copyMemory(from: base, byteCount: source.count) }
            switch index {
            case 0: offsets.0 = offset; lengths.0 = source.count
            case 1: offsets.1 = offset; lengths.1 = source.count
            default: offsets.2 = offset; lengths.2 = source.count
            }
            offset += source.count
        }
        if planeCount < 3 { offsets.2 = offset; lengths.2 = 0 }
        planeOffsets = offsets
        planeLengths = lengths
    }
}
