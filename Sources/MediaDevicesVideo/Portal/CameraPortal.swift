#if PipeWire
import MediaDevicesCore
import Glibc
import Logging

/// The Camera portal (`org.freedesktop.portal.Camera` of xdg-desktop-portal on the session
/// bus), through which sandboxed applications (Flatpak, Snap) reach cameras: `IsCameraPresent`,
/// `AccessCamera` (the user is asked once; the answer is kept in the permission store) and
/// `OpenPipeWireRemote` (a PipeWire connection that sees only the camera nodes). Its cameras
/// are listed with ``CaptureDevice/discover(backends:pipeWireTimeout:logger:)`` (`[.portal]`) once access was granted, and
/// read with ``PipeWireCameraSource`` over a remote of their own.
public struct CameraPortal: Sendable {
    static let destination = "org.freedesktop.portal.Desktop"
    static let objectPath = "/org/freedesktop/portal/desktop"
    static let interface = "org.freedesktop.portal.Camera"
    /// What to install when there is no portal, for error messages.
    static let installHint = "install xdg-desktop-portal and a backend with an Access dialog (xdg-desktop-portal-gnome, -kde or -gtk; xdg-desktop-portal 1.16 offers the Camera portal only with one) and run inside a desktop session"

    /// The session bus address (`nil`: the environment's, `DBUS_SESSION_BUS_ADDRESS`).
    public let busAddress: String?

    /// Where ``requestAccess(timeout:)`` logs the request and its answer (`nil`: nowhere; the
    /// library makes no logger of its own).
    public let logger: Logger?

    /// The portal on the session bus at `busAddress` (the environment's when `nil`), logging to
    /// `logger` (swift-log's; `nil`: no logging).
    public init(busAddress: String? = nil, logger: Logger? = nil) {
        self.busAddress = busAddress
        self.logger = logger
    }

    /// `IsCameraPresent`: whether the portal sees a camera (it counts PipeWire's camera nodes,
    /// not `/dev/video*`). Throws `.notFound`, naming what to install, without a Camera portal.
    public func isCameraPresent() throws(MediaDevicesError) -> Bool {
        let bus = try connect()
        do {
            return try bus.property(Self.destination, Self.objectPath, Self.interface, "IsCameraPresent").bool ?? false
        } catch let failure as DBusFailure {
            throw error(failure, operation: "IsCameraPresent")
        } catch {
            throw MediaDevicesError.converting(error, device: busAddress, operation: "IsCameraPresent")
        }
    }

    /// `AccessCamera`: asks for access to the cameras, waiting up to `timeout` for the user (the
    /// permission store's stored answer is used without asking). Runs on a thread of its own;
    /// cancelling the calling task ends the wait (`.cancelled`, the request is closed). Throws
    /// `.permissionDenied` when the user (or the stored answer) refuses, `.notFound` without a
    /// Camera portal, `.timeout` without an answer in time. Logs the request (info) and its
    /// answer: granted (info), refused (warning), anything else (error), with the time it took.
    public func requestAccess(timeout: Duration = .seconds(120)) async throws(MediaDevicesError) {
        let address = busAddress
        let started = ContinuousClock.now
        logger?.info("asking the Camera portal for camera access", metadata: ["timeout": "\(timeout)"])
        do {
            try await runBlocking(name: "md-camera-portal", device: address, operation: "AccessCamera") {
                try CameraPortal(busAddress: address).accessCamera(timeout: timeout)
            }
        } catch {
            let metadata: Logger.Metadata = ["code": "\(error.code)", "after": "\(ContinuousClock.now - started)"]
            if error.code == .permissionDenied {
                logger?.warning("camera access refused", metadata: metadata)
            } else {
                logger?.error("camera access request failed: \(error)", metadata: metadata)
            }
            throw error
        }
        logger?.info("camera access granted", metadata: ["after": "\(ContinuousClock.now - started)"])
    }

    /// `AccessCamera`, waiting on the calling thread.
    func accessCamera(timeout: Duration) throws(MediaDevicesError) {
        let bus = try connect()
        let code: UInt32
        do {
            code = try bus.portalRequest(Self.destination, Self.objectPath, Self.interface, "AccessCamera", sender: bus.portalSender,
                                         number: 1, timeout: timeout) { writer, token in
                try writer.append(options: [("handle_token", .string(token))])
            }.code
        } catch let failure as DBusFailure {
            throw error(failure, operation: "AccessCamera", timeout: timeout)
        } catch {
            throw MediaDevicesError(.io, device: busAddress, operation: "AccessCamera", detail: "\(error)")
        }
        guard code == 0 else {
            throw MediaDevicesError(.permissionDenied, device: busAddress, operation: "AccessCamera",
                                    detail: "Camera access was refused (portal response \(code)): the user declined, or the permission store keeps a refusal (`flatpak permission-reset APP` or the desktop's privacy settings change it)")
        }
    }

    /// `OpenPipeWireRemote`: a new PipeWire connection that sees the camera nodes (the caller
    /// owns the descriptor). Throws `.permissionDenied` when access was not granted
    /// (`requestAccess()` first), `.notFound` without a Camera portal.
    func openPipeWireRemote() throws(MediaDevicesError) -> Int32 {
        let bus = try connect()
        let reply: DBusMessage
        do {
            reply = try bus.call(Self.destination, Self.objectPath, Self.interface, "OpenPipeWireRemote") { try $0.append(options: []) }
        } catch let failure as DBusFailure {
            throw error(failure, operation: "OpenPipeWireRemote")
        } catch {
            throw MediaDevicesError(.io, device: busAddress, operation: "OpenPipeWireRemote", detail: "\(error)")
        }
        guard case .fileDescriptor(let fd)? = try? reply.read(), fd >= 0 else {
            throw MediaDevicesError(.io, device: busAddress, operation: "OpenPipeWireRemote", detail: "The portal answered without a file descriptor")
        }
        let owned = fcntl(fd, F_DUPFD_CLOEXEC, 3)
        if owned < 0 { throw MediaDevicesError.fromErrno(errno, device: busAddress, operation: "OpenPipeWireRemote (dup)") }
        return owned
    }

    private func connect() throws(MediaDevicesError) -> DBusConnection {
        do {
            return try DBusConnection(address: busAddress)
        } catch {
            throw MediaDevicesError(.notFound, device: busAddress, operation: "connect to the session bus", errno: (error as? DBusFailure)?.errno,
                                    detail: "No D-Bus session bus\(busAddress.map { " at \($0)" } ?? " (DBUS_SESSION_BUS_ADDRESS)"): the Camera portal lives there; \(Self.installHint)")
        }
    }

    /// A D-Bus failure as the package's error.
    private func error(_ failure: DBusFailure, operation: String, timeout: Duration? = nil) -> MediaDevicesError {
        switch failure.name {
        case "org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner",
             "org.freedesktop.DBus.Error.UnknownMethod", "org.freedesktop.DBus.Error.UnknownInterface",
             "org.freedesktop.DBus.Error.UnknownObject", "org.freedesktop.DBus.Error.UnknownProperty",
             "org.freedesktop.DBus.Error.InvalidArgs":
            return MediaDevicesError(.notFound, device: busAddress, operation: operation,
                                     detail: "No Camera portal on the session bus (\(failure.name): \(failure.message)); \(Self.installHint)")
        case "org.freedesktop.portal.Error.NotAllowed", "org.freedesktop.DBus.Error.AccessDenied":
            return MediaDevicesError(.permissionDenied, device: busAddress, operation: operation,
                                     detail: "The Camera portal refused (\(failure.message)); ask for access first (CameraPortal.requestAccess)")
        case "cancelled":
            return MediaDevicesError(.cancelled, device: busAddress, operation: operation, errno: ECANCELED,
                                     detail: "The task waiting for the Camera portal's answer was cancelled; the request was closed")
        case "timeout", "org.freedesktop.DBus.Error.NoReply", "org.freedesktop.DBus.Error.Timeout":
            return MediaDevicesError(.timeout, device: busAddress, operation: operation, errno: ETIMEDOUT,
                                     detail: "The Camera portal did not answer\(timeout.map { " within \($0)" } ?? ""); the user may not have answered its dialog")
        default:
            let denied = failure.message.localizedLowercase.contains("permission denied")
            return MediaDevicesError(denied ? .permissionDenied : .io, device: busAddress, operation: operation,
                                     errno: failure.errno > 0 ? failure.errno : nil,
                                     detail: "\(failure.name): \(failure.message)\(denied ? "; ask for access first (CameraPortal.requestAccess)" : "")")
        }
    }
}
#endif
