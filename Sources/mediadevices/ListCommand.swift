import ArgumentParser
import MediaDevices
import MediaDevicesCommandLine

/// `mediadevices list`: every capture device.
struct ListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List capture devices and screens.",
                                                     discussion: Examples.list)

    @Flag(help: "Print JSON (see docs/cli.md for the shape).")
    var json = false

    @Option(name: .customLong("backend"), help: "Cameras: list what this backend offers, v4l2 or pipewire (repeat it for both; default: v4l2: a camera both offer is listed once, with both routes), or portal (the Camera portal: access is asked for first; alone).")
    var backends: [CaptureBackend] = []

    func run() throws {
        var portalProblems: [MediaDevicesError] = []
        if backends.contains(.portal) {
            do { try CameraBackendRule.requestPortalAccess() } catch let error as MediaDevicesError { portalProblems.append(error) }
        }
        let cameras = CaptureDevice.scan(backends: backends.isEmpty ? [.v4l2] : Set(backends))
        let (devices, problems) = (cameras.devices, portalProblems + cameras.problems)
        let audio = AudioDevice.scan()
        let (inputs, outputs) = (audio.inputs, audio.outputs)
        let found = ScreenSource.scan()
        let (screens, screenProblems) = (found.devices, found.problems)
        if json {
            struct Output: Encodable { let cameras: [CameraJSON]; let skipped: [ErrorJSON.Body]; let audio: AudioListJSON; let screens: [ScreenJSON] }
            printJSON(Output(cameras: devices.enumerated().map { CameraJSON(index: $0.offset, $0.element) },
                             skipped: (problems + screenProblems).map { ErrorJSON($0).error },
                             audio: AudioListJSON(inputs: inputs.enumerated().map { AudioDeviceJSON(index: $0.offset, $0.element) },
                                                  outputs: outputs.enumerated().map { AudioDeviceJSON(index: $0.offset, $0.element) },
                                                  skipped: audio.problems.map { ErrorJSON($0).error }),
                             screens: screens.enumerated().map { ScreenJSON(index: $0.offset, $0.element) }))
            return
        }
        for problem in problems { print("skipped: \(problem)") }
        if devices.isEmpty { print("No capture devices. The built-in source `testpattern` is always there.") }
        for (index, device) in devices.enumerated() {
            print("[\(index)] \(device.path)  \(device.name)  (\(device.driver), \(device.busInfo))")
            print("    uniqueID: \(device.uniqueID)  position: \(device.position.rawValue)\(device.isMultiplanar ? "  multi-planar" : "")\(device.isVirtual ? "  virtual (a virtual camera's output, not a camera)" : "")\(device.group.map { "  group: \($0)" } ?? "")")
            if device.routes != [.v4l2(path: device.path)] {
                print("    routes: \(device.routes.map(\.description).joined(separator: "; "))")
            }
        }
        print("[testpattern] built-in colour bars (testpattern:noise for white noise)")
        printAudio(inputs: inputs, outputs: outputs, problems: audio.problems)
        ScreensCommand.printScreens(screens, problems: screenProblems)
    }
}
