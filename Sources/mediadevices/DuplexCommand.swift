import ArgumentParser
import Dispatch
import Foundation
import MediaDevices
import MediaDevicesCommandLine

/// `mediadevices duplex --play FAR.wav --output OUT.wav`: a call's audio through one driver.
/// Plays a WAV file on the render device while recording the capture device, with voice
/// processing on the capture (echo cancellation with what is played as the reference, noise
/// suppression, gain control; `--voice-processing`), and writes the processed capture.
struct DuplexCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "duplex",
        abstract: "Play a WAV file and record at once through one driver, with voice processing (echo, noise, gain).",
        discussion: Examples.duplex)

    @Option(help: "The WAV file to play (the far end of a call).")
    var play: String

    @Option(help: "Where to write the processed capture (WAV).")
    var output: String

    @Option(help: "The output: an index from `list`, a uniqueID, an ALSA PCM name (plughw:0, default) or pulse:NAME.")
    var render = "default"

    @Option(help: "The input: an index from `list`, a uniqueID, an ALSA PCM name (plughw:0, default) or pulse:NAME.")
    var capture = "default"

    @Option(name: .customLong("voice-processing"), help: "The processors: echo,noise,gain (any of them), or none.")
    var voiceProcessing = "echo,noise,gain"

    @Option(help: "The voice-processing library: webrtc or speexdsp.")
    var library = "webrtc"

    @Option(name: .customLong("echo-tail"), help: "Milliseconds of echo speexdsp's linear canceller models (default 250; with webrtc, 0 runs WebRTC's canceller alone: cheaper, but it keeps less of the near end while both talk in a room that rings longer than 128 ms).")
    var echoTail: Int?

    @Option(help: "Seconds to record (default: the file's length and half a second).")
    var seconds: Double?

    @Option(help: "Capture rate in Hz (8000, 16000, 32000 or 48000: the rates voice processing takes).")
    var rate = 48000

    @Option(help: "Capture channels (1 or 2).")
    var channels = 1

    @Option(help: "Frames per period, both sides.")
    var period = 480

    @Option(help: "Periods in each device buffer.")
    var periods = 4

    @Flag(help: "Show a level meter of the processed capture on standard error every 100 ms.")
    var meter = false

    @Flag(help: "Print the result as JSON (see docs/cli.md for the shape).")
    var json = false

    func validate() throws {
        if VoiceProcessing(parsing: voiceProcessing) == nil { throw ValidationError("--voice-processing takes echo, noise and gain, comma separated, or none") }
        if VoiceProcessingLibrary(rawValue: library) == nil { throw ValidationError("--library takes webrtc or speexdsp") }
        if let seconds, seconds <= 0 { throw ValidationError("--seconds must be positive") }
        if let echoTail, echoTail < 0 || (echoTail < 10 && library == "speexdsp") { throw ValidationError("--echo-tail takes milliseconds: 0 or more with webrtc, 10 or more with speexdsp") }
        if rate <= 0 || channels <= 0 || period <= 0 || periods < 2 { throw ValidationError("--rate, --channels and --period must be positive, --periods at least 2") }
        try UsageChecks.outputFile(output, example: "near.wav")
    }

    func run() throws {
        try reportingErrors(json: json) {
            let wav = try WAVFile(path: play)
            guard wav.frames > 0 else { throw MediaDevicesError(.io, device: nil, operation: "read \(play)", detail: "The WAV file holds no samples") }
            let processing = VoiceProcessing(parsing: voiceProcessing)!
            var voice = processing.isEmpty ? nil : VoiceProcessingOptions(processing: processing, library: VoiceProcessingLibrary(rawValue: library)!)
            if let echoTail { voice?.echoTail = .milliseconds(echoTail) }
            let output = try AudioDeviceArgument.resolve(render, direction: .output)
            let input = try AudioDeviceArgument.resolve(capture, direction: .input)
            let options = AudioStreamOptions(periodFrames: period, periods: periods)
            let driver = AudioDriver()
            try driver.initializeRendering(device: output, format: wav.format, options: options)
            defer { driver.render.terminate() }
            try driver.initializeCapture(device: input, format: AudioFormat(sampleRate: rate, channels: channels), options: options, voiceProcessing: voice)
            defer { driver.capture.terminate() }
            let format = driver.captureFormat!
            let duration = seconds ?? wav.format.duration(frames: wav.frames).inSeconds + 0.5
            let wanted = Int((duration * Double(format.sampleRate)).rounded())
            let sink = RecordingSink(bus: driver.bus, writer: try WAVWriter(path: self.output, format: format), wanted: wanted,
                                     levels: meter ? LevelMeterPrinter(format: format) : nil)
            driver.capture.periodObserver = { _ in sink.drain() }
            driver.capture.onStop = { _ in sink.finished.signal() }
            var offset = 0
            func feed() {
                guard offset < wav.data.count else { return }
                offset += wav.data.withUnsafeBytes { bytes in
                    driver.bus.renderRing.write(bytes.baseAddress! + offset, count: bytes.count - offset, granularity: wav.format.bytesPerFrame)
                }
            }
            // Ctrl-C or SIGTERM: stop now, complete the file with the samples so far.
            let interruption = Interruption { sink.finished.signal() }
            defer { interruption.finish() }
            feed()
            try driver.startRendering()
            try driver.startCapture()
            let deadline = DispatchTime.now() + duration * 2 + 5
            while sink.finished.wait(timeout: .now() + .milliseconds(5)) == .timedOut && driver.isCapturing && DispatchTime.now() < deadline {
                feed()
            }
            driver.stopCapture()
            driver.stopRendering()
            sink.drain()
            sink.levels?.finish()
            try sink.writer.close()
            if let failure = sink.failure { throw failure }
            if let failure = driver.capture.endError { throw failure }
            if let failure = driver.render.endError { throw failure }
            report(driver: driver, input: input, output: output, frames: sink.writer.framesWritten, playedFrames: min(offset, wav.data.count) / wav.format.bytesPerFrame)
            try interruption.exitIfInterrupted("duplex: stopped after \(sink.writer.framesWritten) of \(wanted) frames, all in \(self.output)")
        }
    }

    /// The closing report: the capture (as `record`), what was played, and the voice processing.
    private func report(driver: AudioDriver, input: AudioDevice, output: AudioDevice, frames: Int, playedFrames: Int) {
        let processor = driver.voiceProcessor
        if json {
            let voice = processor.map { processor in
                DuplexRunJSON.VoiceProcessingJSON(
                    processing: processor.processing.description == "none" ? [] : processor.processing.description.split(separator: ",").map(String.init),
                    library: processor.options.library.rawValue,
                    latency: Double(processor.latencyFrames) / Double(processor.format.sampleRate), processedBlocks: processor.processedBlocks,
                    echoReturnLoss: processor.echoMetrics?.echoReturnLoss, echoReturnLossEnhancement: processor.echoMetrics?.echoReturnLossEnhancement,
                    echoDelay: processor.echoMetrics?.delay.map { Double($0.components.seconds) + Double($0.components.attoseconds) / 1e18 })
            }
            printJSON(DuplexRunJSON(capture: AudioRunJSON(driver.capture, device: input, file: self.output, frames: frames),
                                    render: AudioRunJSON(driver.render, device: output, file: play, frames: playedFrames),
                                    renderDelay: driver.estimatedRenderDelay.inSeconds, voiceProcessing: voice))
            return
        }
        printAudioRun(driver.capture, device: input, file: self.output, frames: frames, json: false)
        print("played \(play) on \(output.uniqueID): render delay \(String(format: "%.1f", driver.estimatedRenderDelay.inMilliseconds)) ms")
        guard let processor else {
            print("voice processing off")
            return
        }
        var line = "voice processing \(processor.processing) (\(processor.options.library)), latency \(String(format: "%.1f", Double(processor.latencyFrames) * 1000 / Double(processor.format.sampleRate))) ms, \(processor.processedBlocks) blocks"
        if let echo = processor.echoMetrics {
            line += String(format: "; echo canceller: ERL %.0f dB, ERLE %.0f dB", echo.echoReturnLoss, echo.echoReturnLossEnhancement)
            if let delay = echo.delay { line += ", delay found \(delay.components.seconds * 1000 + delay.components.attoseconds / 1_000_000_000_000_000) ms" }
        }
        line += "; reference re-aligned: render \(processor.renderJumps), capture \(processor.captureJumps); blocks without reference \(processor.blocksWithoutReference)" +
            String(format: "; last stamps off the line: render %.1f ms, capture %.1f ms", processor.lastStampDeviations.render, processor.lastStampDeviations.capture)
        if processor.droppedReferenceFrames > 0 { line += ", reference frames dropped \(processor.droppedReferenceFrames)" }
        print(line)
    }
}
