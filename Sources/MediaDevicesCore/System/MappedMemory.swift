import Glibc

/// The one owner of an `mmap`ed region of a device buffer; `munmap` happens exactly once, in
/// `unmap()` or `deinit`.
// @unchecked Sendable: `address` changes only in `unmap()`, which its one owner calls (under the buffers' lock, or on the capture thread after the run).
package final class MappedMemory: @unchecked Sendable {
    /// The start of the mapping; `nil` after `unmap()`.
    package private(set) var address: UnsafeMutableRawPointer?
    /// The mapped length in bytes.
    package let length: Int

    /// Maps `length` bytes of `file` at `offset` (the offset V4L2's `VIDIOC_QUERYBUF` gives).
    package convenience init(file: DeviceFile, length: Int, offset: Int, operation: StaticString = "mmap") throws(MediaDevicesError) {
        try self.init(descriptor: file.rawValue, device: file.path, length: length, offset: offset,
                      protection: PROT_READ | PROT_WRITE, operation: operation)
    }

    /// Maps `length` bytes of the open descriptor `descriptor` (a device node, or a dma-buf a
    /// driver exported) at `offset` with `protection`; errors name `device`.
    package init(descriptor: Int32, device: String, length: Int, offset: Int, protection: Int32, operation: StaticString = "mmap") throws(MediaDevicesError) {
        let pointer = mmap(nil, length, protection, MAP_SHARED, descriptor, off_t(offset))
        guard let pointer, pointer != MAP_FAILED else {
            throw MediaDevicesError.fromErrno(errno, device: device, operation: "\(operation)")
        }
        address = pointer
        self.length = length
    }

    deinit { unmap() }

    /// Unmaps the region. Safe to call more than once.
    package func unmap() {
        guard let address else { return }
        munmap(address, length)
        self.address = nil
    }

    /// The mapped bytes, the first `count` of them.
    package func bytes(count: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: address, count: min(count, address == nil ? 0 : length))
    }
}
