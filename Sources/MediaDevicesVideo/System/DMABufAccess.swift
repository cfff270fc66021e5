import MediaDevicesCore
import CLinuxSystem
import CV4L2
import Glibc

extension DMABufPlane {
    /// Maps the DMA-BUF read-only and lends the plane's bytes (from `offset` to the end of the
    /// buffer) to `body`, between `DMA_BUF_IOCTL_SYNC` start and end, so the CPU sees what the
    /// device wrote (caches are synchronised on architectures that need it). Maps on every call:
    /// meant for checks and occasional CPU reads, not for a per-frame path (read the frame's
    /// planes for that: they are the same memory, already mapped).
    public func withCPUAccess<R>(_ body: (UnsafeRawBufferPointer) throws -> R) throws(MediaDevicesError) -> R {
        let descriptor = self.descriptor.rawValue
        let mapping = try MappedMemory(descriptor: descriptor, device: "dma-buf fd \(descriptor)", length: length,
                                       offset: 0, protection: PROT_READ, operation: "mmap(dma-buf)")
        defer { mapping.unmap() }
        try DMABufSync.beginRead(descriptor)
        defer { DMABufSync.endRead(descriptor) }
        let whole = mapping.bytes(count: length)
        return try MediaDevicesError.catching(device: "dma-buf fd \(descriptor)", operation: "withCPUAccess's body") {
            try body(UnsafeRawBufferPointer(rebasing: whole[min(offset, whole.count)...]))
        }
    }
}

/// `DMA_BUF_IOCTL_SYNC` around CPU reads of a mapped DMA-BUF: the CPU sees what the device
/// wrote (caches synchronised where the architecture needs it). Allocates nothing.
enum DMABufSync {
    /// `DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ` before reading `descriptor`'s mapping.
    static func beginRead(_ descriptor: Int32) throws(MediaDevicesError) {
        let error = sync(descriptor, DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ)
        if error != 0 { throw MediaDevicesError.fromErrno(error, device: "dma-buf fd \(descriptor)", operation: "DMA_BUF_IOCTL_SYNC") }
    }

    /// `DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ` after reading; a failure is ignored (the read is
    /// over, and the kernel ends an unmatched access itself when the descriptor closes).
    static func endRead(_ descriptor: Int32) {
        _ = sync(descriptor, DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ)
    }

    /// The ioctl, retried on `EINTR`; returns 0 or the errno.
    private static func sync(_ descriptor: Int32, _ flags: Int32) -> Int32 {
        var request = dma_buf_sync(flags: UInt64(flags))
        while clinuxsystem_ioctl(descriptor, cv4l2_DMA_BUF_IOCTL_SYNC, &request) < 0 {
            if errno == EINTR { continue }
            return errno
        }
        return 0
    }
}
