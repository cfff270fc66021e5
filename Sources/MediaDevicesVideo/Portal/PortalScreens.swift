#if PipeWire
import MediaDevicesCore
import Foundation

/// The screens of the Wayland screen-cast portal. What the session offers cannot be listed
/// without asking the user (the portal's dialog is the list), so each source type the portal
/// offers (`AvailableSourceTypes`) is one screen, `monitor` and `window`, whose picture the user
/// chooses when capture starts.
enum PortalScreens {
    /// The portal's source types that are screens here, with their names.
    static let sourceTypes: [(type: UInt32, name: String)] = [(1, "monitor"), (2, "window")]

    /// The portal's screens on the session bus at `address` (the environment's when `nil`).
    /// Throws `.notFound`, naming what to install, when no portal answers.
    static func screens(address: String? = nil) throws(MediaDevicesError) -> [Screen] {
        let portal = try MediaDevicesError.catching(device: address, operation: "connect to the ScreenCast portal") {
            try ScreenCastPortalClient(address: address)
        }
        let card = address ?? ProcessInfo.processInfo.environment["DBUS_SESSION_BUS_ADDRESS"] ?? ""
        return sourceTypes.filter { portal.sourceTypes & $0.type != 0 }.map { screen(card: card, type: $0.type, name: $0.name) }
    }

    /// The screen of one source type on the bus `card`, before the user has chosen (no mode).
    static func screen(card: String, type: UInt32, name: String, mode: DisplayMode? = nil, frame: Rect? = nil) -> Screen {
        Screen(card: card, driver: "xdg-desktop-portal", connectorID: type, name: name,
               connectorType: "portal \(name) (the user chooses)", mode: mode, crtcID: nil, primaryPlaneID: nil,
               cursorPlaneID: nil, physicalSize: nil, monitorName: nil, backend: .portal, frame: frame)
    }

    /// The token to restore `screen`'s choice with: the one given, else the one kept in
    /// `options.restoreTokens`, else the one in `options.restoreTokenFile`.
    static func restoreToken(for screen: Screen, options: PortalOptions) -> String? {
        if let token = options.restoreToken { return token }
        if let token = options.restoreTokens.token(for: key(screen)) { return token }
        guard let file = options.restoreTokenFile, let text = try? String(contentsOfFile: file, encoding: .utf8) else { return nil }
        let token = text.trimmingCharacters(in: .whitespacesAndNewlines)
        return token.isEmpty ? nil : token
    }

    /// Keeps `token` for the next session of `screen`, in `options.restoreTokens` and in
    /// `options.restoreTokenFile` (mode 0600, replaced whole: `AtomicFile`). Throws the write's error.
    static func keep(_ token: String, for screen: Screen, options: PortalOptions) throws(MediaDevicesError) {
        options.restoreTokens.keep(token, for: key(screen))
        if let file = options.restoreTokenFile {
            try AtomicFile.write(Array((token + "\n").utf8), to: file, mode: tokenFileMode, operation: "write the portal restore token")
        }
    }

    /// Checks, before the portal asks the user, that `options.restoreTokenFile` can be written
    /// (its folder exists and this user may create files in it): a token the user's choice gives
    /// would otherwise be lost. Throws the write's error.
    static func checkTokenFile(_ options: PortalOptions) throws(MediaDevicesError) {
        guard let file = options.restoreTokenFile else { return }
        try AtomicFile(path: file, mode: tokenFileMode, operation: "write the portal restore token").discard()
    }

    /// The restore token file's mode: the user's alone (the token shares the screen again without asking).
    static let tokenFileMode: mode_t = 0o600

    private static func key(_ screen: Screen) -> String { "\(screen.card)/\(screen.connectorID)" }
}
#endif
