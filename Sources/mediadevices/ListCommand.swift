import ArgumentParser
import MediaDevices

/// `mediadevices list`: every capture device.
struct ListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List capture devices.")

    @Flag(help: "Print JSON (see README for the shape).")
    var json = false

    func run() throws {
        let (devices, problems) = CaptureDevice.enumerate()
        let audio = AudioDevice.enumerate()
        let inputs = audio.devices.filter { $0.direction == .input }, outputs = audio.devices.filter { $0.direction == .output }
        if json {
            struct Output: Encodable { let cameras: [CameraJSON]; let skipped: [ErrorJSON.Body]; let audio: AudioListJSON }
            printJSON(Output(cameras: devices.enumerated().map { CameraJSON(index: $0.offset, $0.element) },
                             skipped: problems.map { ErrorJSON($0).error },
                             audio: AudioListJSON(inputs: inputs.enumerated().map { AudioDeviceJSON(index: $0.offset, $0.element) },
                                                  outputs: outputs.enumerated().map { AudioDeviceJSON(index: $0.offset, $0.element) },
                                                  skipped: audio.problems.map { ErrorJSON($0).error })))
            return
        }
        for problem in problems { print("skipped: \(problem)") }
        if devices.isEmpty { print("No capture devices. The built-in source `testpattern` is always there.") }
        for (index, device) in devices.enumerated() {
            print("[\(index)] \(device.path)  \(device.name)  (\(device.driver), \(device.busInfo))")
            print("    uniqueID: \(device.uniqueID)  position: \(device.position.rawValue)\(device.isMultiplanar ? "  multi-planar" : "")")
        }
        print("[testpattern] built-in colour bars (testpattern:noise for white noise)")
        printAudio(inputs: inputs, outputs: outputs, problems: audio.problems)
    }
}
