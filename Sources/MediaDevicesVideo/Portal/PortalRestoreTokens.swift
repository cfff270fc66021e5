import MediaDevicesCore
import Synchronization

/// Where the restore tokens the screen-cast portal returns are kept in memory, by session bus
/// and source type, so that the next session of the same screen restores the user's choice
/// without asking. ``PortalOptions`` that name no store use the process's own; an application
/// that runs several independent users or sessions in one process gives each its own store. Tokens are secrets (see ``PortalOptions/restoreTokenFile``).
public final class PortalRestoreTokens: Sendable, Hashable {
    /// The process-wide store: every ``PortalOptions`` that names no other.
    package static let shared = PortalRestoreTokens()

    private let tokens = Mutex<[String: String]>([:])

    /// An empty store of the application's own.
    public init() {}

    /// The token kept for `key` (a screen's bus and source type).
    func token(for key: String) -> String? { tokens.withLock { $0[key] } }

    /// Keeps `token` for `key`.
    func keep(_ token: String, for key: String) { tokens.withLock { $0[key] = token } }

    /// Forgets every token kept here (the portal still honours them until the user revokes them).
    public func removeAll() { tokens.withLock { $0.removeAll() } }

    /// Stores are the same only when they are the same object.
    public static func == (lhs: PortalRestoreTokens, rhs: PortalRestoreTokens) -> Bool { lhs === rhs }

    /// Hashes the object's identity.
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}
