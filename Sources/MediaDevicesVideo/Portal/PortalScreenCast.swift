#if PipeWire
import MediaDevicesCore
import Glibc
import Logging
import Synchronization
import SystemPackage

/// A screen the user shared through the Wayland screen-cast portal, handed to another PipeWire
/// consumer instead of read by ``ScreenSource``: GStreamer (`pipewiresrc fd=FD path=NODE`), OBS,
/// a WebRTC stack with its own PipeWire capturer. The portal dance (the dialog, or a restore
/// token that brings back an earlier choice) is done here; the consumer connects with
/// `pipeWireRemote` to the node `nodeID`. The portal session lasts until `close()` (or
/// deinit): closing ends the stream for every consumer.
// @unchecked Sendable: every stored property is immutable but `isClosed`, an atomic; `grant`
// (a struct of descriptors and paths) is touched only by `close()`, once.
public final class PortalScreenCast: @unchecked Sendable {
    /// The portal screen asked for (from ``ScreenSource/discover(backend:)`` with `.portal`).
    public let screen: Screen
    /// The PipeWire node that carries the shared picture.
    public let nodeID: UInt32
    /// The shared source's size and place when the portal says (xdg-desktop-portal-wlr does).
    public let size: Size?
    /// The token that brings this choice back in a later session without asking (`nil` when
    /// the portal does not persist choices, before version 4). Also kept as
    /// ``PortalOptions/restoreTokenFile`` says.
    public let restoreToken: String?
    /// A connection to PipeWire that sees only this session's stream (owned by this object and
    /// valid until `close()`). PipeWire clients take ownership of the descriptor they connect
    /// with: give them a `dup` (GStreamer's `pipewiresrc fd=` does not close it, but another
    /// consumer may).
    public let pipeWireRemote: FileDescriptor
    private let grant: PortalGrant
    private let isClosed = Atomic<Bool>(false)

    /// Asks the portal to share `screen` (a portal screen) with the cursor embedded or hidden,
    /// as `options` says (restore token, how long to wait for the user). Throws `.notFound`
    /// without a portal (naming what to install), `.permissionDenied` when the user cancels,
    /// `.unsupportedFormat` when the portal does not offer that source type or `screen` is not
    /// a portal screen, `.timeout` when the user does not answer in time. `logger` (swift-log's;
    /// `nil`: no logging) hears the request and its answer, and the close.
    public init(screen: Screen, showsCursor: Bool = false, options: PortalOptions = PortalOptions(),
                logger: Logger? = nil) throws(MediaDevicesError) {
        guard screen.backend == .portal else {
            throw MediaDevicesError(.unsupportedFormat, device: screen.uniqueID, operation: "PortalScreenCast",
                                    detail: "\(screen.uniqueID) is a \(screen.backend) screen, not a portal one; take one from `ScreenSource.discover(backend: .portal)`")
        }
        grant = try MediaDevicesError.catching(device: screen.uniqueID, operation: "PortalScreenCast") {
            try PortalGrant.request(screen: screen, showsCursor: showsCursor, options: options) { level, message, metadata in
                logger?.log(level: level, message, metadata: metadata)
            }
        }
        self.screen = screen
        nodeID = grant.stream.nodeID
        size = grant.stream.size
        restoreToken = grant.restoreToken
        pipeWireRemote = FileDescriptor(rawValue: grant.remote)
        self.logger = logger
    }

    /// Where the session's request, answer and close are logged (`nil`: nowhere).
    public let logger: Logger?

    deinit { close() }

    /// Closes the portal session (the stream ends for every consumer) and the PipeWire remote.
    /// Later calls do nothing, from any thread.
    public func close() {
        guard !isClosed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        logger?.info("closing the screen-cast portal session", metadata: ["device": "\(screen.uniqueID)", "node": "\(nodeID)"])
        grant.close()
        Glibc.close(pipeWireRemote.rawValue)
    }
}
#endif
