#if canImport(Glibc)
import Glibc
#endif

/// The one error type of MediaDevices. Each error has a stable `code`, names the device and the
/// operation, and its `description` says what to do about it.
public struct MediaDevicesError: Error, Sendable, CustomStringConvertible, Equatable {
    /// Stable error codes. Their raw values are part of the CLI's JSON output.
    public enum Code: String, Sendable, Codable {
        /// The device went away (ENODEV, ENXIO): unplugged, driver unloaded, or disconnected.
        case disconnected
        /// Another process holds the device (EBUSY): it is already streaming.
        case busy
        /// No permission to open or use the device (EACCES, EPERM).
        case permissionDenied
        /// The device cannot produce the requested format, size or rate.
        case unsupportedFormat
        /// The call is not valid in the current state (for example `start` before `initialize`).
        case invalidState
        /// No frame or answer arrived in time.
        case timeout
        /// Any other I/O or driver failure; `errno` says which.
        case io
        /// No such device (the path, index or identifier names nothing).
        case notFound
        /// One frame could not be used (a truncated or corrupt JPEG): it is dropped and counted,
        /// and capture goes on.
        case corruptFrame
        /// A value a control (or an option) does not take: out of range, off its step, not in
        /// its menu, of the wrong type. The detail names the control, the value and what it takes.
        case invalidValue
    }

    /// The stable code.
    public let code: Code
    /// The device the error is about (`/dev/video0`, `testpattern`), if any.
    public let device: String?
    /// The operation that failed, in kernel terms where there is one (`VIDIOC_STREAMON`, `open`).
    public let operation: String
    /// The errno value behind the error, if it came from a system call.
    public let errno: Int32?
    /// A sentence on what happened and what to do about it.
    public let detail: String

    /// Creates an error. Prefer the factory functions, which write the remedy for you.
    public init(_ code: Code, device: String?, operation: String, errno: Int32? = nil, detail: String) {
        self.code = code
        self.device = device
        self.operation = operation
        self.errno = errno
        self.detail = detail
    }

    /// `"/dev/video0: VIDIOC_STREAMON failed: device or resource busy (EBUSY). Another process…"`.
    public var description: String {
        var text = device.map { "\($0): " } ?? ""
        text += "\(operation) failed"
        if let errno { text += ": \(String(cString: strerror(errno))) (\(MediaDevicesError.errnoName(errno)))" }
        return detail.isEmpty ? text : "\(text). \(detail)"
    }

    /// Maps an errno from `operation` on `device` to an error with a remedy.
    public static func fromErrno(_ errno: Int32, device: String?, operation: String) -> MediaDevicesError {
        let name = device ?? "The device"
        switch errno {
        case ENODEV, ENXIO, ENOENT where operation != "open":
            return MediaDevicesError(.disconnected, device: device, operation: operation, errno: errno,
                                     detail: "\(name) is gone (unplugged, disconnected or its driver was unloaded); pick another device or wait for it to come back")
        case ENOENT:
            return MediaDevicesError(.notFound, device: device, operation: operation, errno: errno,
                                     detail: "No such device node; run `mediadevices list` to see the devices there are")
        case EBUSY:
            return MediaDevicesError(.busy, device: device, operation: operation, errno: errno,
                                     detail: "Another process is using \(name) (streaming from it or holding its buffers); close that application, or find it with `fuser \(device ?? "/dev/video*")`"
                                         + ((device ?? "").hasPrefix("/dev/video") ? ". If it is PipeWire (wireplumber offers the camera to applications), read the camera through PipeWire instead, shared with them: CaptureDevice.devices(backends: [.pipewire]) and PipeWireCameraSource" : ""))
        case EACCES, EPERM:
            return MediaDevicesError(.permissionDenied, device: device, operation: operation, errno: errno,
                                     detail: "This user may not open \(name); add it to the `video` group (`usermod -aG video $USER`, then log in again) or install the rules in udev/ so the seat's user gets access")
        case EINVAL where operation == "VIDIOC_S_FMT" || operation == "VIDIOC_REQBUFS":
            return MediaDevicesError(.unsupportedFormat, device: device, operation: operation, errno: errno,
                                     detail: "The driver rejected the format or buffer request; run `mediadevices formats \(device ?? "DEVICE")` for what it supports")
        case ENOSPC where operation == "VIDIOC_STREAMON":
            return MediaDevicesError(.io, device: device, operation: operation, errno: errno,
                                     detail: "Not enough bus bandwidth to stream (USB cameras): pick a smaller size or rate, MJPEG instead of raw, or another USB port")
        case ENOMEM:
            return MediaDevicesError(.io, device: device, operation: operation, errno: errno,
                                     detail: "The driver could not allocate buffers; use fewer or smaller buffers (a smaller format), or free memory")
        case EMFILE, ENFILE:
            return MediaDevicesError(.io, device: device, operation: operation, errno: errno,
                                     detail: "Too many open files; release unused sources or raise the limit (`ulimit -n`)")
        case ETIMEDOUT:
            return MediaDevicesError(.timeout, device: device, operation: operation, errno: errno,
                                     detail: "The device did not answer in time; check its cable and power, then try again")
        default:
            return MediaDevicesError(.io, device: device, operation: operation, errno: errno,
                                     detail: "The driver reported an error; `dmesg` may say more")
        }
    }

    /// Maps an errno from `operation` on the file `path` (not a device) to an error with a remedy.
    public static func fromFileErrno(_ errno: Int32, path: String, operation: String) -> MediaDevicesError {
        let remedy: String
        let code: Code
        switch errno {
        case ENOENT, ENOTDIR: (code, remedy) = (.notFound, "The folder \(path) would go in does not exist; create it or choose another path")
        case EACCES, EPERM, EROFS: (code, remedy) = (.permissionDenied, "This user may not write \(path); choose a writable path")
        case ENOSPC, EDQUOT: (code, remedy) = (.io, "The disk holding \(path) is full; free space or write elsewhere")
        default: (code, remedy) = (.io, "Writing \(path) failed; check the disk and the path")
        }
        return MediaDevicesError(code, device: nil, operation: operation, errno: errno, detail: remedy)
    }

    /// The symbolic name of common errno values (`EBUSY`), else `errno N`.
    static func errnoName(_ value: Int32) -> String {
        let names: [Int32: String] = [
            EPERM: "EPERM", ENOENT: "ENOENT", EINTR: "EINTR", EIO: "EIO", ENXIO: "ENXIO",
            EBADF: "EBADF", EAGAIN: "EAGAIN", ENOMEM: "ENOMEM", EACCES: "EACCES", EBUSY: "EBUSY",
            ENODEV: "ENODEV", EINVAL: "EINVAL", ENOTTY: "ENOTTY", ENOSPC: "ENOSPC", EPIPE: "EPIPE",
            ETIMEDOUT: "ETIMEDOUT", ENOSYS: "ENOSYS", EOPNOTSUPP: "EOPNOTSUPP",
        ]
        return names[value] ?? "errno \(value)"
    }
}
