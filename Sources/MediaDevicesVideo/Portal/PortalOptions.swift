import MediaDevicesCore
/// How a ``ScreenSource`` of the Wayland screen-cast portal (``ScreenBackend/portal``) asks for
/// its screen. The portal asks the user which screen or window to share; with a restore token
/// from an earlier session it gives the same one again without asking.
public struct PortalOptions: Sendable, Hashable {
    /// A restore token from an earlier session (``ScreenSource/portalRestoreToken``); `nil`: the
    /// one `restoreTokens` holds for the same bus and source type (by default the last this
    /// process received), else the one in `restoreTokenFile`, else none (the user is asked).
    public var restoreToken: String?
    /// Where tokens the portal returns are kept in memory for the next session: by default
    /// the process's store (every ``PortalOptions`` that names none shares it); give a store of its own to keep one user's or
    /// one session's choices apart from another's.
    public var restoreTokens: PortalRestoreTokens
    /// A file that keeps the restore token across runs: read when no token is given, rewritten
    /// with each new token the portal returns. `nil`: tokens live in memory only.
    ///
    /// A restore token is a secret: whoever holds it (for an application outside a sandbox, any
    /// process of this user in the same desktop session) can have the portal share the same
    /// screen or window again without asking the user, until the user revokes it in the desktop's settings
    /// or the portal forgets it. So the file is written mode 0600 (less the umask), owned by
    /// the user, and replaced whole (a temporary file in the same folder, synced, then renamed):
    /// it never holds half a token. Keep it in a private folder (`$XDG_STATE_HOME`, not /tmp).
    ///
    /// A file that cannot be written fails the start with the write's `MediaDevicesError`
    /// (`.notFound` when its folder does not exist, `.permissionDenied` when the folder is
    /// read-only or not this user's, `.io` when the disk is full). The folder is checked before
    /// the portal asks the user, so a choice is not asked for and then lost.
    public var restoreTokenFile: String?
    /// How long to wait for the user to answer the portal's dialog.
    public var responseTimeout: Duration
    /// How long to wait for the first picture once the user has chosen.
    public var firstFrameTimeout: Duration

    /// Options with a restore token or a file keeping one, the store for new tokens (the
    /// process's when `restoreTokens` is `nil`), and the waits (2 minutes for the user, 10 seconds for the first picture).
    public init(restoreToken: String? = nil, restoreTokenFile: String? = nil, restoreTokens: PortalRestoreTokens? = nil,
                responseTimeout: Duration = .seconds(120), firstFrameTimeout: Duration = .seconds(10)) {
        self.restoreToken = restoreToken
        self.restoreTokenFile = restoreTokenFile
        self.restoreTokens = restoreTokens ?? .shared
        self.responseTimeout = responseTimeout
        self.firstFrameTimeout = firstFrameTimeout
    }
}
