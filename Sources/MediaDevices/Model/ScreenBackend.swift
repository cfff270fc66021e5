/// How a `ScreenSource` reads a screen.
public enum ScreenBackend: String, Sendable, Hashable, CaseIterable, Codable, CustomStringConvertible {
    /// DRM/KMS: the framebuffer a display output scans out, below any compositor (kiosks,
    /// consoles, embedded boards). Needs `CAP_SYS_ADMIN` or DRM master.
    case kms
    /// X11: RandR monitors of the X server in `DISPLAY`, grabbed with MIT-SHM (X11 sessions,
    /// Xvfb). Needs only a connection to the server.
    case x11

    /// `"kms"` or `"x11"`.
    public var description: String { rawValue }
}
