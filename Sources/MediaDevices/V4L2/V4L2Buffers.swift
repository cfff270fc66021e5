import CV4L2
import Glibc

/// The mmap'd buffers of one streaming run, and the queue/dequeue/stream ioctls over them.
/// Teardown order is STREAMOFF → munmap → REQBUFS(0), in `release()`, exactly once.
final class V4L2Buffers: @unchecked Sendable {
    /// Where each image plane of a frame sits: which memory plane, at what offset, how long.
    struct PlaneSlot {
        var memoryPlane: Int
        var offset: Int
        var length: Int
        var bytesPerRow: Int
    }

    let device: V4L2Device
    let format: VideoFormat
    private var mappings: [[MappedMemory]] = []
    private let memoryPlaneCount: Int
    private let planeArray: UnsafeMutablePointer<v4l2_plane>
    private let slots: [PlaneSlot]
    private var streaming = false
    private var released = false

    /// Requests `count` mmap buffers (the driver may grant more), maps and queues them all.
    init(device: V4L2Device, format: VideoFormat, count: Int) throws {
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
        do {
            try device.file.ioctl(cv4l2_VIDIOC_REQBUFS, &request, "VIDIOC_REQBUFS")
            guard request.count >= 2 else {
                throw MediaDevicesError(.io, device: device.path, operation: "VIDIOC_REQBUFS",
                                        detail: "The driver granted only \(request.count) buffer(s); at least 2 are needed. Free memory or use a smaller format")
            }
            for index in 0..<request.count {
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
                try device.file.ioctl(cv4l2_VIDIOC_QBUF, &buffer, "VIDIOC_QBUF")
            }
        } catch {
            release()
            throw error
        }
    }

    deinit {
        release()
        planeArray.deallocate()
    }

    /// The number of buffers the driver granted.
    var count: Int { mappings.count }

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

    private func makeBuffer(index: UInt32) -> v4l2_buffer {
        var buffer = v4l2_buffer()
        buffer.index = index
        buffer.type = device.bufferType
        buffer.memory = V4L2_MEMORY_MMAP.rawValue
        if device.isMultiplanar {
            buffer.length = UInt32(memoryPlaneCount)
            buffer.m.planes = planeArray
        }
        return buffer
    }

    /// Starts streaming (`VIDIOC_STREAMON`).
    func streamOn() throws {
        var type = Int32(device.bufferType)
        try device.file.ioctl(cv4l2_VIDIOC_STREAMON, &type, "VIDIOC_STREAMON")
        streaming = true
    }

    /// Dequeues one filled buffer and lends it to `body` as a frame, then queues it again.
    /// Returns `false` if no buffer was ready (`EAGAIN`). Allocates nothing.
    func withNextFrame(orientation: VideoOrientation, _ body: (VideoFrame) -> Void) throws -> Bool {
        var buffer = makeBuffer(index: 0)
        guard try device.file.ioctl(cv4l2_VIDIOC_DQBUF, &buffer, "VIDIOC_DQBUF") else { return false }
        let now = MonotonicClock.now()
        // Driver timestamps are CLOCK_MONOTONIC when the flags say so; otherwise (COPY, UNKNOWN,
        // or nonsense) the dequeue time stands in, and the capture delay is unknown (zero).
        let monotonic = buffer.flags & UInt32(V4L2_BUF_FLAG_TIMESTAMP_MASK) == UInt32(V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC)
            && buffer.timestamp.tv_sec >= 0 && buffer.timestamp.tv_usec >= 0
        let timestamp = monotonic
            ? UInt64(buffer.timestamp.tv_sec) * 1_000_000_000 + UInt64(buffer.timestamp.tv_usec) * 1_000 : now
        let delay: Duration = now >= timestamp ? .nanoseconds(Int64(now - timestamp)) : .zero
        let index = Int(buffer.index)
        // Multi-planar: bytesused counts from the start of the plane, data_offset included.
        let bytesUsed = device.isMultiplanar
            ? Int(planeArray[0].bytesused) - Int(min(planeArray[0].data_offset, planeArray[0].bytesused))
            : Int(buffer.bytesused)
        let isError = buffer.flags & UInt32(V4L2_BUF_FLAG_ERROR) != 0
        if !isError {
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
                            plane0: plane(0), plane1: plane(1), plane2: plane(2)))
        }
        var requeue = makeBuffer(index: buffer.index)
        try device.file.ioctl(cv4l2_VIDIOC_QBUF, &requeue, "VIDIOC_QBUF")
        return true
    }

    /// STREAMOFF → munmap → REQBUFS(0). Errors are ignored: the device may already be gone.
    func release() {
        guard !released else { return }
        released = true
        if streaming {
            var type = Int32(device.bufferType)
            _ = device.file.ioctlErrno(cv4l2_VIDIOC_STREAMOFF, &type)
            streaming = false
        }
        for planes in mappings { for plane in planes { plane.unmap() } }
        mappings.removeAll()
        var request = v4l2_requestbuffers()
        request.count = 0
        request.type = device.bufferType
        request.memory = V4L2_MEMORY_MMAP.rawValue
        _ = device.file.ioctlErrno(cv4l2_VIDIOC_REQBUFS, &request)
    }
}
