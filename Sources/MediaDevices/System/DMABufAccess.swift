import CV4L2
import Glibc

extension DMABufPlane {
    /// Maps the DMA-BUF read-only and lends the plane's bytes (from `offset` to the end of the
    /// buffer) to `body`, between `DMA_BUF_IOCTL_SYNC` start and end, so the CPU sees what the
    /// device wrote (caches are synchronised on architectures that need it). Maps on every call:
    /// meant for checks and occasional CPU reads, not for a per-frame path (read the frame's
    /// planes for that: they are the same memory, already mapped).
    public func withCPUAccess<R>(_ body: (UnsafeRawBufferPointer) throws -> R) throws -> R {
        let mapping = try MappedMemory(descriptor: descriptor, device: "dma-buf fd \(descriptor)", length: length,
                                       offset: 0, protection: PROT_READ, operation: "mmap(dma-buf)")
        defer { mapping.unmap() }
        try sync(DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ)
        defer { try? sync(DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ) }
        let whole = mapping.bytes(count: length)
        return try body(UnsafeRawBufferPointer(rebasing: whole[min(offset, whole.count)...]))
    }

    private func sync(_ flags: Int32) throws {
        var request = dma_buf_sync(flags: UInt64(flags))
        while cv4l2_ioctl(descriptor, cv4l2_DMA_BUF_IOCTL_SYNC, &request) < 0 {
            if errno == EINTR { continue }
            throw MediaDevicesError.fromErrno(errno, device: "dma-buf fd \(descriptor)", operation: "DMA_BUF_IOCTL_SYNC")
        }
    }
}
