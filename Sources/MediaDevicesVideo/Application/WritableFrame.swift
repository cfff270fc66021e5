import MediaDevicesCore

/// One plane of a ``WritableFrame``: its bytes, writable, and how long a row is.
public struct WritablePlane {
    /// The plane's bytes, valid only inside the closure that received the frame.
    public let bytes: UnsafeMutableRawBufferPointer
    /// Bytes per row (the frame's format's `bytesPerRow` for this plane; no padding).
    public let bytesPerRow: Int
}

/// A frame being made for an ``ApplicationSource``, lent to the closure of
/// ``ApplicationSource/send(_:draw:)`` or ``ApplicationSource/send(timestamp:draw:)``: the source's
/// own buffer, written in place (drawn on after the copy of a frame, or drawn from nothing), then
/// delivered to the source's consumers and sequences. Valid only inside that closure.
public struct WritableFrame {
    /// The frame's format: the source's (tightly packed, no row padding).
    public let format: VideoFormat
    /// The instant the frame will carry as its ``VideoFrame/timestamp``.
    public let timestamp: MonotonicInstant
    private let base: UnsafeMutableRawPointer
    private let layout: ApplicationFrameLayout

    init(format: VideoFormat, timestamp: MonotonicInstant, base: UnsafeMutableRawPointer, layout: ApplicationFrameLayout) {
        self.format = format
        self.timestamp = timestamp
        self.base = base
        self.layout = layout
    }

    /// How many planes the frame has (1 for packed formats, 2 for NV12, 3 for I420).
    public var planeCount: Int { layout.planeCount }

    /// Plane `index` (0 ..< ``planeCount``).
    public func plane(_ index: Int) -> WritablePlane {
        WritablePlane(bytes: UnsafeMutableRawBufferPointer(start: base + layout.offsets[index], count: layout.sizes[index]),
                      bytesPerRow: layout.bytesPerRow[index])
    }
}

/// Where each plane of an application source's frame is in its buffer: computed once per
/// source, so that making a frame allocates nothing.
struct ApplicationFrameLayout: Sendable {
    /// The planes' byte offsets from the buffer's start, one after the other.
    let offsets: [Int]
    /// The planes' sizes in bytes.
    let sizes: [Int]
    /// The planes' bytes per row.
    let bytesPerRow: [Int]
    /// The planes' rows.
    let rows: [Int]
    /// Every plane's bytes together.
    let size: Int

    var planeCount: Int { offsets.count }

    /// The layout of a tightly packed `format` (`VideoFormat(pixelFormat:width:height:)`).
    init(format: VideoFormat) {
        let planes = format.pixelFormat.layout?.planes ?? []
        rows = planes.map { $0.rows(height: format.height) }
        bytesPerRow = Array(format.bytesPerRow.prefix(planes.count))
        sizes = zip(rows, bytesPerRow).map { $0 * $1 }
        var offset = 0
        offsets = sizes.map { size in defer { offset += size }; return offset }
        size = offset
    }
}
