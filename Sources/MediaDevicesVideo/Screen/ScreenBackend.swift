import MediaDevicesCore
/// How a ``ScreenSource`` reads a screen.
public enum ScreenBackend: String, Sendable, Hashable, CaseIterable, Encodable, CustomStringConvertible {
    /// DRM/KMS: the framebuffer a display output scans out, below any compositor (kiosks,
    /// consoles, embedded boards). Needs `CAP_SYS_ADMIN` or DRM master.
    case kms
    /// X11: RandR monitors of the X server in `DISPLAY`, grabbed with MIT-SHM (X11 sessions,
    /// Xvfb). Needs only a connection to the server.
    case x11
    /// The Wayland screen-cast portal (`org.freedesktop.portal.ScreenCast` of xdg-desktop-portal
    /// on the session bus) and PipeWire (Wayland sessions: GNOME, KDE, sway and other
    /// wlroots compositors). The user chooses the screen or window in the portal's dialog;
    /// a restore token brings the choice back without asking again.
    case portal

    /// `"kms"`, `"x11"` or `"portal"`.
    public var description: String { rawValue }
}
