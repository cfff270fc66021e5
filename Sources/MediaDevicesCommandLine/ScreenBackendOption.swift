import ArgumentParser
import MediaDevices

/// `--backend kms|x11|portal` on the screen commands.
extension ScreenBackend: ExpressibleByArgument {}

/// `--backend v4l2|pipewire|portal` on the camera commands.
extension CaptureBackend: ExpressibleByArgument {}

/// The `--backend` option of the screen commands: one backend, or automatic (the portal when
/// `WAYLAND_DISPLAY` is set and it answers, X11 when `DISPLAY` is set and its server answers,
/// else KMS); and where the portal's restore token is kept.
package struct ScreenBackendOption: ParsableArguments {
    /// Parsed from the arguments by ArgumentParser.
    package init() {}

    @Option(help: "Screens only: the backend, kms, x11 or portal (default: portal when WAYLAND_DISPLAY is set and the portal answers, else x11 when DISPLAY answers, else kms).")
    package var backend: ScreenBackend?

    @OptionGroup package var restoreToken: RestoreTokenOption

    /// How the portal is asked.
    package var portalOptions: PortalOptions { restoreToken.portalOptions }
}

/// The `--backend` option of `capture`, which reads screens and cameras: a screen backend (kms,
/// x11, portal: automatic as `ScreenBackendOption` when absent) or a camera backend (v4l2,
/// pipewire, portal: `CameraBackendRule` when absent); and where the portal's restore token is
/// kept.
package struct DeviceBackendOption: ParsableArguments {
    /// Parsed from the arguments by ArgumentParser.
    package init() {}

    @Option(help: "Screens: kms, x11 or portal (default: portal when WAYLAND_DISPLAY is set and the portal answers, else x11 when DISPLAY answers, else kms). \(CameraBackendRule.help)")
    package var backend: DeviceBackendName?

    @OptionGroup package var restoreToken: RestoreTokenOption

    /// How the portal is asked.
    package var portalOptions: PortalOptions { restoreToken.portalOptions }
}

/// `--restore-token-file` of the screen-cast portal.
package struct RestoreTokenOption: ParsableArguments {
    /// Parsed from the arguments by ArgumentParser.
    package init() {}

    @Option(help: "Portal only: a file keeping the restore token, so that the portal asks the user only once (read, then rewritten with each new token, mode 0600: the token lets this user's processes share the screen again without asking).")
    package var restoreTokenFile: String?

    /// How the portal is asked.
    package var portalOptions: PortalOptions { PortalOptions(restoreTokenFile: restoreTokenFile) }
}
