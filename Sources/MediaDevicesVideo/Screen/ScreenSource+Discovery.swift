import MediaDevicesCore
import Glibc

extension ScreenSource {
    /// The screens of `backend`, and the errors of what could not be read. `.x11`: the RandR
    /// monitors of the X server in `DISPLAY` (`.notFound` when there is none). `.kms`: every
    /// connected output of every card (problems: no permission, render-only GPUs). `.portal`:
    /// one screen per source type the session's screen-cast portal offers (`monitor`,
    /// `window`): which monitor or window is the user's choice when capture starts
    /// (`.notFound`, naming what to install, without a portal). `nil` (automatic): the portal
    /// when `WAYLAND_DISPLAY` is set and the portal answers, else X11 when `DISPLAY` is set and
    /// its server answers, else KMS (with the failures among the problems). Runs on a thread of
    /// its own; a wait on the portal's bus ends when the calling task is cancelled.
    public static func discover(backend: ScreenBackend? = nil) async -> DeviceDiscovery<Screen> {
        await discovering("screens") { scan(backend: backend) }
    }

    /// `discover(backend:)` on the calling thread, for the synchronous command-line tool and
    /// tests.
    package static func scan(backend: ScreenBackend? = nil) -> DeviceDiscovery<Screen> {
        func attempt(_ operation: String, _ body: () throws -> [Screen]) -> DeviceDiscovery<Screen> {
            do {
                return DeviceDiscovery(devices: try body())
            } catch {
                return DeviceDiscovery(problems: [MediaDevicesError.converting(error, device: nil, operation: operation)])
            }
        }
        switch backend {
        case .kms: return scanKMS()
        case .portal: return attempt("enumerate portal screens") { try portalScreens() }
        case .x11: return attempt("enumerate X11 monitors") { try x11Screens() }
        case nil:
            var problems: [MediaDevicesError] = []
            if let wayland = getenv("WAYLAND_DISPLAY"), wayland.pointee != 0 {
                let portal = scan(backend: .portal)
                if !portal.devices.isEmpty { return portal }
                problems += portal.problems
            }
            if let display = getenv("DISPLAY"), display.pointee != 0 {
                let x11 = scan(backend: .x11)
                if !x11.devices.isEmpty { return DeviceDiscovery(devices: x11.devices, problems: problems) }
                problems += x11.problems
            }
            var kms = scanKMS()
            kms.problems = problems + kms.problems
            return kms
        }
    }

    /// Every connected output of every card, and the errors of cards that could not be read.
    private static func scanKMS() -> DeviceDiscovery<Screen> {
        var found = DeviceDiscovery<Screen>()
        for path in DRMCard.cardPaths {
            do {
                found.devices += try DRMCard(path: path).screens()
            } catch {
                found.problems.append(MediaDevicesError.converting(error, device: path, operation: "enumerate"))
            }
        }
        return found
    }
}
