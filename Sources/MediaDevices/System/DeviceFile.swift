import CV4L2
import Glibc
import SystemPackage

/// The one owner of an open device node's file descriptor. Closing happens exactly once, in
/// `close()` or `deinit`. Every ioctl goes through `ioctl(_:_:_:)`, which retries `EINTR`,
/// reports `EAGAIN` as "nothing yet" and turns every other errno into a `MediaDevicesError`
/// that names the device and the ioctl.
final class DeviceFile: @unchecked Sendable {
    /// The path the node was opened by.
    let path: String
    private var descriptor: FileDescriptor?

    /// Opens `path` read-write, non-blocking and close-on-exec.
    init(path: String) throws {
        self.path = path
        do {
            descriptor = try FileDescriptor.open(FilePath(path), .readWrite,
                                                 options: [.nonBlocking, .closeOnExec], retryOnInterrupt: true)
        } catch let error as Errno {
            throw MediaDevicesError.fromErrno(error.rawValue, device: path, operation: "open")
        }
    }

    deinit { close() }

    /// The raw descriptor, for `poll` and `mmap`; -1 once closed.
    var rawValue: Int32 { descriptor?.rawValue ?? -1 }

    /// Closes the descriptor. Safe to call more than once.
    func close() {
        guard let descriptor else { return }
        self.descriptor = nil
        try? descriptor.close()
    }

    /// Issues `request` with `argument`. Returns `false` if the driver said `EAGAIN` (for
    /// `VIDIOC_DQBUF`: no frame ready yet); throws for any other failure.
    @discardableResult
    func ioctl<T>(_ request: UInt, _ argument: inout T, _ name: StaticString) throws -> Bool {
        guard let descriptor else {
            throw MediaDevicesError(.invalidState, device: path, operation: "\(name)",
                                    detail: "The device was already closed; open it again")
        }
        while true {
            let result = withUnsafeMutablePointer(to: &argument) {
                cv4l2_ioctl(descriptor.rawValue, request, UnsafeMutableRawPointer($0))
            }
            if result >= 0 { return true }
            let error = Glibc.errno
            if error == EINTR { continue }
            if error == EAGAIN { return false }
            throw MediaDevicesError.fromErrno(error, device: path, operation: "\(name)")
        }
    }

    /// Like `ioctl`, but returns the errno instead of throwing, for enumeration loops that end
    /// on `EINVAL` and probes where failure is an answer.
    func ioctlErrno<T>(_ request: UInt, _ argument: inout T) -> Int32 {
        guard let descriptor else { return EBADF }
        while true {
            let result = withUnsafeMutablePointer(to: &argument) {
                cv4l2_ioctl(descriptor.rawValue, request, UnsafeMutableRawPointer($0))
            }
            if result >= 0 { return 0 }
            if Glibc.errno != EINTR { return Glibc.errno }
        }
    }
}
