import ArgumentParser
import Foundation
import MediaDevices
import MediaDevicesCommandLine
import Synchronization

/// `mediadevices record DEVICE [--seconds S] --output FILE.wav`: capture through the audio bus into
/// a WAV file, then print the achieved rate, xruns and measured capture delay.
struct RecordCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "record", abstract: "Record from an audio input into a WAV file.", discussion: Examples.record)

    @Argument(help: "An input index from `list`, a uniqueID, an ALSA PCM name (hw:Loopback,1,0, plughw:0, default) or pulse:NAME.")
    var device: String

    @Option(help: "Seconds to record (default: until Ctrl-C or SIGTERM, then the file is completed and the exit status is 0).")
    var seconds: Double?

    @Option(help: "Sample rate in Hz (the nearest the device takes is used).")
    var rate: Int = 48000

    @Option(help: "Channels.")
    var channels: Int = 2

    @Option(name: .customLong("sample-format"), help: "S16_LE, S32_LE or FLOAT_LE.")
    var sampleFormat: String = "S16_LE"

    @Option(help: "Frames per period.")
    var period: Int = 512

    @Option(help: "Periods in the device buffer.")
    var periods: Int = 4

    @Option(help: "Output WAV file.")
    var output: String

    @Flag(help: "Show a level meter (RMS and peak per channel, dBFS) on standard error every 100 ms while recording.")
    var meter = false

    @Flag(help: "Print the result as JSON.")
    var json = false

    func validate() throws {
        if SampleFormat(named: sampleFormat) == nil { throw ValidationError("--sample-format takes S16_LE, S32_LE or FLOAT_LE") }
        if let seconds, seconds <= 0 { throw ValidationError("--seconds must be positive") }
        try UsageChecks.outputFile(output, example: "recording.wav")
        if rate <= 0 || channels <= 0 || period <= 0 || periods < 2 { throw ValidationError("--rate, --channels and --period must be positive, --periods at least 2") }
    }

    func run() throws {
        try reportingErrors(json: json) {
            let input = try AudioDeviceArgument.resolve(device, direction: .input)
            let driver = AudioDriver()
            try driver.initializeCapture(device: input, format: AudioFormat(sampleRate: rate, channels: channels, sampleFormat: SampleFormat(named: sampleFormat)!),
                                         options: AudioStreamOptions(periodFrames: period, periods: periods))
            defer { driver.capture.terminate() }
            let format = driver.captureFormat!
            // Without --seconds: until a signal, or until the WAV file's 4 GiB limit.
            let wanted = seconds.map { Int(($0 * Double(format.sampleRate)).rounded()) } ?? RecordProgress.wavFrameLimit(format)
            let sink = RecordingSink(bus: driver.bus, writer: try WAVWriter(path: output, format: format), wanted: wanted,
                                     levels: meter ? LevelMeterPrinter(format: format) : nil, tracksPeak: !meter && ProgressLine.isShown)
            // The file is written on the audio thread, after each period, as arecord does: one
            // thread and one wake-up per period. This thread sleeps until the sink has all
            // frames, the capture ends, or the deadline passes.
            driver.capture.periodObserver = { _ in sink.drain() }
            driver.capture.onStop = { _ in sink.finished.signal() }
            // Ctrl-C or SIGTERM: stop now, complete the file with the samples so far.
            let interruption = Interruption { sink.finished.signal() }
            defer { interruption.finish() }
            try driver.startCapture()
            // On a terminal (and without --meter, which has the line): seconds, level and xruns.
            let progress = meter ? nil : ProgressLine.start {
                RecordProgress.line(seconds: format.duration(frames: sink.framesWritten).inSeconds, peak: sink.takePeak(),
                                    xruns: driver.capture.statistics.xruns)
            }
            if let seconds { _ = sink.finished.wait(timeout: .now() + seconds * 2 + 5) } else { sink.finished.wait() }
            progress?.finish()
            driver.stopCapture()
            // The audio thread has ended (stop() joins it): what it left in the bus is ours now.
            sink.drain()
            sink.levels?.finish()
            let writer = sink.writer
            try writer.close()
            if let failure = sink.failure { throw failure }
            if let failure = driver.capture.endError { throw failure }
            if interruption.interruptingSignal != nil, seconds == nil {
                // Without --seconds a signal is how a recording ends, as with arecord: exit 0.
                printAudioRun(driver.capture, device: input, file: output, frames: writer.framesWritten, json: json)
                return
            }
            if interruption.interruptingSignal != nil {
                printAudioRun(driver.capture, device: input, file: output, frames: writer.framesWritten, json: json)
                try interruption.exitIfInterrupted("record: stopped after \(writer.framesWritten) of \(wanted) frames, all in \(output)")
            }
            guard writer.framesWritten >= wanted else {
                throw MediaDevicesError(.timeout, device: input.uniqueID, operation: "record",
                                        detail: "Only \(writer.framesWritten) of \(wanted) frames arrived; check that the device produces sound (for a Loopback capture, something must play into the other side or it records silence at its own pace)")
            }
            printAudioRun(driver.capture, device: input, file: output, frames: writer.framesWritten, json: json)
        }
    }
}

/// The closing report of `record` and `play`.
func printAudioRun(_ side: AudioDriverSide, device: AudioDevice, file: String, frames: Int, json: Bool) {
    let stats = side.statistics
    let format = side.format!, deviceFormat = side.deviceFormat ?? format
    if json {
        printJSON(AudioRunJSON(side, device: device, file: file, frames: frames))
        return
    }
    print("\(device.direction == .input ? "recorded" : "played") \(frames) frames (\(String(format: "%.2f", format.duration(frames: frames).inSeconds)) s) of \(format) \(device.direction == .input ? "to" : "from") \(file)")
    print("device \(device.uniqueID)\(side.isConverting ? " at \(deviceFormat), converted" : ""), period \(side.periodFrames ?? 0) frames, buffer \(side.bufferFrames ?? 0) frames")
    print(String(format: "achieved rate %.1f Hz, xruns %d, %@ %d samples, measured %@ delay mean %.0f µs, max %.0f µs",
                 stats.achievedSampleRate, stats.xruns, device.direction == .input ? "bus overflow" : "bus underflow",
                 stats.busShortfallSamples, device.direction == .input ? "capture" : "render",
                 stats.meanDelay.inMicroseconds, stats.maxDelay.inMicroseconds))
}

/// `record --meter`: every 100 ms of recorded audio, one meter line (`AudioLevel.meter`) on
/// standard error, redrawn in place on a terminal.
struct LevelMeterPrinter {
    let format: AudioFormat
    private var floats: [Float]
    private var filled = 0
    private let block: Int
    private let redraws = isatty(STDERR_FILENO) != 0

    init(format: AudioFormat) {
        self.format = format
        block = max(1, format.sampleRate / 10) * format.channels
        floats = [Float](repeating: 0, count: block)
    }

    /// Adds recorded bytes in `format`; prints a line for each full 100 ms.
    mutating func add(_ bytes: UnsafeRawBufferPointer) {
        let bytesPerSample = format.sampleFormat.bytesPerSample
        var offset = 0
        while offset < bytes.count {
            let samples = min((bytes.count - offset) / bytesPerSample, block - filled)
            guard samples > 0 else { return }
            floats.withUnsafeMutableBytes { destination in
                SampleConversion.convert(bytes.baseAddress! + offset, format.sampleFormat,
                                         to: destination.baseAddress! + filled * 4, .floatLE, count: samples)
            }
            filled += samples
            offset += samples * bytesPerSample
            if filled == block {
                let level = floats.withUnsafeBufferPointer { AudioLevel(samples: $0, channels: format.channels) }
                FileHandle.standardError.write(Data(((redraws ? "\r" : "") + level.meter() + (redraws ? "" : "\n")).utf8))
                filled = 0
            }
        }
    }

    /// Ends the redrawn line.
    func finish() {
        if redraws { FileHandle.standardError.write(Data("\n".utf8)) }
    }
}

/// `record`'s file side: drains the capture bus into the WAV file (and the meter) on the audio
/// thread, from the capture side's period observer, until it has the frames wanted; then
/// signals `finished`. The main thread touches it only before `start()` and after `stop()`,
/// which joins the audio thread, so no lock is needed.
// @unchecked Sendable: the main thread touches it only before `start()` and after `stop()` joined the audio thread.
final class RecordingSink: @unchecked Sendable {
    let bus: AudioBus
    let writer: WAVWriter
    let wanted: Int
    var levels: LevelMeterPrinter?
    /// The first write error; recording ends at it.
    private(set) var failure: Error?
    /// Signalled once all frames are in the file, on a write error, or when the capture ends.
    let finished = DispatchSemaphore(value: 0)
    private var chunk: [UInt8]
    /// The chunk as floats, for the peak (made once).
    private var peakScratch: [Float]
    private var signalled = false
    /// Frames in the file, for the progress line (read on another thread).
    private let written = Atomic<Int>(0)
    /// The largest sample magnitude since `takePeak()` (a `Float`'s bits), when tracked.
    private let peak = Atomic<UInt32>(0)
    private let tracksPeak: Bool

    init(bus: AudioBus, writer: WAVWriter, wanted: Int, levels: LevelMeterPrinter?, tracksPeak: Bool = false) {
        self.bus = bus
        self.writer = writer
        self.wanted = wanted
        self.levels = levels
        self.tracksPeak = tracksPeak
        chunk = [UInt8](repeating: 0, count: 4096 * writer.format.bytesPerFrame)
        peakScratch = [Float](repeating: 0, count: tracksPeak ? 4096 * writer.format.channels : 0)
    }

    /// Frames written to the file so far; safe from any thread.
    var framesWritten: Int { written.load(ordering: .relaxed) }

    /// The peak (0…1) since the last call, and starts a new one; safe from any thread.
    func takePeak() -> Float { Float(bitPattern: peak.exchange(0, ordering: .relaxed)) }

    /// Moves what the bus holds (up to the frames still wanted) into the file.
    func drain() {
        let frameBytes = writer.format.bytesPerFrame
        while failure == nil && writer.framesWritten < wanted {
            let want = min(chunk.count / frameBytes, wanted - writer.framesWritten) * frameBytes
            let got = chunk.withUnsafeMutableBytes { bus.captureRing.read(into: $0.baseAddress!, count: want, granularity: frameBytes) }
            if got == 0 { break }
            do {
                try chunk.withUnsafeBytes { bytes in
                    let recorded = UnsafeRawBufferPointer(rebasing: bytes[0..<got])
                    try writer.write(raw: recorded)
                    levels?.add(recorded)
                    if tracksPeak {
                        let found = peakScratch.withUnsafeMutableBufferPointer {
                            RecordProgress.peak(recorded, writer.format.sampleFormat, scratch: $0)
                        }
                        if found > Float(bitPattern: peak.load(ordering: .relaxed)) { peak.store(found.bitPattern, ordering: .relaxed) }
                    }
                }
            } catch {
                failure = error
            }
            written.store(writer.framesWritten, ordering: .relaxed)
        }
        if !signalled && (failure != nil || writer.framesWritten >= wanted) {
            signalled = true
            finished.signal()
        }
    }
}
