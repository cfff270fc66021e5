import ArgumentParser
import Dispatch
import MediaDevices
import MediaDevicesCommandLine
import Synchronization

/// `mediadevices snapshot DEVICE --output FILE.png|FILE.jpg`: one frame as a PNG or JPEG (the
/// extension decides).
struct SnapshotCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "snapshot",
        abstract: "Write one frame as a PNG (libpng) or JPEG (libjpeg-turbo), after letting the device settle.",
        discussion: Examples.snapshot)

    @Argument(help: "A device path, an index from `list`, a uniqueID, a PipeWire camera (`pipewire:SERIAL` or `pipewire:NODE_NAME`), `testpattern` or `testpattern:noise`.")
    var device: String

    @Option(help: "The image file to write: .png or .jpg (.jpeg); the extension decides.")
    var output: String

    @OptionGroup var formatOptions: FormatOptions

    @OptionGroup var outputOptions: OutputOptions

    @OptionGroup var controlOptions: ControlOptions

    @OptionGroup var backendOption: CameraBackendOption

    @Option(help: "Frames to skip first, while exposure and white balance settle.")
    var skip: Int = 5

    @Option(help: "Give up after this many seconds.")
    var timeout: Double = 10

    @Flag(help: "Print the result as JSON (see docs/cli.md for the shape).")
    var json = false

    func validate() throws {
        if skip < 0 { throw ValidationError("--skip must be 0 or more") }
        try UsageChecks.outputFile(output, example: "snapshot.png")
        do { _ = try ImageFileFormat(path: output) } catch { throw ValidationError(error.detail) }
    }

    func run() throws {
        try reportingErrors(json: json) {
            let opened = try OpenedCapturer(device, request: formatOptions.request,
                                            backend: backendOption.backend.flatMap { DeviceBackendName(rawValue: $0.rawValue) })
            let capturer = opened.capturer
            defer { capturer.release() }
            try capturer.initialize()
            try controlOptions.apply(to: opened)
            let settings = capturer.captureSettings!
            let taker = SnapshotTaker(path: output, format: try ImageFileFormat(path: output), skip: skip)
            if outputOptions.isRequested {
                capturer.consumer = try ConvertingConsumer(output: outputOptions.output(fallback: .argb), consumer: taker)
            } else {
                capturer.consumer = taker
            }
            try capturer.start()
            let arrived = taker.done.wait(timeout: .now() + timeout) == .success
            capturer.stop()
            if let failure = taker.failure { throw failure }
            guard arrived, let written = taker.written else {
                throw MediaDevicesError(.timeout, device: opened.name, operation: "snapshot",
                                        detail: "No usable frame arrived in \(timeout) s (\(capturer.statistics.corruptFrames) corrupt); check the device, or raise --timeout")
            }
            if json {
                struct Output: Encodable {
                    let device: String
                    let format: VideoFormatJSON
                    let output: String
                    let width: Int
                    let height: Int
                }
                printJSON(Output(device: opened.name, format: VideoFormatJSON(settings.format), output: output,
                                 width: written.width, height: written.height))
            } else {
                print("wrote \(output): \(written) \(try ImageFileFormat(path: output).displayName) from \(opened.name) (\(settings.format))")
            }
        }
    }
}

/// Writes frame `skip + 1` as an image file on the capture thread, then signals `done`.
final class SnapshotTaker: VideoFrameConsumer {
    private let path: String
    private let format: ImageFileFormat
    private let skip: Int
    private let state = Mutex((seen: 0, written: Size?.none, failure: MediaDevicesError?.none))
    let done = DispatchSemaphore(value: 0)

    init(path: String, format: ImageFileFormat, skip: Int) {
        self.path = path
        self.format = format
        self.skip = skip
    }

    var written: Size? { state.withLock { $0.written } }
    var failure: MediaDevicesError? { state.withLock { $0.failure } }

    func consumeFrame(_ frame: VideoFrame) {
        let seen = state.withLock { $0.seen += 1; return $0.seen }
        guard seen == skip + 1 else { return }
        do {
            try format.write(frame, to: path)
            state.withLock { $0.written = frame.format.size }
        } catch {
            state.withLock { $0.failure = error }  // ImageFileFormat.write throws MediaDevicesError
        }
        done.signal()
    }
}
