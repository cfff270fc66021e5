import MediaDevicesCore
import CV4L2
import Glibc
import Synchronization

/// The mmap'd buffers of one streaming run, and the queue/dequeue/stream ioctls over them.
/// Teardown order is STREAMOFF → munmap → REQBUFS(0), in `release()`, exactly once.
///
/// The buffers can be lent past the delivery callback (`FrameBufferLender`): a leased buffer is
/// requeued when its last lease is given back, from whichever thread. A lease is refused when it
/// would leave fewer than `minimumQueued` buffers with the driver. At teardown a leased buffer
/// keeps its mapping (and DMA-BUF descriptors) and `REQBUFS(0)` orphans it (the driver frees it
/// once unmapped; `V4L2_BUF_CAP_SUPPORTS_ORPHANED_BUFS`); the last give-back unmaps it. Drivers
/// without orphaned-buffer support never lend: their frames are copied.
// @unchecked Sendable: lease counts live in `state` behind its lock; the mappings are immutable until the last give-back.
final class V4L2Buffers: FrameBufferLender, @unchecked Sendable {
    /// Where each image plane of a frame sits: which memory plane, at what offset, how long.
    struct PlaneSlot {
        var memoryPlane: Int
        var offset: Int
        var length: Int
        var bytesPerRow: Int
    }

    /// What the run knows of one driver buffer.
    private struct Buffer {
        /// Leases outstanding (several sequences can lease the same frame).
        var leases = 0
        /// Queued to the driver (or being filled by it).
        var queued = true
        /// Dequeued and being delivered by the capture thread, which requeues it afterwards
        /// unless leased.
        var delivering = false
        /// The run ended while the buffer was leased: the last give-back unmaps it.
        var orphaned = false
    }

    // `@unchecked Sendable`: its pointer is only followed under the run's lock.
    private struct State: @unchecked Sendable {
        /// One entry per driver buffer, the first `count`, in memory allocated once for the most
        /// a driver grants (`VIDEO_MAX_FRAME`), not an array: changing an array's element under
        /// the lock checked the array's uniqueness, a runtime call, at each of the four changes
        /// a leased frame makes.
        let buffers = UnsafeMutablePointer<Buffer>.allocate(capacity: Int(VIDEO_MAX_FRAME))
        var count = 0
        /// How many are queued to the driver, kept with each change of `queued`, so that a lease
        /// need not count them.
        var queuedCount = 0
        var streaming = false
        var released = false

        /// Adds the next buffer's entry (queued).
        mutating func append() {
            (buffers + count).initialize(to: Buffer())
            count += 1
            queuedCount += 1
        }

        /// Marks buffer `index` queued to the driver or not.
        mutating func setQueued(_ index: Int, _ queued: Bool) {
            guard buffers[index].queued != queued else { return }
            buffers[index].queued = queued
            queuedCount += queued ? 1 : -1
        }
    }

    let device: V4L2Device
    let format: VideoFormat
    /// Names `format` in the frames this run lends (`LendableBuffer.formatID`).
    private let formatID = LendableBuffer.newFormatID()
    /// Buffers kept queued to the driver however many frames are leased.
    let minimumQueued: Int
    /// Whether frames may be leased (the driver can orphan mapped buffers).
    private(set) var lends = false
    /// Each buffer's mappings (one per memory plane); unmapped at teardown or last give-back.
    private var mappings: [[MappedMemory]] = []
    /// Each buffer's DMA-BUF export, when asked for and the driver exports.
    private var exports: [DMABufFrame?] = []
    /// Each exported buffer's descriptors, one per memory plane (`VIDIOC_EXPBUF` with its index).
    private var exportedDescriptors: [[Int32]] = []
    /// The `data_offset` of each memory plane the export's offsets include (multi-planar
    /// drivers may start a plane's data past its beginning: vivid does by 128 bytes).
    private var exportedDataOffsets: [[Int]] = []
    private let memoryPlaneCount: Int
    private let planeArray: UnsafeMutablePointer<v4l2_plane>
    /// Per buffer, the plane array a give-back from another thread queues it with.
    private let requeuePlanes: UnsafeMutablePointer<v4l2_plane>
    private let slots: [PlaneSlot]
    private let state = Mutex(State())
    /// `State.count`, readable without the lock (`bufferCount`).
    private let grantedCount = Atomic<Int>(0)

    /// Requests `count` mmap buffers (the driver may grant more), maps and queues them all;
    /// with `exportingDMABuf`, exports each as DMA-BUF descriptors (`VIDIOC_EXPBUF`).
    init(device: V4L2Device, format: VideoFormat, count: Int, minimumQueued: Int = 2, exportingDMABuf: Bool = false) throws(MediaDevicesError) {
        self.device = device
        self.format = format
        memoryPlaneCount = device.isMultiplanar ? max(format.bufferSizes.count, 1) : 1
        planeArray = .allocate(capacity: Int(VIDEO_MAX_PLANES))
        planeArray.initialize(repeating: v4l2_plane(), count: Int(VIDEO_MAX_PLANES))
        slots = V4L2Buffers.planeSlots(format: format, memoryPlaneCount: device.isMultiplanar ? format.bufferSizes.count : 1)

        var request = v4l2_requestbuffers()
        request.count = UInt32(max(count, 2))
        request.type = device.bufferType
        request.memory = V4L2_MEMORY_MMAP.rawValue
        // Room for the most buffers a driver grants (VIDEO_MAX_FRAME), a few KiB.
        requeuePlanes = .allocate(capacity: Int(VIDEO_MAX_FRAME) * Int(VIDEO_MAX_PLANES))
        requeuePlanes.initialize(repeating: v4l2_plane(), count: Int(VIDEO_MAX_FRAME) * Int(VIDEO_MAX_PLANES))
        self.minimumQueued = max(1, minimumQueued)
        do {
            try device.file.ioctl(cv4l2_VIDIOC_REQBUFS, &request, "VIDIOC_REQBUFS")
            lends = request.capabilities & UInt32(V4L2_BUF_CAP_SUPPORTS_ORPHANED_BUFS) != 0
            guard request.count >= 2 else {
                throw MediaDevicesError(.io, device: device.path, operation: "VIDIOC_REQBUFS",
                                        detail: "The driver granted only \(request.count) buffer(s); at least 2 are needed. Free memory or use a smaller format")
            }
            // (A driver grants at most VIDEO_MAX_FRAME; the state and the requeue planes hold that many.)
            for index in 0..<min(request.count, UInt32(VIDEO_MAX_FRAME)) {
                var buffer = makeBuffer(index: index)
                try device.file.ioctl(cv4l2_VIDIOC_QUERYBUF, &buffer, "VIDIOC_QUERYBUF")
                var planes: [MappedMemory] = []
                if device.isMultiplanar {
                    for plane in 0..<Int(buffer.length) {
                        planes.append(try MappedMemory(file: device.file, length: Int(planeArray[plane].length),
                                                       offset: Int(planeArray[plane].m.mem_offset)))
                    }
                } else {
                    planes.append(try MappedMemory(file: device.file, length: Int(buffer.length), offset: Int(buffer.m.offset)))
                }
                mappings.append(planes)
                exportedDescriptors.append(exportingDMABuf ? try export(index: index, planeCount: planes.count) : [])
                exportedDataOffsets.append(Array(repeating: 0, count: planes.count))
                exports.append(describeExport(Int(index)))
                grantedCount.store(state.withLock { $0.append(); return $0.count }, ordering: .relaxed)
                try device.file.ioctl(cv4l2_VIDIOC_QBUF, &buffer, "VIDIOC_QBUF")
            }
        } catch {
            release()
            throw MediaDevicesError.converting(error, device: device.path, operation: "set up buffers")
        }
    }

    deinit {
        release()
        planeArray.deallocate()
        requeuePlanes.deallocate()
        state.withLock { $0.buffers.deallocate() }
    }

    /// The number of buffers the driver granted.
    var count: Int { mappings.count }

    /// Exports buffer `index` as one DMA-BUF per memory plane (`VIDIOC_EXPBUF` with the plane's
    /// index: the `M` formats give one descriptor per image plane). None when the format has no
    /// DRM code; throws when the driver refuses `EXPBUF`.
    private func export(index: UInt32, planeCount: Int) throws(MediaDevicesError) -> [Int32] {
        guard format.pixelFormat.drmFourCC != nil else { return [] }
        var descriptors: [Int32] = []
        do {
            for plane in 0..<planeCount {
                var request = v4l2_exportbuffer()
                request.type = device.bufferType
                request.index = index
                request.plane = UInt32(plane)
                request.flags = UInt32(O_CLOEXEC | O_RDONLY)
                try device.file.ioctl(cv4l2_VIDIOC_EXPBUF, &request, "VIDIOC_EXPBUF")
                descriptors.append(request.fd)
            }
        } catch {
            for descriptor in descriptors { Glibc.close(descriptor) }
            throw error
        }
        return descriptors
    }

    /// Describes buffer `index`'s export: each image plane in its memory plane's DMA-BUF, at
    /// the plane's offset plus the memory plane's `data_offset`. `nil` when not exported.
    private func describeExport(_ index: Int) -> DMABufFrame? {
        let descriptors = exportedDescriptors[index]
        guard let drm = format.pixelFormat.drmFourCC, !descriptors.isEmpty else { return nil }
        let planes = slots.prefix(3).map { slot in
            let memoryPlane = min(slot.memoryPlane, descriptors.count - 1)
            return DMABufPlane(descriptor: descriptors[memoryPlane], offset: exportedDataOffsets[index][memoryPlane] + slot.offset,
                               bytesPerRow: slot.bytesPerRow, length: mappings[index][min(memoryPlane, mappings[index].count - 1)].length)
        }
        return DMABufFrame(drmFourCC: drm, planes: planes)
    }

    /// Describes buffer `index`'s export again if the driver's `data_offset`s (in `planeArray`,
    /// just dequeued) differ from those it includes: on a buffer's first frames at most, so
    /// steady state allocates nothing.
    private func updateExportDataOffsets(_ index: Int) {
        guard device.isMultiplanar, exports[index] != nil else { return }
        var changed = false
        var plane = 0
        while plane < exportedDataOffsets[index].count {
            let offset = Int(planeArray[plane].data_offset)
            if exportedDataOffsets[index][plane] != offset {
                exportedDataOffsets[index][plane] = offset
                changed = true
            }
            plane += 1
        }
        if changed { exports[index] = describeExport(index) }
    }

    /// Closes buffer `index`'s exported descriptors.
    private func closeExports(_ index: Int) {
        guard index < exportedDescriptors.count, index < exports.count else { return }
        for descriptor in exportedDescriptors[index] { Glibc.close(descriptor) }
        exportedDescriptors[index] = []
        exports[index] = nil
    }

    /// Where each image plane lies. Contiguous formats put every plane in memory plane 0 one
    /// after another; the `M` formats put plane i in memory plane i.
    static func planeSlots(format: VideoFormat, memoryPlaneCount: Int) -> [PlaneSlot] {
        guard let layout = format.pixelFormat.layout, !layout.isCompressed else {
            return [PlaneSlot(memoryPlane: 0, offset: 0, length: format.bufferSizes.first ?? 0,
                              bytesPerRow: format.bytesPerRow.first ?? 0)]
        }
        var slots: [PlaneSlot] = []
        var offset = 0
        for (index, plane) in layout.planes.enumerated() {
            let stride = index < format.bytesPerRow.count ? format.bytesPerRow[index] : plane.minimumBytesPerRow(width: format.width)
            let length = stride * plane.rows(height: format.height)
            if memoryPlaneCount > 1 {
                slots.append(PlaneSlot(memoryPlane: min(index, memoryPlaneCount - 1), offset: 0, length: length, bytesPerRow: stride))
            } else {
                slots.append(PlaneSlot(memoryPlane: 0, offset: offset, length: length, bytesPerRow: stride))
                offset += length
            }
        }
        return slots
    }

    /// A `v4l2_buffer` for `index`, with `planes` (the capture thread's array by default) for
    /// the multi-planar API.
    private func makeBuffer(index: UInt32, planes: UnsafeMutablePointer<v4l2_plane>? = nil) -> v4l2_buffer {
        var buffer = v4l2_buffer()
        buffer.index = index
        buffer.type = device.bufferType
        buffer.memory = V4L2_MEMORY_MMAP.rawValue
        if device.isMultiplanar {
            buffer.length = UInt32(memoryPlaneCount)
            buffer.m.planes = planes ?? planeArray
        }
        return buffer
    }

    /// Starts streaming (`VIDIOC_STREAMON`).
    func streamOn() throws(MediaDevicesError) {
        var type = Int32(device.bufferType)
        try device.file.ioctl(cv4l2_VIDIOC_STREAMON, &type, "VIDIOC_STREAMON")
        state.withLock { $0.streaming = true }
    }

    // MARK: lending

    func lease(_ index: Int) -> Bool {
        guard lends else { return false }
        return state.withLock { state in
            guard state.streaming, !state.released, index < state.count else { return false }
            // Lending this one leaves the queued ones with the driver: enough of them?
            if state.buffers[index].leases == 0 && state.queuedCount < minimumQueued { return false }
            state.buffers[index].leases += 1
            return true
        }
    }

    var bufferCount: Int { grantedCount.load(ordering: .relaxed) }

    func giveBack(_ index: Int) {
        state.withLock { state in
            guard index < state.count, state.buffers[index].leases > 0 else { return }
            state.buffers[index].leases -= 1
            guard state.buffers[index].leases == 0, !state.buffers[index].delivering else { return }
            if state.buffers[index].orphaned {
                for mapping in mappings[index] { mapping.unmap() }
                closeExports(index)
            } else if state.streaming {
                var buffer = makeBuffer(index: UInt32(index), planes: requeuePlanes + index * Int(VIDEO_MAX_PLANES))
                // A failure (the device is gone) shows on the capture thread's next dequeue.
                if device.file.ioctlErrno(cv4l2_VIDIOC_QBUF, &buffer) == 0 { state.setQueued(index, true) }
            }
        }
    }

    /// Dequeues one filled buffer and lends it to `body` as a frame, then queues it again.
    /// Returns `false` if no buffer was ready (`EAGAIN`). Allocates nothing.
    func withNextFrame(orientation: VideoOrientation, _ body: (VideoFrame) -> Void) throws(MediaDevicesError) -> Bool {
        var buffer = makeBuffer(index: 0)
        guard try device.file.ioctl(cv4l2_VIDIOC_DQBUF, &buffer, "VIDIOC_DQBUF") else { return false }
        let now = MonotonicClock.now()
        // Driver timestamps are CLOCK_MONOTONIC when the flags say so; otherwise (COPY, UNKNOWN,
        // or nonsense) the dequeue time stands in, and the capture delay is unknown (zero).
        let monotonic = buffer.flags & UInt32(V4L2_BUF_FLAG_TIMESTAMP_MASK) == UInt32(V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC)
            && buffer.timestamp.tv_sec >= 0 && buffer.timestamp.tv_usec >= 0
        let nanoseconds = monotonic
            ? UInt64(buffer.timestamp.tv_sec) * 1_000_000_000 + UInt64(buffer.timestamp.tv_usec) * 1_000 : now
        let delay: Duration = now >= nanoseconds ? .nanoseconds(Int64(now - nanoseconds)) : .zero
        let timestamp = MonotonicInstant(nanoseconds: nanoseconds)
        let index = Int(buffer.index)
        state.withLock {
            $0.setQueued(index, false)
            $0.buffers[index].delivering = true
        }
        // Multi-planar: bytesused counts from the start of the plane, data_offset included.
        let bytesUsed = device.isMultiplanar
            ? Int(planeArray[0].bytesused) - Int(min(planeArray[0].data_offset, planeArray[0].bytesused))
            : Int(buffer.bytesused)
        let isError = buffer.flags & UInt32(V4L2_BUF_FLAG_ERROR) != 0
        if !isError {
            updateExportDataOffsets(index)
            let planeCount = min(slots.count, 3)
            func plane(_ slot: Int) -> FramePlane {
                guard slot < planeCount else { return .empty }
                let where_ = slots[slot]
                let memory = mappings[index][where_.memoryPlane]
                let dataOffset = device.isMultiplanar ? Int(planeArray[where_.memoryPlane].data_offset) : 0
                let length = format.pixelFormat.isCompressed ? bytesUsed : where_.length
                let start = memory.bytes(count: memory.length).baseAddress.map { $0 + dataOffset + where_.offset }
                let available = max(0, min(length, memory.length - dataOffset - where_.offset))
                return FramePlane(bytes: UnsafeRawBufferPointer(start: start, count: available), bytesPerRow: where_.bytesPerRow)
            }
            body(VideoFrame(format: format, timestamp: timestamp, sequence: buffer.sequence, orientation: orientation,
                            captureDelay: delay, planeCount: planeCount, bytesUsed: bytesUsed,
                            plane0: plane(0), plane1: plane(1), plane2: plane(2),
                            dmaBuf: exports[index], lendable: LendableBuffer(lender: self, index: index, formatID: formatID)))
        }
        // Requeue now unless a sequence leased the frame (its last give-back requeues it).
        let requeue = state.withLock { state -> Bool in
            state.buffers[index].delivering = false
            guard state.buffers[index].leases == 0 else { return false }
            state.setQueued(index, true)
            return true
        }
        if requeue {
            var requeue = makeBuffer(index: buffer.index)
            try device.file.ioctl(cv4l2_VIDIOC_QBUF, &requeue, "VIDIOC_QBUF")
        }
        return true
    }

    /// STREAMOFF → munmap → REQBUFS(0); leased buffers stay mapped (orphaned) until their last
    /// give-back. Errors are ignored: the device may already be gone.
    func release() {
        state.withLock { state in
            guard !state.released else { return }
            state.released = true
            if state.streaming {
                var type = Int32(device.bufferType)
                _ = device.file.ioctlErrno(cv4l2_VIDIOC_STREAMOFF, &type)
                state.streaming = false
            }
            for index in mappings.indices {
                if index < state.count, state.buffers[index].leases > 0 {
                    state.buffers[index].orphaned = true
                } else {
                    for plane in mappings[index] { plane.unmap() }
                    closeExports(index)
                }
                if index < state.count { state.setQueued(index, false) }
            }
            var request = v4l2_requestbuffers()
            request.count = 0
            request.type = device.bufferType
            request.memory = V4L2_MEMORY_MMAP.rawValue
            _ = device.file.ioctlErrno(cv4l2_VIDIOC_REQBUFS, &request)
        }
    }
}
