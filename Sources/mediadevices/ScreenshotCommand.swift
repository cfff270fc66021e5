import ArgumentParser
import MediaDevices
import MediaDevicesCommandLine

/// `mediadevices screenshot [SCREEN] --output FILE.png|FILE.jpg`: one grab of a screen, as PNG or
/// JPEG (the extension decides).
struct ScreenshotCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "screenshot",
        abstract: "Grab one frame of a screen (X11 monitor, DRM/KMS framebuffer, or what the user shares through the Wayland portal) and write it as PNG or JPEG.",
        discussion: Examples.screenshot)

    @OptionGroup var backendOption: ScreenBackendOption

    @Argument(help: "`screen:N` (index from `screens`), a connector name such as Virtual-1, or a uniqueID. Default: the first screen.")
    var screen: String = "screen:0"

    @Option(help: "The image file to write: .png or .jpg (.jpeg); the extension decides.")
    var output: String

    @Option(help: "Only this region of the screen, WxH+X+Y (e.g. 640x480+0+0).")
    var region: String?

    @Flag(help: "Blend the cursor in (X11: the XFIXES cursor; KMS: the cursor plane's image, XRGB8888/ARGB8888 screens; portal: embedded by the compositor).")
    var cursor = false

    @Flag(help: "Print the result as JSON.")
    var json = false

    func validate() throws {
        if let region, Rect(parsing: region) == nil { throw ValidationError("--region takes WxH+X+Y, e.g. 640x480+0+0") }
        try UsageChecks.outputFile(output, example: "screenshot.png")
        do { _ = try ImageFileFormat(path: output) } catch { throw ValidationError(error.detail) }
    }

    func run() throws {
        try reportingErrors(json: json) {
            let name = screen.hasPrefix("screen") ? screen : "screen:\(screen)"
            let target = try DeviceSelection.resolveScreen(name, backend: backendOption.backend)
            let source = ScreenSource(screen: target, region: region.flatMap(Rect.init(parsing:)), showsCursor: cursor,
                                      portal: backendOption.portalOptions)
            defer { source.release() }
            let file = try ImageFileFormat(path: output)
            let format = try source.grabFrame { frame -> VideoFormat in
                try file.write(frame, to: output)
                return frame.format
            }
            let framebuffer = source.framebuffer
            if json {
                struct Output: Encodable {
                    let screen: String
                    let backend: String
                    let output: String
                    let width: Int
                    let height: Int
                    let framebufferFormat: String
                    let mapping: String?
                }
                printJSON(Output(screen: target.uniqueID, backend: target.backend.rawValue, output: output, width: format.width, height: format.height,
                                 framebufferFormat: format.pixelFormat.fourCC.description, mapping: framebuffer?.mapping.rawValue))
                return
            }
            print("wrote \(format.width)x\(format.height) \(file.displayName) of \(target.name) to \(output) (\(framebuffer.map(\.description) ?? format.description))")
            if let token = source.portalRestoreToken, backendOption.restoreToken.restoreTokenFile == nil {
                print("portal restore token: \(token) (keep it with --restore-token-file FILE to skip the portal's dialog next time)")
            }
        }
    }
}
