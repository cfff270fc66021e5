import ArgumentParser
import MediaDevices

/// `--backend kms|x11` on the screen commands.
extension ScreenBackend: ExpressibleByArgument {}

/// The `--backend` option of the screen commands: one backend, or automatic (X11 when
/// `DISPLAY` is set and its server answers, else KMS).
struct ScreenBackendOption: ParsableArguments {
    @Option(help: "Screens only: the backend, kms or x11 (default: x11 when DISPLAY answers, else kms).")
    var backend: ScreenBackend?
}
