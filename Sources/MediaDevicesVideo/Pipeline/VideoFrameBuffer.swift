import MediaDevicesCore
import Synchronization

/// A captured frame the application holds, from a ``VideoSource/frames(bufferSize:)`` sequence: either the driver's
/// own buffer on lease (zero-copy) or a copy in pooled memory.
///
/// **Leased frames.** When the source can lend its buffers (V4L2 cameras), the planes are the
/// driver's mmap'd buffer (the multi-planar `M` formats: one memory plane per image plane, all
/// leased together), kept out of the driver's queue until the lease ends: when the
/// application lets go of the buffer (the end of the `for await` loop body, at the latest when
/// the sequence is next asked for a frame or sees the next frame arrive), or at once with
/// `release()`. Stopping, a format change or an unplug do not unmap a leased buffer: it stays
/// readable until released, then it is unmapped. When a lease would leave the driver fewer
/// buffers than it needs (``CameraSource/minimumQueuedBuffers``), the frame is copied instead
/// (counted in ``CaptureStatistics/copiedFrames``): a slow consumer never starves the driver.
///
/// **Access.** The pixels are lent only inside `withFrame`/`withUnsafeBytes`. A buffer released
/// while it is being read is given back when the read ends; after `release()` it reads as an
/// empty frame (no planes). Releasing twice, or from another thread, is harmless.
///
/// Buffers belong to one sequence's pool and go back to it when the application lets go of
/// them, so steady-state capture allocates nothing.
// @unchecked Sendable: its frame fields are written only while no one holds it (pool to queue), its pixels read under the `access` lock.
public final class VideoFrameBuffer: @unchecked Sendable {
    // The stored properties skip the runtime's exclusivity checks (`@exclusivity(unchecked)`):
    // only the pool writes them, while it holds the only reference, and each checked access cost
    // a thread-local lookup and an access-set insert per property per frame (6 a frame in a
    // leased sequence, 470 of its 3,700 instructions, counted with callgrind). What the
    // application reads (format, timestamp and so on) lives behind a pointer held in a `let`
    // instead: code compiled in another module checked every read of such a stored property,
    // attribute or not (a `for await` body reading `timestamp` twice paid 2 checks, about 270
    // instructions, a frame on a PipeWire camera, counted with callgrind); a read through a `let`
    // is never checked.

    /// The frame's format; `bytesPerRow` gives the strides of the planes.
    public var format: VideoFormat { metadata.pointee.format }
    /// When the driver captured the frame (`CLOCK_MONOTONIC`).
    public var timestamp: MonotonicInstant { metadata.pointee.timestamp }
    /// Driver sequence number.
    public var sequence: UInt32 { metadata.pointee.sequence }
    /// Which way up the content is.
    public var orientation: VideoOrientation { metadata.pointee.orientation }
    /// Dequeue time minus driver timestamp.
    public var captureDelay: Duration { metadata.pointee.captureDelay }
    /// Bytes of payload (the JPEG size for compressed frames).
    public var bytesUsed: Int { metadata.pointee.bytesUsed }

    /// What the public properties above read, allocated with the buffer.
    private struct Metadata {
        var format: VideoFormat
        var timestamp = MonotonicInstant(nanoseconds: 0)
        var sequence: UInt32 = 0
        var orientation: VideoOrientation = .up
        var captureDelay: Duration = .zero
        var bytesUsed = 0
    }

    private let metadata: UnsafeMutablePointer<Metadata>
    /// The lender's name for `format` (`LendableBuffer.formatID`); `0` when it has none.
    @exclusivity(unchecked) private var formatID: UInt64 = 0
    /// The frame's DMA-BUF export, when the source exports its buffers and this frame is leased
    /// (a copy has none); `nil` once released (the descriptors may be closed then).
    public var dmaBuf: DMABufFrame? { access.withLock { $0.released ? nil : export } }
    @exclusivity(unchecked) private var export: DMABufFrame?

    private struct Access {
        /// Readers inside `withFrame`/`withUnsafeBytes`.
        var readers = 0
        /// `release()` came while reading: give the lease back when the last reader leaves.
        var releasePending = false
        /// The frame was released: it reads as empty.
        var released = false
        /// The driver buffer on lease, while the lease is outstanding.
        var lease: LendableBuffer?

        /// Ends the lease; returns the buffer to give back, if there was one.
        mutating func endLease() -> LendableBuffer? {
            released = true
            return lease.take()
        }
    }

    /// The copy's memory (made on the first copy; leased and converted frames need none).
    @exclusivity(unchecked) private var storage: UnsafeMutableRawPointer?
    @exclusivity(unchecked) private var capacity = 0
    /// Where a converting sequence's converter writes this buffer's frame (made on first use).
    @exclusivity(unchecked) private var converted: ImageBuffer?
    @exclusivity(unchecked) private var planeCount = 0
    @exclusivity(unchecked) private var planes: (FramePlane, FramePlane, FramePlane) = (.empty, .empty, .empty)
    private let access = Mutex(Access())

    init(format: VideoFormat) {
        metadata = .allocate(capacity: 1)
        metadata.initialize(to: Metadata(format: format))
    }

    deinit {
        endLease()
        storage?.deallocate()
        metadata.deinitialize(count: 1)
        metadata.deallocate()
    }

    /// Whether the planes are the driver's buffer on lease (`false` for a copy, and once
    /// released).
    public var isLeased: Bool { access.withLock { $0.lease != nil } }

    /// The number of bytes of all planes.
    public var byteCount: Int {
        access.withLock { $0.released } ? 0 : planes.0.bytes.count + planes.1.bytes.count + planes.2.bytes.count
    }

    /// Ends access to the frame now: a leased driver buffer goes back to the driver (after any
    /// read in progress ends). Harmless when repeated or called from another thread.
    public func release() {
        let lease = access.withLock { access -> LendableBuffer? in
            if access.released || access.releasePending { return nil }
            if access.readers > 0 {
                access.releasePending = true
                return nil
            }
            return access.endLease()
        }
        lease?.giveBack()
    }

    /// Lends all bytes, the planes one after another (valid only inside `body`; empty after
    /// `release()`): the whole image, for leased frames and copies alike. When the planes lie
    /// apart — a lease of a multi-planar `M` format (NV12M, YUV420M), one driver buffer per
    /// plane — they are gathered into a temporary copy for each call; read them in place with
    /// `withFrame` instead.
    public func withUnsafeBytes<R, Failure: Error>(_ body: (UnsafeRawBufferPointer) throws(Failure) -> R) throws(Failure) -> R {
        try withFrame { (frame) throws(Failure) in
            let first = frame.plane(0).bytes
            var count = first.count
            var index = 1
            while index < frame.planeCount {
                count += frame.plane(index).bytes.count
                index += 1
            }
            guard first.baseAddress != nil else { return try body(UnsafeRawBufferPointer(start: nil, count: 0)) }
            if frame.planesAreContiguous { return try body(UnsafeRawBufferPointer(start: first.baseAddress, count: count)) }
            // The standard library's temporary allocation rethrows untyped: `body`'s error comes
            // out through a typed Result.
            var outcome: Result<R, Failure>?
            withUnsafeTemporaryAllocation(byteCount: count, alignment: 64) { gathered in
                var offset = 0
                var index = 0
                while index < frame.planeCount {
                    let plane = frame.plane(index).bytes
                    if let base = plane.baseAddress { (gathered.baseAddress! + offset).copyMemory(from: base, byteCount: plane.count) }
                    offset += plane.count
                    index += 1
                }
                outcome = Result { () throws(Failure) in try body(UnsafeRawBufferPointer(gathered)) }
            }
            return try outcome!.get()
        }
    }

    /// Lends the frame (valid only inside `body`; an empty frame, `planeCount` 0, after
    /// `release()`). Throws what `body` throws, with its type.
    public func withFrame<R, Failure: Error>(_ body: (VideoFrame) throws(Failure) -> R) throws(Failure) -> R {
        let readable = access.withLock { access -> Bool in
            if access.released { return false }
            access.readers += 1
            return true
        }
        defer { if readable { endRead() } }
        let frame = VideoFrame(format: format, timestamp: timestamp, sequence: sequence, orientation: orientation,
                               captureDelay: captureDelay, planeCount: readable ? planeCount : 0, bytesUsed: readable ? bytesUsed : 0,
                               plane0: readable ? planes.0 : .empty, plane1: readable ? planes.1 : .empty,
                               plane2: readable ? planes.2 : .empty, dmaBuf: readable ? export : nil, lendable: nil)
        return try body(frame)
    }

    private func endRead() {
        let lease = access.withLock { access -> LendableBuffer? in
            access.readers -= 1
            guard access.readers == 0, access.releasePending else { return nil }
            access.releasePending = false
            return access.endLease()
        }
        lease?.giveBack()
    }

    /// Gives an outstanding lease back. Called by the pool once nobody else holds the buffer.
    func endLease() {
        let lease = access.withLock { access -> LendableBuffer? in access.lease == nil ? nil : access.endLease() }
        lease?.giveBack()
    }

    /// The image buffer a converter writes into (see `adopt`). The pool calls it with the only
    /// reference.
    var image: ImageBuffer {
        if let converted { return converted }
        let image = ImageBuffer()
        converted = image
        return image
    }

    /// Takes `frame`, which a converter wrote into `image`, as this buffer's frame (no copy).
    func adopt(_ frame: VideoFrame) {
        startAccess(Access())
        export = nil
        setMetadata(from: frame)
        planeCount = min(frame.planeCount, 3)
        planes = (frame.plane(0), planeCount > 1 ? frame.plane(1) : .empty, planeCount > 2 ? frame.plane(2) : .empty)
    }

    /// Takes `frame` on lease (its lender already granted it): the planes stay in the driver's
    /// buffer. The pool calls it with the only reference.
    func lend(_ frame: VideoFrame, from buffer: LendableBuffer) {
        startAccess(Access(lease: buffer))
        setMetadata(from: frame, formatID: buffer.formatID)
        export = frame.dmaBuf
        planeCount = min(frame.planeCount, 3)
        planes = (frame.plane(0), planeCount > 1 ? frame.plane(1) : .empty, planeCount > 2 ? frame.plane(2) : .empty)
    }

    /// Copies `frame` in. Grows the storage only when the frame is larger than any before.
    func fill(from frame: VideoFrame) {
        startAccess(Access())
        export = nil
        var total = 0
        for index in 0..<frame.planeCount { total += frame.plane(index).bytes.count }
        if total > capacity || storage == nil {
            storage?.deallocate()
            capacity = max(total, 1)
            storage = .allocate(byteCount: capacity, alignment: 64)
        }
        let storage = self.storage!
        setMetadata(from: frame)
        planeCount = min(frame.planeCount, 3)
        var offset = 0
        var copied: (FramePlane, FramePlane, FramePlane) = (.empty, .empty, .empty)
        for index in 0..<planeCount {
            let source = frame.plane(index)
            if let base = source.bytes.baseAddress { (storage + offset).copyMemory(from: base, byteCount: source.bytes.count) }
            let stride = index < format.bytesPerRow.count ? format.bytesPerRow[index] : source.bytesPerRow
            let plane = FramePlane(bytes: UnsafeRawBufferPointer(start: storage + offset, count: source.bytes.count), bytesPerRow: stride)
            switch index {
            case 0: copied.0 = plane
            case 1: copied.1 = plane
            default: copied.2 = plane
            }
            offset += source.bytes.count
        }
        planes = copied
    }

    /// Begins the buffer's next use with `next` (readable; on lease when it holds one), giving
    /// back the lease of its last use if that is still outstanding: one lock, where ending the
    /// old lease and starting the new access took two. The pool calls it with the only
    /// reference, so nobody reads the frame while it changes.
    private func startAccess(_ next: consuming Access) {
        // Swapped in, so the lease moves rather than being copied (retained) and destroyed.
        var swapped = next
        access.withLock { swap(&$0, &swapped) }
        swapped.lease?.giveBack()
    }

    /// Takes the frame's metadata; its format only when `formatID` (the lender's name for it)
    /// is unknown (`0`) or not the one this buffer holds.
    private func setMetadata(from frame: VideoFrame, formatID: UInt64 = 0) {
        if formatID == 0 || formatID != self.formatID { metadata.pointee.format = frame.format }
        self.formatID = formatID
        metadata.pointee.timestamp = frame.timestamp
        metadata.pointee.sequence = frame.sequence
        metadata.pointee.orientation = frame.orientation
        metadata.pointee.captureDelay = frame.captureDelay
        metadata.pointee.bytesUsed = frame.bytesUsed
    }
}
