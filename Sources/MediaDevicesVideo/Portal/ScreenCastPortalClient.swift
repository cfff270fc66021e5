#if PipeWire
import MediaDevicesCore
import Glibc

/// The ScreenCast portal (`org.freedesktop.portal.ScreenCast` of xdg-desktop-portal on the
/// session bus): sessions, source selection, start, and the PipeWire remote the picked streams
/// are read from. Each request is answered by a `Response` signal on a Request object whose
/// path is known in advance (`/org/freedesktop/portal/desktop/request/SENDER/TOKEN`), so the
/// signal is watched before the call. Used by one thread at a time.
final class ScreenCastPortalClient {
    static let destination = "org.freedesktop.portal.Desktop"
    static let objectPath = "/org/freedesktop/portal/desktop"
    static let interface = "org.freedesktop.portal.ScreenCast"
    /// What to install when there is no portal, for error messages.
    static let installHint = "install xdg-desktop-portal and the backend for the compositor (xdg-desktop-portal-wlr for sway and other wlroots compositors, xdg-desktop-portal-gnome, xdg-desktop-portal-kde) and log in again, so that the session bus starts them"

    /// The connection to the session bus.
    let bus: DBusConnection
    /// The bus address connected to (`nil`: the session bus of the environment), for messages.
    let address: String?
    /// The interface's version.
    let version: UInt32
    /// `AvailableSourceTypes`: 1 monitor, 2 window, 4 virtual.
    let sourceTypes: UInt32
    /// `AvailableCursorModes`: 1 hidden, 2 embedded, 4 metadata.
    let cursorModes: UInt32
    private let sender: String
    private var requests = 0

    /// Connects to the session bus at `address` (the environment's when `nil`) and reads the
    /// ScreenCast interface's properties. Throws `.notFound`, naming what to install, when there
    /// is no session bus, no portal, or a portal without ScreenCast.
    init(address: String?) throws {
        self.address = address
        do {
            bus = try DBusConnection(address: address)
        } catch let failure as DBusFailure {
            throw MediaDevicesError(.notFound, device: address, operation: "connect to the session bus",
                                    errno: failure.errno as Int32?,
                                    detail: "No D-Bus session bus\(address.map { " at \($0)" } ?? " (DBUS_SESSION_BUS_ADDRESS, $XDG_RUNTIME_DIR/bus)"): the Wayland screen-cast portal lives there; run inside a desktop session, or \(ScreenCastPortalClient.installHint)")
        }
        sender = bus.portalSender
        do {
            version = try bus.property(Self.destination, Self.objectPath, Self.interface, "version").uint32 ?? 0
            sourceTypes = try bus.property(Self.destination, Self.objectPath, Self.interface, "AvailableSourceTypes").uint32 ?? 0
            cursorModes = try bus.property(Self.destination, Self.objectPath, Self.interface, "AvailableCursorModes").uint32 ?? 0
        } catch let failure as DBusFailure {
            throw ScreenCastPortalClient.error(failure, operation: "org.freedesktop.portal.ScreenCast", device: address)
        }
    }

    /// `CreateSession`: a new session's handle (an object path).
    func createSession() throws -> String {
        let results = try request("CreateSession") { writer, token in
            try writer.append(options: [("handle_token", .string(token)), ("session_handle_token", .string(token))])
        }
        guard let session = results["session_handle"]?.string else {
            throw MediaDevicesError(.io, device: address, operation: "CreateSession", detail: "The portal answered without a session_handle")
        }
        return session
    }

    /// `SelectSources`: one source of `types` (1 monitor, 2 window), with the cursor as
    /// `cursorMode` asks, kept until revoked (`persist_mode` 2) and restored from `restoreToken`
    /// when there is one (then the user is not asked again).
    func selectSources(session: String, types: UInt32, cursorMode: UInt32, restoreToken: String?) throws {
        var options: [(String, DBusOption)] = [("types", .uint32(types)), ("multiple", .bool(false))]
        if cursorModes & cursorMode != 0 { options.append(("cursor_mode", .uint32(cursorMode))) }
        if version >= 4 {
            options.append(("persist_mode", .uint32(2)))
            if let restoreToken, !restoreToken.isEmpty { options.append(("restore_token", .string(restoreToken))) }
        }
        _ = try request("SelectSources") { writer, token in
            try writer.append(objectPath: session)
            try writer.append(options: [("handle_token", .string(token))] + options)
        }
    }

    /// `Start`: asks the user (or restores the choice) and returns the streams and the new
    /// restore token. Waits at most `timeout` for the user.
    func start(session: String, timeout: Duration) throws -> (streams: [PortalStream], restoreToken: String?) {
        let results = try request("Start", timeout: timeout) { writer, token in
            try writer.append(objectPath: session)
            try writer.append(string: "")
            try writer.append(options: [("handle_token", .string(token))])
        }
        let streams = (results["streams"]?.array ?? []).compactMap(PortalStream.init)
        return (streams, results["restore_token"]?.string)
    }

    /// `OpenPipeWireRemote`: a connection to PipeWire that sees only the session's streams
    /// (the caller owns the descriptor).
    func openPipeWireRemote(session: String) throws -> Int32 {
        let reply: DBusMessage
        do {
            reply = try bus.call(Self.destination, Self.objectPath, Self.interface, "OpenPipeWireRemote") {
                try $0.append(objectPath: session)
                try $0.append(options: [])
            }
        } catch let failure as DBusFailure {
            throw ScreenCastPortalClient.error(failure, operation: "OpenPipeWireRemote", device: address)
        }
        guard case .fileDescriptor(let fd)? = try? reply.read(), fd >= 0 else {
            throw MediaDevicesError(.io, device: address, operation: "OpenPipeWireRemote", detail: "The portal answered without a file descriptor")
        }
        let owned = fcntl(fd, F_DUPFD_CLOEXEC, 3)
        if owned < 0 { throw MediaDevicesError.fromErrno(errno, device: address, operation: "OpenPipeWireRemote (dup)") }
        return owned
    }

    /// `org.freedesktop.portal.Session.Close`: ends the session (its streams stop). Errors are
    /// ignored: a session the portal already closed is closed.
    func closeSession(_ session: String) {
        _ = try? bus.call(Self.destination, session, "org.freedesktop.portal.Session", "Close", timeout: .seconds(5))
    }

    /// Closes the session without waiting for the portal's answer (after a cancelled or timed
    /// out request, when its backend may hang in the dialog).
    func closeSessionWithoutWaiting(_ session: String) {
        bus.send(Self.destination, session, "org.freedesktop.portal.Session", "Close")
    }

    /// Calls `member` with a fresh `handle_token` and waits for its `Response` (see
    /// `DBusConnection.portalRequest`). Response 1 (the user cancelled) throws
    /// `.permissionDenied`; 2 throws `.io`.
    private func request(_ member: String, timeout: Duration = .seconds(30),
                         append: (DBusWriter, String) throws -> Void) throws -> [String: DBusValue] {
        requests += 1
        let (code, results): (UInt32, [String: DBusValue])
        do {
            (code, results) = try bus.portalRequest(Self.destination, Self.objectPath, Self.interface, member, sender: sender,
                                                    number: requests, timeout: timeout, append: append)
        } catch let failure as DBusFailure {
            throw ScreenCastPortalClient.error(failure, operation: member, device: address, timeout: timeout)
        }
        switch code {
        case 0: return results
        case 1:
            throw MediaDevicesError(.permissionDenied, device: address, operation: member,
                                    detail: "The user cancelled the screen-sharing request (the portal's dialog was dismissed or refused); ask again and choose a screen or window to share")
        default:
            throw MediaDevicesError(.io, device: address, operation: member,
                                    detail: "The screen-cast portal ended the request without a choice (response \(code)); check the portal backend's log (xdg-desktop-portal-wlr, -gnome, -kde)")
        }
    }

    /// A D-Bus failure as the package's error: no portal is `.notFound` naming what to install.
    static func error(_ failure: DBusFailure, operation: String, device: String?, timeout: Duration? = nil) -> MediaDevicesError {
        switch failure.name {
        case "org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner",
             "org.freedesktop.DBus.Error.UnknownMethod", "org.freedesktop.DBus.Error.UnknownInterface",
             "org.freedesktop.DBus.Error.UnknownObject", "org.freedesktop.DBus.Error.UnknownProperty",
             "org.freedesktop.DBus.Error.InvalidArgs" where operation == "org.freedesktop.portal.ScreenCast":
            return MediaDevicesError(.notFound, device: device, operation: operation,
                                     detail: "No screen-cast portal on the session bus (\(failure.name): \(failure.message)); \(installHint)")
        case "org.freedesktop.DBus.Error.AccessDenied":
            return MediaDevicesError(.permissionDenied, device: device, operation: operation,
                                     detail: "The portal refused (\(failure.message)); the session's policy does not allow screen casting for this program")
        case "cancelled":
            return MediaDevicesError(.cancelled, device: device, operation: operation, errno: ECANCELED,
                                     detail: "The task waiting for the screen-cast portal's answer was cancelled; the request and its session were closed")
        case "timeout", "org.freedesktop.DBus.Error.NoReply", "org.freedesktop.DBus.Error.Timeout":
            return MediaDevicesError(.timeout, device: device, operation: operation, errno: ETIMEDOUT,
                                     detail: "The screen-cast portal did not answer\(timeout.map { " within \($0)" } ?? ""); the user may not have answered its dialog, or the portal backend hangs")
        default:
            return MediaDevicesError(.io, device: device, operation: operation, errno: failure.errno > 0 ? failure.errno : nil,
                                     detail: "\(failure.name): \(failure.message)")
        }
    }
}

/// One stream `Start` returned: the PipeWire node to read and what the portal says of it.
struct PortalStream {
    /// The PipeWire node id.
    let nodeID: UInt32
    /// Where the source lies on the compositor's space, when the portal says.
    let position: (x: Int, y: Int)?
    /// The source's size, when the portal says.
    let size: Size?
    /// 1 monitor, 2 window, 4 virtual, when the portal says.
    let sourceType: UInt32?

    /// Reads a `(ua{sv})` entry of `streams`.
    init?(_ value: DBusValue) {
        guard let items = value.array, items.count == 2, let node = items[0].uint32 else { return nil }
        let properties = items[1].dictionary ?? [:]
        nodeID = node
        if let pair = properties["position"]?.array, pair.count == 2, let x = pair[0].int, let y = pair[1].int {
            position = (x, y)
        } else {
            position = nil
        }
        if let pair = properties["size"]?.array, pair.count == 2, let width = pair[0].int, let height = pair[1].int {
            size = Size(width: width, height: height)
        } else {
            size = nil
        }
        sourceType = properties["source_type"]?.uint32
    }
}
#endif
