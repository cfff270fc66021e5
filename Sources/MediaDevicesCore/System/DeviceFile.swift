import CLinuxSystem
import Glibc
import Synchronization
import SystemPackage

/// The one owner of an open device node's file descriptor. Closing happens exactly once, in
/// `close()` or `deinit`, and may come from another thread than the ioctls (a capture thread
/// closes a device that failed). Every ioctl goes through `ioctl(_:_:_:)`, which retries
/// `EINTR`, reports `EAGAIN` as "nothing yet" and turns every other errno into a
/// `MediaDevicesError` that names the device and the ioctl.
package final class DeviceFile: Sendable {
    /// The path the node was opened by.
    package let path: String
    private let descriptor: Atomic<Int32>

    /// Opens `path` read-write, non-blocking and close-on-exec.
    package init(path: String) throws(MediaDevicesError) {
        self.path = path
        do {
            let opened = try FileDescriptor.open(FilePath(path), .readWrite,
                                                 options: [.nonBlocking, .closeOnExec], retryOnInterrupt: true)
            descriptor = Atomic(opened.rawValue)
        } catch let error as Errno {
            throw MediaDevicesError.fromErrno(error.rawValue, device: path, operation: "open")
        } catch {
            throw MediaDevicesError.converting(error, device: path, operation: "open")
        }
    }

    deinit { close() }

    /// The raw descriptor, for `poll` and `mmap`; -1 once closed.
    package var rawValue: Int32 { descriptor.load(ordering: .acquiring) }

    /// Whether the descriptor has been closed.
    package var isClosed: Bool { rawValue < 0 }

    /// Closes the descriptor. Safe to call more than once, from any thread.
    package func close() {
        let old = descriptor.exchange(-1, ordering: .acquiringAndReleasing)
        if old >= 0 { try? FileDescriptor(rawValue: old).close() }
    }

    /// Issues `request` with `argument`. Returns `false` if the driver said `EAGAIN` (for
    /// `VIDIOC_DQBUF`: no frame ready yet); throws for any other failure.
    @discardableResult
    package func ioctl<T>(_ request: UInt, _ argument: inout T, _ name: StaticString) throws(MediaDevicesError) -> Bool {
        let error = ioctlErrno(request, &argument)
        switch error {
        case 0: return true
        case EAGAIN: return false
        case EBADF where isClosed:
            throw MediaDevicesError(.invalidState, device: path, operation: "\(name)",
                                    detail: "The device was closed (after it failed or was released); `initialize()` or `start()` opens it again")
        default: throw MediaDevicesError.fromErrno(error, device: path, operation: "\(name)")
        }
    }

    /// Like `ioctl`, but returns the errno (0 on success) instead of throwing, for enumeration
    /// loops that end on `EINVAL` and probes where failure is an answer.
    package func ioctlErrno<T>(_ request: UInt, _ argument: inout T) -> Int32 {
        while true {
            let fd = rawValue
            if fd < 0 { return EBADF }
            let result = withUnsafeMutablePointer(to: &argument) {
                clinuxsystem_ioctl(fd, request, UnsafeMutableRawPointer($0))
            }
            if result >= 0 { return 0 }
            if Glibc.errno != EINTR { return Glibc.errno }
        }
    }
}
