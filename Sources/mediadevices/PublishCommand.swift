import ArgumentParser
import Foundation
import MediaDevices
import MediaDevicesCommandLine

/// `mediadevices publish`: a source as a camera other applications open (a PipeWire camera node,
/// a v4l2loopback device, or both), until Ctrl-C, printing the processes that read it as they
/// come and go.
struct PublishCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "publish",
        abstract: "Publish a camera, a screen or the test pattern as a virtual camera (a PipeWire camera node, a v4l2loopback device).",
        discussion: "Runs until Ctrl-C (or --timeout), printing a line as each reader connects or leaves and as the source starts or stops. With --on-demand the source runs only while a process reads (a PipeWire node: while a consumer streams from it); the node and the device stay listed while idle.\n\n" + Examples.publish)

    @Argument(help: "What to publish: a device path, an index from `list`, a uniqueID, a PipeWire camera (`pipewire:SERIAL`), `testpattern`, `testpattern:noise`, or `screen:N`.")
    var source: String

    @Argument(help: ArgumentHelp("After --pipewire: the node's name (default \(PublishCommand.defaultNodeName)).", valueName: "NAME"))
    var nodeName: String?

    @Flag(name: .customLong("pipewire"), help: ArgumentHelp("Publish a PipeWire camera node, named NAME when a name follows the flag."))
    var pipeWire = false

    @Option(name: .customLong("v4l2loopback"), help: ArgumentHelp("A v4l2loopback device to publish on (repeatable).", valueName: "/dev/videoN"))
    var loopbacks: [String] = []

    @Option(help: "Pixel format on the device: I420 (the default) or NV12, converted from any source; another one (YUYV) only as the source gives it.")
    var format: String?

    @Option(help: "Size on the device, WxH (default: the source's); the source's frames are centre-cropped to its aspect ratio and scaled. The source is asked for it too.")
    var size: String?

    @Option(help: "Frame rate (30, 30000/1001), asked of the source and told to readers.")
    var fps: String?

    @Flag(name: .customLong("on-demand"), help: "Run the source only while a process reads the device.")
    var onDemand = false

    @OptionGroup var streaming: StreamingOptions

    /// The PipeWire node's name when none is given.
    static let defaultNodeName = "mediadevices_camera"

    /// Where to publish, as the options say.
    var outputs: [VirtualCamera.Output] {
        (pipeWire ? [.pipeWire(name: nodeName ?? Self.defaultNodeName)] : []) + loopbacks.map { .v4l2Loopback(path: $0) }
    }

    func validate() throws {
        if loopbacks.isEmpty && !pipeWire { throw ValidationError("name where to publish: --pipewire [NAME], --v4l2loopback /dev/videoN, or both") }
        if nodeName != nil && !pipeWire { throw ValidationError("unexpected argument '\(nodeName ?? "")': only --pipewire takes a name (publish SOURCE --pipewire NAME)") }
        if let nodeName, nodeName.isEmpty || nodeName.hasPrefix("-") { throw ValidationError("--pipewire's name must not be empty or start with '-'") }
        if let format, PixelFormat(named: format) == nil { throw ValidationError("unknown pixel format '\(format)'") }
        if let size { try UsageChecks.size(size, option: "--size", example: "1280x720") }
        if let fps, FrameRate(parsing: fps) == nil { throw ValidationError("--fps takes a positive number or fraction, e.g. 30 or 30000/1001") }
    }

    func run() throws {
        try reportingErrors(json: false) {
            let size = self.size.flatMap(Size.init(parsing:))
            let rate = fps.flatMap(FrameRate.init(parsing:))
            let opened = try OpenedCapturer(source, request: FormatRequest(size: size, frameRate: rate))
            let published = FormatRequest(pixelFormat: format.flatMap(PixelFormat.init(named:)), size: size, frameRate: rate)
            let camera = VirtualCamera(source: opened.capturer, outputs: outputs, format: published, onDemand: onDemand)
            let events = camera.events
            let interruption = Interruption { camera.stop() }
            defer { interruption.finish() }
            try camera.start()
            let format = camera.publishedFormat.map { "\($0.pixelFormat.fourCC) \($0.width)x\($0.height)" } ?? "?"
            let ids = camera.pipeWireNodeIDs
            let named = outputs.map { output in ids[output].map { "\(output) (node \($0))" } ?? output.description }
            print("publish: \(opened.name) on \(named.joined(separator: ", ")) as \(format)\(onDemand ? ", on demand" : ""); Ctrl-C stops")
            fflush(nil)
            streaming.forEach(events) { event in print("publish: \(event)") }
            camera.stop()
            let figures = camera.writeFigures
            print("publish: stopped; \(figures.written) frames written\(figures.failed > 0 ? ", \(figures.failed) writes failed" : "")")
        }
    }
}
