/// How a `ScreenSource` of the Wayland screen-cast portal (`ScreenBackend.portal`) asks for
/// its screen. The portal asks the user which screen or window to share; with a restore token
/// from an earlier session it gives the same one again without asking.
public struct PortalOptions: Sendable, Hashable {
    /// A restore token from an earlier session (`ScreenSource.portalRestoreToken`); `nil`: the
    /// one this process received last for the same bus and source type, else the one in
    /// `restoreTokenFile`, else none (the user is asked).
    public var restoreToken: String?
    /// A file that keeps the restore token across runs: read when no token is given, rewritten
    /// with each new token the portal returns. `nil`: tokens live in memory only.
    public var restoreTokenFile: String?
    /// How long to wait for the user to answer the portal's dialog.
    public var responseTimeout: Duration
    /// How long to wait for the first picture once the user has chosen.
    public var firstFrameTimeout: Duration

    /// Options with a restore token or a file keeping one, and the waits (2 minutes for the
    /// user, 10 seconds for the first picture).
    public init(restoreToken: String? = nil, restoreTokenFile: String? = nil,
                responseTimeout: Duration = .seconds(120), firstFrameTimeout: Duration = .seconds(10)) {
        self.restoreToken = restoreToken
        self.restoreTokenFile = restoreTokenFile
        self.responseTimeout = responseTimeout
        self.firstFrameTimeout = firstFrameTimeout
    }
}
