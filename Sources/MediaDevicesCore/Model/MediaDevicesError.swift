#if canImport(Glibc)
import Glibc
#endif
import SystemPackage

/// The one error type of MediaDevices. Each error has a stable ``MediaDevicesError/code-swift.property``,
/// names the device and the operation, says what happened (``MediaDevicesError/detail``) and, where
/// the library knows, what to do about it (``MediaDevicesError/remedy``, in terms of the library's own
/// calls); an error of another library that caused it stays readable as ``MediaDevicesError/underlying``.
/// ``MediaDevicesError/description`` joins them into one sentence for people.
public struct MediaDevicesError: Error, Sendable, CustomStringConvertible, Equatable {
    /// A stable error code. New codes may come in later versions, so a `switch` over codes
    /// needs a `default` (codes are static members of a struct, as swift-nio's errors are, not
    /// cases of an enum that a new case would break). The raw value is part of the CLI's JSON
    /// output.
    public struct Code: Hashable, Sendable, Codable, CustomStringConvertible {
        /// The code's stable name (`"disconnected"`), as the CLI's JSON output writes it.
        public let rawValue: String

        private init(_ rawValue: String) { self.rawValue = rawValue }

        /// The code named `rawValue`, if there is one (a name from the CLI's JSON output).
        public init?(rawValue: String) {
            guard let known = Code.all.first(where: { $0.rawValue == rawValue }) else { return nil }
            self = known
        }

        /// Decodes a code from its name.
        public init(from decoder: any Decoder) throws {
            let name = try decoder.singleValueContainer().decode(String.self)
            guard let code = Code(rawValue: name) else {
                throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "No MediaDevicesError code named \(name)"))
            }
            self = code
        }

        /// Encodes the code's name.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(rawValue)
        }

        /// The code's name.
        public var description: String { rawValue }

        /// The device went away (ENODEV, ENXIO): unplugged, driver unloaded, or disconnected.
        public static let disconnected = Code("disconnected")
        /// Another process holds the device (EBUSY): it is already streaming.
        public static let busy = Code("busy")
        /// No permission to open or use the device (EACCES, EPERM).
        public static let permissionDenied = Code("permissionDenied")
        /// The device cannot produce the requested format, size or rate.
        public static let unsupportedFormat = Code("unsupportedFormat")
        /// The call is not valid in the current state (for example `start` before `initialize`).
        public static let invalidState = Code("invalidState")
        /// No frame or answer arrived in time.
        public static let timeout = Code("timeout")
        /// Any other I/O or driver failure; ``MediaDevicesError/errno`` says which.
        public static let io = Code("io")
        /// No such device (the path, index or identifier names nothing).
        public static let notFound = Code("notFound")
        /// One frame could not be used (a truncated or corrupt JPEG): it is dropped and counted,
        /// and capture goes on.
        public static let corruptFrame = Code("corruptFrame")
        /// A value a control (or an option) does not take: out of range, off its step, not in
        /// its menu, of the wrong type. The detail names the control, the value and what it takes.
        public static let invalidValue = Code("invalidValue")
        /// The task waiting (for a person's answer, a server or a first picture) was cancelled.
        public static let cancelled = Code("cancelled")
        /// No file descriptor was left to open the device, or a file or event it needs
        /// (`EMFILE`: this process's limit; `ENFILE`: the system's). Nothing was left half-open
        /// and running captures go on; release what you no longer use or raise the limit.
        public static let tooManyOpenFiles = Code("tooManyOpenFiles")

        /// Every code this version knows.
        public static let all: [Code] = [.disconnected, .busy, .permissionDenied, .unsupportedFormat, .invalidState,
                                         .timeout, .io, .notFound, .corruptFrame, .invalidValue, .cancelled,
                                         .tooManyOpenFiles]
    }

    /// The stable code.
    public let code: Code
    /// The device the error is about (`/dev/video0`, `testpattern`), if any.
    public let device: String?
    /// The operation that failed, in kernel terms where there is one (`VIDIOC_STREAMON`, `open`).
    public let operation: String
    /// The errno value behind the error, if it came from a system call (swift-system's
    /// `Errno`: compare with `.resourceBusy`, `.noSuchFileOrDirectory`, …, or read `rawValue`).
    public let errno: Errno?
    /// What happened, in a sentence (may be empty when ``MediaDevicesError/operation`` and
    /// ``MediaDevicesError/errno`` say it all). Older errors still carry their remedy here too;
    /// ``MediaDevicesError/remedy`` is where new ones put it.
    public let detail: String
    /// What the caller can do about it, in a sentence that names the library's calls (or a package
    /// to install, a permission to grant), when the library knows; `nil` otherwise.
    public let remedy: String?
    /// The error another library or the standard library threw that caused this one (a decoder's,
    /// Foundation's), kept whole; `nil` when the cause is ``MediaDevicesError/errno`` or the library itself.
    public let underlying: (any Error)?

    /// Creates an error. Prefer the factory functions, which write the remedy for you.
    public init(_ code: Code, device: String?, operation: String, errno: Errno? = nil, detail: String,
                remedy: String? = nil, underlying: (any Error)? = nil) {
        self.code = code
        self.device = device
        self.operation = operation
        self.errno = errno
        self.detail = detail
        self.remedy = remedy
        self.underlying = underlying
    }

    /// An error whose errno is the raw value a C call set.
    package init(_ code: Code, device: String?, operation: String, errno: Int32?, detail: String, remedy: String? = nil) {
        self.init(code, device: device, operation: operation, errno: errno.map(Errno.init(rawValue:)), detail: detail, remedy: remedy)
    }

    /// `"/dev/video0: VIDIOC_STREAMON failed: device or resource busy (EBUSY). Another process…"`:
    /// the device, the operation, the errno, then ``detail`` and ``remedy`` as sentences.
    public var description: String {
        var text = device.map { "\($0): " } ?? ""
        text += "\(operation) failed"
        if let errno { text += ": \(String(cString: strerror(errno.rawValue))) (\(MediaDevicesError.errnoName(errno.rawValue)))" }
        if !detail.isEmpty { text += ". \(detail)" }
        if let remedy, !remedy.isEmpty { text += detail.isEmpty || detail.hasSuffix(".") ? " \(remedy)" : ". \(remedy)" }
        return text
    }

    /// Equal when every field is, the underlying errors compared by their descriptions (an
    /// arbitrary `Error` is not `Equatable`).
    public static func == (lhs: MediaDevicesError, rhs: MediaDevicesError) -> Bool {
        lhs.code == rhs.code && lhs.device == rhs.device && lhs.operation == rhs.operation && lhs.errno == rhs.errno
            && lhs.detail == rhs.detail && lhs.remedy == rhs.remedy
            && lhs.underlying.map { String(describing: $0) } == rhs.underlying.map { String(describing: $0) }
    }

    /// Maps an errno from `operation` on `device` to an error with a remedy.
    package static func fromErrno(_ errno: Errno, device: String?, operation: String) -> MediaDevicesError {
        fromErrno(errno.rawValue, device: device, operation: operation)
    }

    /// Maps the raw errno a C call set (see `fromErrno(_:device:operation:)`).
    package static func fromErrno(_ errno: Int32, device: String?, operation: String) -> MediaDevicesError {
        let name = device ?? "The device"
        // ENOENT from open is a node that is not there; from anything else, one that went away.
        let gone = errno == ENODEV || errno == ENXIO || (errno == ENOENT && operation != "open")
        switch errno {
        case _ where gone:
            return MediaDevicesError(.disconnected, device: device, operation: operation, errno: errno,
                                     detail: "\(name) is gone (unplugged, disconnected or its driver was unloaded); pick another device or wait for it to come back")
        case ENOENT:
            return MediaDevicesError(.notFound, device: device, operation: operation, errno: errno,
                                     detail: "No such device node", remedy: "CaptureDevice.discover() lists the cameras there are")
        case EBUSY:
            return MediaDevicesError(.busy, device: device, operation: operation, errno: errno,
                                     detail: "Another process is using \(name) (streaming from it or holding its buffers); close that application, or find it with `fuser \(device ?? "/dev/video*")`"
                                         + ((device ?? "").hasPrefix("/dev/video") ? ". If it is PipeWire (wireplumber offers the camera to applications), read the camera through PipeWire instead, shared with them: CaptureDevice.discover(backends: [.pipewire]) and PipeWireCameraSource" : ""))
        case EACCES, EPERM:
            return MediaDevicesError(.permissionDenied, device: device, operation: operation, errno: errno,
                                     detail: "This user may not open \(name); add it to the `video` group (`usermod -aG video $USER`, then log in again) or install the rules in udev/ so the seat's user gets access")
        case EINVAL where operation == "VIDIOC_S_FMT" || operation == "VIDIOC_REQBUFS":
            return MediaDevicesError(.unsupportedFormat, device: device, operation: operation, errno: errno,
                                     detail: "The driver rejected the format or buffer request",
                                     remedy: "CaptureDevice.supportedFormats() lists what it supports")
        case ENOSPC where operation == "VIDIOC_STREAMON":
            return MediaDevicesError(.io, device: device, operation: operation, errno: errno,
                                     detail: "Not enough bus bandwidth to stream (USB cameras): pick a smaller size or rate, MJPEG instead of raw, or another USB port")
        case ENOMEM:
            return MediaDevicesError(.io, device: device, operation: operation, errno: errno,
                                     detail: "The driver could not allocate buffers; use fewer or smaller buffers (a smaller format), or free memory")
        case EMFILE, ENFILE:
            return .tooManyOpenFiles(errno, device: device, operation: operation)
        case ETIMEDOUT:
            return MediaDevicesError(.timeout, device: device, operation: operation, errno: errno,
                                     detail: "The device did not answer in time; check its cable and power, then try again")
        default:
            return MediaDevicesError(.io, device: device, operation: operation, errno: errno,
                                     detail: "The driver reported an error; `dmesg` may say more")
        }
    }

    /// `EMFILE` or `ENFILE` from `operation`: no descriptor left, for this process or the system.
    package static func tooManyOpenFiles(_ errno: Int32, device: String?, operation: String) -> MediaDevicesError {
        let whose = errno == ENFILE ? "the system's open-file table is full" : "this process has every file descriptor its limit allows open"
        return MediaDevicesError(.tooManyOpenFiles, device: device, operation: operation, errno: errno,
                                 detail: "No file descriptor left: \(whose); nothing was left half-open",
                                 remedy: errno == ENFILE
                                     ? "Release the sources and devices you no longer use (release()), or raise the system's limit (fs.file-max)"
                                     : "Release the sources and devices you no longer use (release()), or raise the process's limit: setrlimit(RLIMIT_NOFILE), `ulimit -n` in its shell, or LimitNOFILE= in its systemd unit")
    }

    /// Maps an errno from `operation` on the file `path` (not a device) to an error with a remedy.
    package static func fromFileErrno(_ errno: Errno, path: String, operation: String) -> MediaDevicesError {
        fromFileErrno(errno.rawValue, path: path, operation: operation)
    }

    /// Maps the raw errno a C call set (see `fromFileErrno(_:path:operation:)`).
    package static func fromFileErrno(_ errno: Int32, path: String, operation: String) -> MediaDevicesError {
        let remedy: String
        let code: Code
        switch errno {
        case ENOENT, ENOTDIR:
            // The folder may exist and still refuse new files (procfs and sysfs say ENOENT).
            let slash = path.lastIndex(of: "/")
            let folder = slash.map { String(path[..<$0]) }.map { $0.isEmpty ? "/" : $0 } ?? "."
            var status = stat()
            if stat(folder, &status) == 0, status.st_mode & S_IFMT == S_IFDIR {
                (code, remedy) = (.io, "The folder \(folder) exists, but its filesystem refused to create a file in it (procfs and sysfs take no new files); choose a path on a writable disk")
            } else {
                (code, remedy) = (.notFound, "The folder \(folder) does not exist; create it or choose another path")
            }
        case EISDIR: (code, remedy) = (.invalidValue, "\(path) is a folder, not a file; name a file in it")
        case EACCES, EPERM, EROFS: (code, remedy) = (.permissionDenied, "This user may not write \(path); choose a writable path")
        case ENOSPC, EDQUOT: (code, remedy) = (.io, "The disk holding \(path) is full; free space or write elsewhere")
        case EMFILE, ENFILE: return .tooManyOpenFiles(errno, device: path, operation: operation)
        default: (code, remedy) = (.io, "Writing \(path) failed; check the disk and the path")
        }
        return MediaDevicesError(code, device: nil, operation: operation, errno: errno, detail: remedy)
    }

    /// `error` itself when it is a `MediaDevicesError`, else an `.io` error about `device` and
    /// `operation` that carries its text and keeps it as `underlying` (what a system or standard
    /// library let through).
    package static func converting(_ error: any Error, device: String?, operation: String) -> MediaDevicesError {
        error as? MediaDevicesError ?? MediaDevicesError(.io, device: device, operation: operation, detail: "\(error)",
                                                          underlying: error)
    }

    /// What `body` returns; what it throws (its errors are untyped: a caller's closure, a
    /// Foundation or standard-library call) comes out as a `MediaDevicesError`, itself when it
    /// is one, else `converting(_:device:operation:)` keeps it as `underlying`.
    package static func catching<R>(device: String?, operation: String, _ body: () throws -> R) throws(MediaDevicesError) -> R {
        do {
            return try body()
        } catch {
            throw converting(error, device: device, operation: operation)
        }
    }

    /// The symbolic name of common errno values (`EBUSY`), else `errno N`.
    package static func errnoName(_ value: Int32) -> String {
        let names: [Int32: String] = [
            EPERM: "EPERM", ENOENT: "ENOENT", EINTR: "EINTR", EIO: "EIO", ENXIO: "ENXIO",
            EBADF: "EBADF", EAGAIN: "EAGAIN", ENOMEM: "ENOMEM", EACCES: "EACCES", EBUSY: "EBUSY",
            ENODEV: "ENODEV", EINVAL: "EINVAL", ENOTTY: "ENOTTY", ENOSPC: "ENOSPC", EPIPE: "EPIPE",
            ETIMEDOUT: "ETIMEDOUT", ENOSYS: "ENOSYS", EOPNOTSUPP: "EOPNOTSUPP", EMFILE: "EMFILE", ENFILE: "ENFILE",
        ]
        return names[value] ?? "errno \(value)"
    }
}
