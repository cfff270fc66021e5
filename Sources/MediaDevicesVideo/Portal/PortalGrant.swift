#if PipeWire
import MediaDevicesCore
import Glibc
import Logging

/// What the screen-cast portal granted for one screen: CreateSession → SelectSources (the
/// screen's source type, the cursor embedded or hidden, persisted) → Start → OpenPipeWireRemote.
/// The session stays open until `close()`; the PipeWire remote belongs to whoever takes it.
/// Shared by `PortalScreenGrabber` (which reads the stream itself) and ``PortalScreenCast``
/// (which hands it to another PipeWire consumer).
struct PortalGrant {
    /// The portal connection the session lives on (the session ends with it).
    let portal: ScreenCastPortalClient
    /// The session's object path.
    let session: String
    /// The stream the user chose.
    let stream: PortalStream
    /// The token that restores this choice without asking (`nil` before portal version 4).
    let restoreToken: String?
    /// The PipeWire connection that sees the session's stream (a descriptor the caller owns).
    let remote: Int32

    /// Asks the portal for `screen`'s source type (the user chooses, unless a restore token
    /// brings back an earlier choice) and opens the PipeWire remote; keeps the new restore
    /// token. Throws `.notFound` without a portal, `.permissionDenied` when the user cancels,
    /// `.unsupportedFormat` when the portal does not offer that source type, `.timeout` when no
    /// answer comes in time, and the write's error when `options.restoreTokenFile` cannot be
    /// written (checked before the portal asks). A failure leaves no session open.
    init(screen: Screen, showsCursor: Bool, options: PortalOptions) throws {
        let portal = try ScreenCastPortalClient(address: screen.card.isEmpty ? nil : screen.card)
        guard portal.sourceTypes & screen.connectorID != 0 else {
            throw MediaDevicesError(.unsupportedFormat, device: screen.uniqueID, operation: "SelectSources",
                                    detail: "The screen-cast portal does not offer \(screen.name) sources (it offers types \(portal.sourceTypes))",
                                    remedy: "ScreenSource.discover(backend: .portal) lists the source types it offers")
        }
        try PortalScreens.checkTokenFile(options)
        let session = try portal.createSession()
        do {
            // Hidden (1) or embedded (2): the pipeline has no cursor metadata to draw.
            try portal.selectSources(session: session, types: screen.connectorID, cursorMode: showsCursor ? 2 : 1,
                                     restoreToken: PortalScreens.restoreToken(for: screen, options: options))
            let (streams, token) = try portal.start(session: session, timeout: options.responseTimeout)
            guard let stream = streams.first else {
                throw MediaDevicesError(.io, device: screen.uniqueID, operation: "Start",
                                        detail: "The screen-cast portal started the session without a stream")
            }
            if let token { try PortalScreens.keep(token, for: screen, options: options) }
            remote = try portal.openPipeWireRemote(session: session)
            self.stream = stream
            restoreToken = token
        } catch {
            // A portal whose request was given up on may hang in its dialog: do not wait for it.
            let code = (error as? MediaDevicesError)?.code
            if code == .cancelled || code == .timeout { portal.closeSessionWithoutWaiting(session) } else { portal.closeSession(session) }
            throw error
        }
        self.portal = portal
        self.session = session
    }

    /// `init(screen:showsCursor:options:)`, logged: the request (info, whether a restore token
    /// may answer it), the grant (info: node, size, whether a token came back, how long the
    /// user took), a refusal (warning) or another failure (error).
    /// The lines go to `log` (level, message, metadata), which may hold them: a source opening
    /// its screen under its control lock logs them once the lock is released.
    static func request(screen: Screen, showsCursor: Bool, options: PortalOptions,
                        log: (Logger.Level, Logger.Message, Logger.Metadata) -> Void) throws -> PortalGrant {
        let restoring = PortalScreens.restoreToken(for: screen, options: options) != nil
        log(.info, "asking the screen-cast portal for a screen",
            ["device": "\(screen.uniqueID)", "restoreToken": "\(restoring)", "timeout": "\(options.responseTimeout)"])
        let started = ContinuousClock.now
        do {
            let grant = try PortalGrant(screen: screen, showsCursor: showsCursor, options: options)
            log(.info, "screen-cast portal granted a stream",
                ["device": "\(screen.uniqueID)", "node": "\(grant.stream.nodeID)",
                 "size": "\(grant.stream.size.map { "\($0)" } ?? "unknown")",
                 "restoreToken": "\(grant.restoreToken != nil)", "after": "\(ContinuousClock.now - started)"])
            return grant
        } catch {
            let code = (error as? MediaDevicesError)?.code
            let metadata: Logger.Metadata = ["device": "\(screen.uniqueID)", "code": "\(code.map { "\($0)" } ?? "other")",
                                             "after": "\(ContinuousClock.now - started)"]
            if code == .permissionDenied {
                log(.warning, "screen-cast portal request refused", metadata)
            } else {
                log(.error, "screen-cast portal request failed: \(error)", metadata)
            }
            throw error
        }
    }

    /// Ends the portal session (its stream stops).
    func close() {
        portal.closeSession(session)
    }
}
#endif
