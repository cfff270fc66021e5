import ArgumentParser
import MediaDevices

/// A screen in `screens --json` and `list --json`.
struct ScreenJSON: Encodable {
    let index: Int
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

    /// A display mode: size and exact refresh rate.
    struct ModeJSON: Encodable {
        let name: String
        let width: Int
        let height: Int
        let refreshRate: FractionJSON
    }

    init(index: Int, _ screen: Screen) {
        self.index = index
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
    }
}

/// `mediadevices screens`: every connected display output (DRM/KMS connectors).
struct ScreensCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "screens", abstract: "List screens (DRM/KMS outputs) that can be captured.")

    @Flag(help: "Print JSON (see README for the shape).")
    var json = false

    func run() throws {
        let (screens, problems) = ScreenSource.enumerate()
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
        if screens.isEmpty { print("No screens (no connected DRM/KMS outputs).") }
        for (index, screen) in screens.enumerated() {
            print("[screen:\(index)] \(screen.name)  \(screen.mode?.description ?? "off")  (\(screen.card), \(screen.driver))")
            var details = ["crtc \(screen.crtcID.map(String.init) ?? "none")",
                           "primary plane \(screen.primaryPlaneID.map(String.init) ?? "none")",
                           "cursor plane \(screen.cursorPlaneID.map(String.init) ?? "none")"]
            if let size = screen.physicalSize { details.append("\(size.width)x\(size.height) mm") }
            if let name = screen.monitorName { details.append("monitor \"\(name)\"") }
            print("    " + details.joined(separator: ", "))
        }
    }
}
