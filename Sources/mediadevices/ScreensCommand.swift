import ArgumentParser
import MediaDevices
import MediaDevicesCommandLine

/// A screen in `screens --json` and `list --json`.
struct ScreenJSON: Encodable {
    let index: Int
    let backend: String
    let uniqueID: String
    let card: String
    let driver: String
    let connector: String
    let connectorType: String
    let connectorID: UInt32
    let mode: ModeJSON?
    let crtcID: UInt32?
    let primaryPlaneID: UInt32?
    let cursorPlaneID: UInt32?
    let physicalSizeMillimetres: SizeJSON?
    let monitorName: String?
    /// X11: the monitor's rectangle on the X screen.
    let frame: RectJSON?

    /// A rectangle in pixels.
    struct RectJSON: Encodable {
        let x: Int
        let y: Int
        let width: Int
        let height: Int
    }

    /// A display mode: size and exact refresh rate.
    struct ModeJSON: Encodable {
        let name: String
        let width: Int
        let height: Int
        let refreshRate: FractionJSON
    }

    init(index: Int, _ screen: Screen) {
        self.index = index
        backend = screen.backend.rawValue
        uniqueID = screen.uniqueID
        card = screen.card
        driver = screen.driver
        connector = screen.name
        connectorType = screen.connectorType
        connectorID = screen.connectorID
        mode = screen.mode.map { ModeJSON(name: $0.name, width: $0.width, height: $0.height,
                                          refreshRate: FractionJSON($0.refreshRate.framesPerSecond)) }
        crtcID = screen.crtcID
        primaryPlaneID = screen.primaryPlaneID
        cursorPlaneID = screen.cursorPlaneID
        physicalSizeMillimetres = screen.physicalSize.map(SizeJSON.init)
        monitorName = screen.monitorName
        frame = screen.frame.map { RectJSON(x: $0.x, y: $0.y, width: $0.width, height: $0.height) }
    }
}

/// `mediadevices screens`: the screens of a backend: RandR monitors of the X server, or every
/// connected display output (DRM/KMS connectors).
struct ScreensCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "screens", abstract: "List screens (Wayland portal source types, X11 RandR monitors or DRM/KMS outputs) that can be captured.",
                                                     discussion: Examples.screens)

    @OptionGroup var backendOption: ScreenBackendOption

    @Flag(help: "Print JSON (see docs/cli.md for the shape).")
    var json = false

    func run() throws {
        let found = ScreenSource.scan(backend: backendOption.backend)
        let (screens, problems) = (found.devices, found.problems)
        if json {
            struct Output: Encodable { let screens: [ScreenJSON]; let skipped: [ErrorJSON.Body] }
            printJSON(Output(screens: screens.enumerated().map { ScreenJSON(index: $0.offset, $0.element) },
                             skipped: problems.map { ErrorJSON($0).error }))
            return
        }
        ScreensCommand.printScreens(screens, problems: problems)
    }

    /// The human-readable list, shared with `list`.
    static func printScreens(_ screens: [Screen], problems: [MediaDevicesError]) {
        for problem in problems { print("skipped: \(problem)") }
        if screens.isEmpty { print("No screens (no screen-cast portal, no X server in DISPLAY, and no connected DRM/KMS outputs).") }
        for (index, screen) in screens.enumerated() {
            if screen.backend == .portal {
                print("[screen:\(index)] \(screen.name)  (portal: the user chooses which \(screen.name) in the portal's dialog when capture starts)")
                continue
            }
            print("[screen:\(index)] \(screen.name)  \(screen.mode?.description ?? "off")  (\(screen.backend): \(screen.card), \(screen.driver))")
            if screen.backend == .x11 {
                var details = ["at \(screen.frame.map(\.description) ?? "?")"]
                if let size = screen.physicalSize { details.append("\(size.width)x\(size.height) mm") }
                print("    " + details.joined(separator: ", "))
                continue
            }
            var details = ["crtc \(screen.crtcID.map(String.init) ?? "none")",
                           "primary plane \(screen.primaryPlaneID.map(String.init) ?? "none")",
                           "cursor plane \(screen.cursorPlaneID.map(String.init) ?? "none")"]
            if let size = screen.physicalSize { details.append("\(size.width)x\(size.height) mm") }
            if let name = screen.monitorName { details.append("monitor \"\(name)\"") }
            print("    " + details.joined(separator: ", "))
        }
    }
}
