import ArgumentParser
import Foundation
import MediaDevices
import MediaDevicesCommandLine

/// `mediadevices monitor`: cameras, screens and sound cards as they come and go.
struct MonitorCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "monitor",
        abstract: "Print devices being added, removed or changed (hotplug), as they happen.",
        discussion: "With --json, one JSON object per line. A line \"monitor: listening …\" on standard error says when events are being received.\n\n" + Examples.monitor)

    @Flag(help: "Print one JSON object per event and line (see docs/cli.md for the shape).")
    var json = false

    @OptionGroup var streaming: StreamingOptions

    @Option(help: "Kinds to watch, comma-separated: camera, screen, sound (default: all).")
    var kinds: String?

    @Option(help: "Event source: automatic (udev if systemd-udevd runs, else kernel), udev or kernel.")
    var source: DeviceMonitor.Source = .automatic

    @Option(name: .customLong("backend"), help: "Cameras: watch what this backend offers, v4l2 (udev's video nodes) or pipewire (the PipeWire session's camera nodes); repeat it for both (default: v4l2).")
    var backends: [CaptureBackend] = []

    func validate() throws {
        for name in kinds?.split(separator: ",") ?? [] where DeviceEvent.Kind(rawValue: String(name)) == nil {
            throw ValidationError("--kinds: unknown kind \"\(name)\"; use camera, screen or sound, comma separated")
        }
    }

    func run() throws {
        try reportingErrors(json: json) {
            var chosen = Set(DeviceEvent.Kind.allCases)
            if let kinds {
                chosen = []
                for name in kinds.split(separator: ",") {
                    guard let kind = DeviceEvent.Kind(rawValue: String(name)) else {
                        throw MediaDevicesError(.notFound, device: nil, operation: "monitor --kinds",
                                                detail: "Unknown kind \"\(name)\"; use camera, screen or sound")
                    }
                    chosen.insert(kind)
                }
            }
            let monitor = try DeviceMonitor(kinds: chosen, source: source, cameraBackends: backends.isEmpty ? [.v4l2] : Set(backends))
            FileHandle.standardError.write(Data("monitor: listening (\(monitor.source.rawValue) events: \(chosen.map(\.rawValue).sorted().joined(separator: ", ")))\n".utf8))
            let json = self.json
            streaming.forEach(monitor.events) { event in
                if json { printJSON(DeviceEventJSON(event), compact: true) } else { print(DeviceEventJSON.line(event)) }
            }
            monitor.stop()
        }
    }
}

extension DeviceMonitor.Source: ExpressibleByArgument {}

/// An event in `monitor --json`.
struct DeviceEventJSON: Encodable {
    let action: String
    let kind: String
    let uniqueID: String
    let subsystem: String
    let sysname: String
    let syspath: String
    let devnode: String?
    let cardNumber: Int?
    let idPath: String?
    let name: String?
    let connectorHotplug: Bool
    let camera: CameraJSON?
    let screens: [ScreenJSON]?
    let audio: [AudioDeviceJSON]?
    let problem: ErrorJSON.Body?

    init(_ event: DeviceEvent) {
        action = event.action.rawValue
        kind = event.kind.rawValue
        uniqueID = event.uniqueID
        subsystem = event.device.subsystem
        sysname = event.device.sysname
        syspath = event.device.syspath
        devnode = event.device.devnode
        cardNumber = event.device.cardNumber
        idPath = event.device.idPath
        name = event.device.name
        connectorHotplug = event.isConnectorHotplug
        camera = event.camera.map { CameraJSON(index: -1, $0) }
        screens = event.kind == .screen ? event.screens.map { ScreenJSON(index: -1, $0) } : nil
        audio = event.kind == .sound ? event.audioDevices.map { AudioDeviceJSON(index: -1, $0) } : nil
        problem = event.problem.map { ErrorJSON($0).error }
    }

    /// `added   camera /dev/video0  vivid (vivid)  uniqueID v4l2:vivid:platform:vivid-000`.
    static func line(_ event: DeviceEvent) -> String {
        var text = "\(event.action.rawValue.padding(toLength: 8, withPad: " ", startingAt: 0)) \(event.kind.rawValue.padding(toLength: 7, withPad: " ", startingAt: 0)) \(event.device.devnode ?? event.device.syspath)"
        if let camera = event.camera { text += "  \(camera.name) (\(camera.driver))" } else if let name = event.device.name { text += "  \(name)" }
        if event.isConnectorHotplug { text += "  connector hotplug" }
        text += "  uniqueID \(event.uniqueID)"
        if let problem = event.problem { text += "  problem: \(problem)" }
        return text
    }
}
