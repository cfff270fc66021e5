#if PipeWire
import MediaDevicesCore
import Glibc

extension DBusConnection {
    /// The sender part of this connection's portal Request paths (`:1.42` → `1_42`).
    var portalSender: String { String(uniqueName.dropFirst().map { $0 == "." ? "_" : $0 }) }

    /// Calls a portal method answered by a `Response` signal on a Request object: with a fresh
    /// `handle_token` (`mediadevicesPID_number`, given to `append`, which puts it in the options),
    /// watching the Request's path (`/org/freedesktop/portal/desktop/request/SENDER/TOKEN`)
    /// before the call, then waiting for the call's reply and the response, the latter up to
    /// `timeout` (both cancellable: `WaitCancellation`). Returns
    /// the response code (0 granted, 1 cancelled by the user, 2 other) and the results. Throws
    /// `DBusFailure`; a wait given up on (cancelled, timed out) closes the Request so that the
    /// portal takes its dialog down.
    func portalRequest(_ destination: String, _ objectPath: String, _ interface: String, _ member: String,
                       sender: String, number: Int, timeout: Duration,
                       append: (DBusWriter, String) throws -> Void) throws -> (code: UInt32, results: [String: DBusValue]) {
        // Tokens only identify requests within this connection.
        let token = "mediadevices\(getpid())_\(number)"
        var path = "/org/freedesktop/portal/desktop/request/\(sender)/\(token)"
        do {
            var watch = try watchSignal(path: path, interface: "org.freedesktop.portal.Request", member: "Response")
            // Cancellable too: a portal busy elsewhere may answer the call itself late.
            let reply = try callCancellable(destination, objectPath, interface, member) { try append($0, token) }
            // Portals older than 0.9 return another path: watch that one (a response before this line is lost).
            if let handle = try reply.read()?.string, handle != path {
                watch = try watchSignal(path: handle, interface: "org.freedesktop.portal.Request", member: "Response")
                path = handle
            }
            let response = try wait(for: watch, timeout: timeout)
            let code = try response.read()?.uint32 ?? 2
            return (code, try response.read()?.dictionary ?? [:])
        } catch let failure as DBusFailure {
            if failure.name == "cancelled" || failure.name == "timeout" {
                send(destination, path, "org.freedesktop.portal.Request", "Close")
            }
            throw failure
        }
    }
}
#endif
