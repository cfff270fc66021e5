import ArgumentParser
import Dispatch
import Foundation
import MediaDevices
import MediaDevicesCommandLine

/// `mediadevices capture DEVICE`: capture N frames to a file and print the statistics.
struct CaptureCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "capture",
        abstract: "Capture frames to a file (Y4M where the format allows it, else raw frames), or frames and a microphone into one .mkv or .nut file.",
        discussion: Examples.capture)

    @Argument(help: "A device path, an index from `list`, a uniqueID, a PipeWire camera (`pipewire:SERIAL` or `pipewire:NODE_NAME`), `testpattern`, `testpattern:noise`, or `screen:N` (a screen from `screens`).")
    var device: String

    @OptionGroup var formatOptions: FormatOptions

    @OptionGroup var outputOptions: OutputOptions

    @OptionGroup var controlOptions: ControlOptions

    @Option(help: "Number of frames to write (Ctrl-C or SIGTERM stops earlier and keeps the frames written so far).")
    var frames: Int = 30

    @Option(help: "Output file; its name decides what is written: .y4m (YUV4MPEG2: 4:2:0, 4:2:2 or 4:4:4 as the source has it, mono for grey), - (Y4M on standard output, for `| ffplay -`), .mjpeg (the camera's JPEG frames, no decode), or a raw extension (.yuv, .raw, .nv12, ...).")
    var output: String

    @Option(help: "Driver buffers to request (at least 3).")
    var buffers: Int = 4

    @Option(help: "With --off-thread (and for screens and the test pattern): frames that may wait for the disk before the oldest is dropped (and counted).")
    var queue: Int = 16

    @Flag(help: "Write each frame from the capturer's consumer callback on the capture thread, zero-copy, as v4l2-ctl does. The default reads the leased `frames` sequence, for a camera on its capture thread too (about the same CPU).")
    var direct = false

    @Option(name: .customLong("convert-threads"), help: "Convert (decode MJPEG, scale, convert) on this many threads of their own, several frames at once, written in capture order: for a stream one core cannot convert in time (4K MJPEG on a small board). Needs a conversion (--output-format, --output-size, or a .y4m of MJPEG); writes from the consumer callback as --direct; a frame that comes while every thread is busy is dropped and counted. Default 1: on the capture thread.")
    var convertThreads = 1

    @Flag(help: "Cameras: write from a task of its own through the bounded --queue (a slow disk then costs copies and queue drops, not driver drops), at a second thread wake-up per frame.")
    var offThread = false

    @Option(help: "Give up after this many seconds without all frames (default: 10 s plus twice the expected duration).")
    var timeout: Double?

    @Option(help: "Screens only: grab only this region of the screen, WxH+X+Y (zero-copy, before conversion).")
    var region: String?

    @Flag(help: "Screens only: blend the cursor in (X11: XFIXES; KMS: the cursor plane).")
    var cursor = false

    @OptionGroup var audioOptions: CaptureAudioOptions

    @OptionGroup var backendOption: DeviceBackendOption

    @Flag(help: "Print the result as JSON (see docs/cli.md for the shape).")
    var json = false

    func validate() throws {
        if frames < 1 { throw ValidationError("--frames must be at least 1") }
        if convertThreads < 1 { throw ValidationError("--convert-threads must be at least 1") }
        if let region, Rect(parsing: region) == nil { throw ValidationError("--region takes WxH+X+Y, e.g. 640x480+0+0") }
        // The file name decides the container: a name the tool cannot honour is a usage error,
        // found before the device is opened.
        try UsageChecks.outputFile(output, example: "capture.y4m")
        if AVFileMuxer.container(for: output) != nil {
            if outputOptions.isRequested || convertThreads > 1 {
                throw ValidationError("A .mkv or .nut file stores the camera's frames as they come (raw or MJPEG, no encoding); drop the output options (--output-format, --output-size, --rotate, --mirror, --crop, --convert-threads)")
            }
            return
        }
        if audioOptions.audio != nil {
            throw ValidationError("--audio writes the camera and the microphone into one file: give --output a .mkv or .nut name")
        }
        let container: FrameFileWriter.Container
        do { container = try FrameFileWriter.container(for: output) } catch { throw ValidationError("--output \(output): \(error.detail)") }
        if container == .mjpeg, outputOptions.isRequested {
            throw ValidationError("A .mjpeg file stores the camera's JPEG frames as they come; drop the output options (--output-format, --output-size, --rotate, --mirror, --crop), or write .y4m")
        }
    }

    func run() throws {
        // `--output -`: the video stream has standard output to itself; everything else the tool
        // prints goes to standard error.
        let videoOut = output == "-" ? StandardOutput.setAsideForData() : STDOUT_FILENO
        if let container = AVFileMuxer.container(for: output) {
            try reportingErrors(json: json) { try captureAudioAndVideo(container: container) }
            return
        }
        try reportingErrors(json: json) {
            // The file name decides the container; a name the tool cannot honour fails here,
            // before the device is opened.
            let container = try FrameFileWriter.container(for: self.output)
            let opened = try OpenedCapturer(device, request: formatOptions.request, buffers: buffers,
                                            screenRegion: region.flatMap(Rect.init(parsing:)), showsCursor: cursor,
                                            backend: backendOption.backend, portal: backendOption.portalOptions)
            let (capturer, deviceName) = (opened.capturer, opened.name)
            defer { capturer.release() }
            try capturer.initialize()
            try controlOptions.apply(to: opened)
            let settings = capturer.captureSettings!
            // Without --output-format, conversion (asked for by the other output options) gives I420.
            var output = outputOptions.isRequested ? outputOptions.output(fallback: .yu12) : nil
            // Screens give their framebuffer format (XRGB8888…): I420 for a .y4m file, and one
            // size for the whole file even when the screen changes mode (frames are scaled to it).
            if opened.isScreen, output != nil, output?.size == nil { output?.size = settings.format.size }
            // Y4M takes 4:2:0, 4:2:2, 4:4:4 and grey as they come; RGB, Bayer and HSV go through
            // ARGB to 4:4:4, MJPEG and NV12 to I420. Screens are I420, at one size for the whole
            // file even when the screen changes mode.
            if container == .y4m, output == nil {
                if opened.isScreen {
                    output = OutputFormat(.yu12, size: settings.format.size, jpegDecoding: outputOptions.decoding)
                } else if let intermediate = FrameFileWriter.y4mIntermediate(for: settings.format.pixelFormat) {
                    output = OutputFormat(intermediate, jpegDecoding: outputOptions.decoding)
                }
            }
            let fileFormat = output?.format(for: settings.format, orientation: capturer.orientation) ?? settings.format
            let writer = try FrameFileWriter(path: self.output, format: fileFormat, frameRate: settings.frameRate,
                                             container: container, standardOutput: videoOut)
            // Frames are written from the bounded `frames` sequence. A camera's frames come on
            // lease (the driver's buffer, no copy), read on its capture thread (one wake-up per
            // frame, as GStreamer's streaming thread; a slow disk holds the driver's buffers and
            // shows as driver drops), or with --off-thread from a task of its own (a slow disk
            // shows as copies and counted queue drops). With --direct, the capturer's consumer
            // callback writes each lent frame.
            let sink = FileSink(writer: writer, limit: self.frames)
            // Ctrl-C or SIGTERM: stop now, complete the file with the frames so far.
            let interruption = Interruption { sink.done.signal() }
            defer { interruption.finish() }
            var sequence: VideoFrames?
            var parallel: ParallelConvertingConsumer?
            if convertThreads > 1 {
                guard let output else {
                    throw MediaDevicesError(.invalidValue, device: deviceName, operation: "--convert-threads",
                                            detail: "Nothing to convert: \(settings.format.pixelFormat.fourCC) frames are written as they come; add --output-format or --output-size")
                }
                parallel = try ParallelConvertingConsumer(output: output, threads: convertThreads, consumer: sink)
                capturer.consumer = parallel
                try capturer.start()
            } else if direct {
                capturer.consumer = try output.map { try ConvertingConsumer(output: $0, consumer: sink) } ?? sink
                try capturer.start()
            } else {
                let frames = try output.map { try capturer.frameSequence(bufferSize: queue, output: $0) } ?? capturer.frameSequence(bufferSize: queue)
                try capturer.start()
                sink.drain(frames, executor: offThread ? nil : opened.captureExecutor)
                sequence = frames
            }
            let expected = Double(self.frames) / (settings.frameRate?.framesPerSecond.doubleValue ?? 30)
            let limit = timeout ?? (10 + 2 * expected)
            // On a terminal: frames, fps and drops, redrawn twice a second.
            let started = DispatchTime.now(), wanted = self.frames
            let progress = ProgressLine.start {
                let statistics = capturer.statistics
                return CaptureProgress.line(written: min(statistics.deliveredFrames, wanted),
                                            elapsed: Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e9,
                                            statistics: statistics)
            }
            let finished = sink.done.wait(timeout: .now() + limit) == .success
            progress?.finish()
            capturer.stop()
            sink.finished.wait()
            try writer.close()
            if let failure = sink.failure { throw failure }
            if interruption.interruptingSignal != nil {
                report(device: deviceName, settings: settings, output: output.map { _ in fileFormat }, adjustments: opened.adjustments,
                       writer: writer, statistics: capturer.statistics, sequence: sequence.map(SequenceFigures.init))
                try interruption.exitIfInterrupted("capture: stopped after \(writer.framesWritten) of \(self.frames) frames, all in \(self.output)")
            }
            guard finished, writer.framesWritten == self.frames else {
                throw MediaDevicesError(.timeout, device: deviceName, operation: "capture",
                                        detail: "Only \(writer.framesWritten) of \(self.frames) frames arrived in \(limit) s; check the device, or raise --timeout")
            }
            report(device: deviceName, settings: settings, output: output.map { _ in fileFormat }, adjustments: opened.adjustments,
                   writer: writer, statistics: capturer.statistics, sequence: sequence.map(SequenceFigures.init))
            if let parallel, !json {
                print("converted on \(parallel.threads) threads: \(parallel.convertedFrames) frames, \(parallel.busyFrames) dropped while every thread was busy, \(parallel.corruptFrames) corrupt")
            }
        }
    }

    /// How the sequence handed frames over: on lease, or copied (a lease would have starved the driver).
    struct SequenceFigures: Encodable {
        let leasedFrames: Int
        let copiedFrames: Int
        init(_ frames: VideoFrames) { (leasedFrames, copiedFrames) = (frames.leasedFrames, frames.copiedFrames) }
    }

    private func report(device: String, settings: CaptureSettings, output: VideoFormat?, adjustments: [FormatAdjustment],
                        writer: FrameFileWriter, statistics: CaptureStatistics, sequence: SequenceFigures?) {
        if json {
            struct Output: Encodable {
                let device: String
                let format: VideoFormatJSON
                let outputFormat: VideoFormatJSON?
                let frameRate: FractionJSON?
                let adjustments: [AdjustmentJSON]
                let output: String
                let container: String
                let framesWritten: Int
                let statistics: CaptureStatistics
                let sequence: SequenceFigures?
            }
            printJSON(Output(device: device, format: VideoFormatJSON(settings.format), outputFormat: output.map(VideoFormatJSON.init),
                             frameRate: settings.frameRate.map { FractionJSON($0.framesPerSecond) },
                             adjustments: adjustments.map(AdjustmentJSON.init), output: writer.path,
                             container: writer.container.rawValue, framesWritten: writer.framesWritten, statistics: statistics,
                             sequence: sequence))
            return
        }
        for adjustment in adjustments { print("adjusted \(adjustment)") }
        let written = output ?? settings.format
        let converted = output == nil ? "" : " converted from \(settings.format)"
        print("wrote \(writer.framesWritten) frames of \(written)\(converted) @ \(settings.frameRate?.description ?? "unknown rate") to \(writer.path) (\(writer.container.rawValue))")
        print(String(format: "delivered %d, dropped %d (driver) + %d (queue) + %d (corrupt), measured %.2f fps, capture delay mean %.0f µs, max %.0f µs",
                     statistics.deliveredFrames, statistics.droppedFrames, statistics.queueDroppedFrames, statistics.corruptFrames,
                     statistics.measuredFrameRate, statistics.meanCaptureDelay.inMicroseconds, statistics.maxCaptureDelay.inMicroseconds))
        if let reason = statistics.lastCorruptFrameReason { print("last corrupt frame: \(reason)") }
        if statistics.scaledDecodeFrames > 0 || statistics.sharedDecodeFrames > 0 {
            print("MJPEG: \(statistics.scaledDecodeFrames) frames decoded scaled in the DCT (last at \(statistics.lastDecodeScale?.description ?? "1")), \(statistics.sharedDecodeFrames) decoded once for several outputs")
        }
        // Only frames a source lends count (screens, the test pattern and converted sequences
        // hand over copies of their own).
        if let sequence, sequence.leasedFrames + sequence.copiedFrames > 0 {
            print("sequence: \(sequence.leasedFrames) frames on lease, \(sequence.copiedFrames) copied (a lease would have left the driver too few buffers)")
        }
        if writer.container == .raw, let name = FFmpegNames.pixelFormat(written.pixelFormat) {
            print("play: ffplay -f rawvideo -pixel_format \(name) -video_size \(written.width)x\(written.height) \(writer.path)")
        }
    }
}

/// A file `FileSink` writes frames to: a video file (`FrameFileWriter`) or the video side of an
/// audio-and-video file (`AVFileMuxer`).
protocol CapturedFrameFile: AnyObject {
    /// Appends one frame.
    func write(_ frame: VideoFrame) throws(MediaDevicesError)
    /// Frames written so far.
    var framesWritten: Int { get }
}

extension FrameFileWriter: CapturedFrameFile {}
extension AVFileMuxer: CapturedFrameFile {
    /// Video frames written so far.
    var framesWritten: Int { syncFigures.videoFrames }
}

/// Writes the first `limit` frames to a file: from a `frames` sequence on a task of its own,
/// on the camera's capture executor unless `--off-thread` (`drain`), or, as the capturer's
/// consumer, on the capture thread (`--direct`).
/// Signals `done` when it has them all or capture ended, and `finished` when writing is over.
// @unchecked Sendable: written on the capture thread; the main thread reads it after `finished`.
final class FileSink: VideoFrameConsumer, @unchecked Sendable {
    let writer: any CapturedFrameFile
    let limit: Int
    let done = DispatchSemaphore(value: 0)
    let finished = DispatchSemaphore(value: 0)
    private(set) var failure: MediaDevicesError?

    init(writer: any CapturedFrameFile, limit: Int) {
        self.writer = writer
        self.limit = limit
    }

    /// Writes `frame` on the capture thread (`--direct`); the first failure ends the writing.
    func consumeFrame(_ frame: VideoFrame) {
        guard failure == nil, writer.framesWritten < limit else { return }
        do {
            try writer.write(frame)
            if writer.framesWritten == limit { done.signal() }
        } catch {
            failure = error  // FrameFileWriter.write throws MediaDevicesError
            done.signal()
        }
    }

    /// Capture ended (`--direct`): nothing more will be written.
    func captureDidStop(error: MediaDevicesError?) {
        if failure == nil, let error { failure = error }
        if writer.framesWritten < limit { done.signal() }
        finished.signal()
    }

    /// Starts writing from `frames`, on `executor` when given (a camera's capture executor).
    /// Made with the preference rather than hopping to it, and after `start()`, so that the
    /// task's first job goes straight to the capture thread and Swift's global executor is never
    /// used (its first use starts libdispatch's manager thread, which wakes every second).
    func drain(_ frames: VideoFrames, executor: CaptureExecutor?) {
        Task.detached(executorPreference: executor) { [self] in
            do {
                for try await buffer in frames where writer.framesWritten < limit {
                    try buffer.withFrame { try writer.write($0) }
                    if writer.framesWritten == limit { done.signal() }
                }
            } catch {
                failure = error as? MediaDevicesError
                    ?? MediaDevicesError(.io, device: nil, operation: "capture", detail: "\(error)")
            }
            if writer.framesWritten < limit { done.signal() }
            finished.signal()
        }
    }
}
