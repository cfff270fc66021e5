import ArgumentParser
import MediaDevices
import MediaDevicesCommandLine

/// `mediadevices formats DEVICE`: every pixel format, size and frame rate.
struct FormatsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "formats", abstract: "List a device's formats, sizes and frame rates.",
                                                     discussion: Examples.formats)

    @Argument(help: "A device path, an index from `list`, a uniqueID, a PipeWire camera (`pipewire:SERIAL` or `pipewire:NODE_NAME`), or `testpattern`.")
    var device: String

    @OptionGroup var backendOption: CameraBackendOption

    @Flag(help: "Print JSON (see docs/cli.md for the shape).")
    var json = false

    func run() throws {
        try reportingErrors(json: json) {
            if AudioDeviceArgument.isAudio(device) { return try printAudioFormats(device, json: json) }
            let (name, formats): (String, [CaptureFormat])
            switch try DeviceSelection.resolve(device, cameraBackend: backendOption.backend) {
            case .camera(let camera): (name, formats) = (camera.path, try camera.supportedFormats())
            case .testPattern: (name, formats) = ("testpattern", TestPatternSource.supportedFormats)
            case .screen(let screen): (name, formats) = (screen.uniqueID, try ScreenSource.currentFormats(screen))
            }
            if json {
                struct Output: Encodable { let device: String; let formats: [FormatJSON] }
                printJSON(Output(device: name, formats: formats.map(FormatJSON.init)))
                return
            }
            for (index, format) in formats.enumerated() {
                let flags = [format.isCompressed ? "compressed" : nil, format.isEmulated ? "emulated" : nil,
                             format.isConvertible ? nil : "not converted by the pipeline"].compactMap { $0 }
                print("[\(index)] '\(format.pixelFormat.fourCC)' (\(format.description)\(flags.isEmpty ? "" : ", " + flags.joined(separator: ", ")))")
                for option in format.frameSizes {
                    print("    \(option.sizes): \(option.frameRateRanges.map(\.description).joined(separator: ", "))")
                }
            }
        }
    }
}
