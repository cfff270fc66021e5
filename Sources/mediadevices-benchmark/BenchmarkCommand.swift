import ArgumentParser
import Logging
import Foundation
import MediaDevices
import MediaDevicesCommandLine

/// `mediadevices-benchmark`: the pixel pipeline's, the capture paths', the audio and the screen
/// figures, each printed as a ratio against a reference measured in the same run (direct libyuv
/// and libjpeg-turbo calls, memcpy, and the field's tools: v4l2-ctl, ffmpeg, GStreamer, arecord,
/// parec). Not a test: run it on a release build (`swift build -c release`), or
/// through `scripts/benchmark.sh` and `scripts/audio-benchmark.sh`. The parts that measure the
/// `mediadevices` tool itself (`capture`, `audio --cpu`) run the one `MEDIADEVICES_TOOL` names.
@main
struct BenchmarkCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mediadevices-benchmark",
        abstract: "Measure conversion, MJPEG decode, capture CPU and latency, audio and screens against direct library calls and the field's tools.",
        discussion: "Build with `swift build -c release` first: a debug build's figures mean nothing. scripts/benchmark.sh runs every part; MEDIADEVICES_TOOL names the mediadevices tool the capture and audio parts measure.",
        subcommands: [Conversion.self, MJPEG.self, MJPEGScaled.self, MJPEGThreads.self, CaptureCPU.self, PipeWireCamera.self, Latency.self, Stream.self,
                      AudioBenchmarkCommand.self, ScreenBenchmarkCommand.self, ConsoleBenchmarkCommand.self,
                      VirtualCameraBenchmarkCommand.self, TestPatternBenchmarkCommand.self])

    /// Sends the library's log messages to standard error, keeping standard output for the
    /// figures (and JSON) only, then runs the command.
    static func main() {
        LoggingSystem.bootstrap(StreamLogHandler.standardError)
        main(nil)
    }

    /// `--output-size WxH`, parsed (`nil` when not given).
    static func outputSize(_ text: String?) throws -> Size? {
        guard let text else { return nil }
        guard let size = Size(parsing: text) else { throw ValidationError("--output-size takes WxH, e.g. 640x360") }
        return size
    }

    /// Options every part takes.
    struct Common: ParsableArguments {
        @Flag(help: "Print the figures as JSON.")
        var json = false

        @Flag(help: "Run even when this build is not optimized (for checking the benchmark itself).")
        var allowDebug = false

        /// Refuses to measure an unoptimized build.
        func checkOptimized() throws {
            #if DEBUG
            if !allowDebug {
                throw ValidationError("this is a debug build: its figures mean nothing. Run `swift build -c release` and use .build/release/mediadevices-benchmark (or pass --allow-debug)")
            }
            #endif
        }

        /// Prints progress to standard error (standard output carries the results).
        func progress(_ line: String) {
            FileHandle.standardError.write(Data("benchmark: \(line)\n".utf8))
        }

        /// Prints `value` as JSON, or `table` with a title.
        func report<T: Encodable>(_ title: String, _ value: T, table: String) {
            if json { printJSON(value) } else { print("\(title)\n\(table)\n") }
        }
    }

    /// Options of the in-process timing loops.
    struct Timing: ParsableArguments {
        @Option(help: "Rounds per case (each round times a batch of every competitor, interleaved).")
        var rounds = 15

        @Option(help: "Milliseconds per batch.")
        var batchMilliseconds = 10.0
    }

    struct Conversion: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Every raw format → NV12, I420, ARGB, and crop/scale/rotate, through FrameConverter vs the same libyuv calls vs memcpy.")

        @OptionGroup var common: Common
        @OptionGroup var timing: Timing

        @Option(help: "Frame sizes, comma-separated.")
        var sizes = "640x480,1920x1080"

        @Option(help: "Source formats (fourccs or names), comma-separated. Default: every raw format the pipeline reads.")
        var formats: String?

        @Option(help: "Output formats, comma-separated (NV12, I420, ARGB).")
        var outputs = "NV12,I420,ARGB"

        @Flag(help: "Leave out the crop/scale/rotate cases.")
        var noGeometry = false

        func run() throws {
            try common.checkOptimized()
            let sizeList = try sizes.split(separator: ",").map { text in
                guard let size = Size(parsing: String(text)) else { throw ValidationError("bad size '\(text)'") }
                return size
            }
            let sources = try formats.map { list in
                try list.split(separator: ",").map { text in
                    guard let format = PixelFormat(named: String(text)), FrameConverter.canConvert(format), DirectConversion.family(format) != nil
                    else { throw ValidationError("'\(text)' is not a raw format the pipeline reads") }
                    return format
                }
            } ?? PixelFormat.all.filter { FrameConverter.canConvert($0) && DirectConversion.family($0) != nil }
            let outputList = try outputs.split(separator: ",").map { text in
                guard let format = OutputFormat.pixelFormat(parsing: String(text)) else { throw ValidationError("bad output format '\(text)'") }
                return format
            }
            let benchmark = ConversionBenchmark(sizes: sizeList, sources: sources, outputs: outputList, rounds: timing.rounds,
                                                batchNanoseconds: UInt64(timing.batchMilliseconds * 1e6), geometry: !noGeometry)
            let rows = try benchmark.run(progress: common.progress)
            let ratios = rows.map(\.pipelineOverDirect).sorted()
            let summary = String(format: "pipeline/direct over %d cases: median %.3f×, worst %.3f× (%@); %d of %d within the goal ≤ 1.05×",
                                 rows.count, median(ratios), ratios.last ?? 0,
                                 rows.max { $0.pipelineOverDirect < $1.pipelineOverDirect }.map { "\($0.size) \($0.source) → \($0.output)" } ?? "-",
                                 ratios.filter { $0 <= 1.05 }.count, ratios.count)
            common.report("Conversion (thread CPU time per frame, median of \(timing.rounds) interleaved rounds)", rows,
                          table: ConversionBenchmark.table(rows) + "\n" + summary)
        }
    }

    struct MJPEG: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "mjpeg",
            abstract: "MJPEG 4:2:0 and 4:2:2 decode to I420 and NV12 through FrameConverter vs libjpeg-turbo called directly.")

        @OptionGroup var common: Common
        @OptionGroup var timing: Timing

        @Option(help: "Frame size of the test JPEGs.")
        var size = "1920x1080"

        @Option(help: "JPEG quality of the test JPEGs (libjpeg-turbo's compressor).")
        var quality: Int32 = 85

        func run() throws {
            try common.checkOptimized()
            guard let frameSize = Size(parsing: size) else { throw ValidationError("bad size '\(size)'") }
            let benchmark = MJPEGBenchmark(width: frameSize.width, height: frameSize.height, quality: quality,
                                           rounds: timing.rounds, batchNanoseconds: UInt64(timing.batchMilliseconds * 1e6))
            let rows = try benchmark.run(progress: common.progress)
            common.report("MJPEG decode (thread CPU time per frame, median of \(timing.rounds) interleaved rounds)", rows, table: MJPEGBenchmark.table(rows))
        }
    }

    struct MJPEGThreads: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "mjpeg-threads",
            abstract: "MJPEG frames converted per second on one thread (ConvertingConsumer) against N threads (ParallelConvertingConsumer), with the CPU per frame.")

        @OptionGroup var common: Common

        @Option(help: "Frame size of the test JPEG.")
        var size = "1920x1080"

        @Option(help: "JPEG quality of the test JPEG (libjpeg-turbo's compressor).")
        var quality: Int32 = 85

        @Option(help: "Thread counts to measure beside one, comma-separated.")
        var threads = "2"

        @Option(help: "Seconds each row converts.")
        var seconds = 3.0

        func run() throws {
            try common.checkOptimized()
            guard let frameSize = Size(parsing: size) else { throw ValidationError("bad size '\(size)'") }
            let counts = threads.split(separator: ",").compactMap { Int($0) }
            guard !counts.isEmpty, counts.allSatisfy({ $0 >= 1 }) else { throw ValidationError("--threads takes counts of at least 1, e.g. 2,4") }
            let benchmark = ParallelDecodeBenchmark(width: frameSize.width, height: frameSize.height, quality: quality, threadCounts: counts,
                                                    seconds: seconds, output: OutputFormat(.yu12))
            let rows = try benchmark.run(progress: common.progress)
            common.report("MJPEG converted on threads (frames a second, process CPU per frame)", rows,
                          table: ParallelDecodeBenchmark.table(rows, cores: sysconf(Int32(_SC_NPROCESSORS_ONLN))))
        }
    }

    struct MJPEGScaled: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "mjpeg-scaled",
            abstract: "MJPEG decoded at 1/2, 3/8, 1/4, 1/8 size in libjpeg-turbo's IDCT vs its whole decode (the test pattern and the emulated USB camera's picture), and FrameConverter to 640x360 and 320x180 I420 with the scaled decode vs decoding whole.")

        @OptionGroup var common: Common
        @OptionGroup var timing: Timing

        @Option(help: "Frame sizes of the test JPEGs, comma-separated.")
        var sizes = "1920x1080,1280x720"

        @Option(help: "JPEG quality of the test JPEGs (libjpeg-turbo's compressor).")
        var quality: Int32 = 85

        func run() throws {
            try common.checkOptimized()
            let frameSizes = try sizes.split(separator: ",").map { text -> Size in
                guard let size = Size(parsing: String(text)) else { throw ValidationError("bad size '\(text)'") }
                return size
            }
            let benchmark = MJPEGScaledBenchmark(sizes: frameSizes, quality: quality, rounds: timing.rounds,
                                                 batchNanoseconds: UInt64(timing.batchMilliseconds * 1e6))
            let rows = try benchmark.run(progress: common.progress)
            common.report("MJPEG decoded at the size asked for (thread CPU time per frame, median of \(timing.rounds) interleaved rounds)",
                          rows, table: MJPEGScaledBenchmark.table(rows))
        }
    }

    struct CaptureCPU: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "capture",
            abstract: "CPU per delivered frame of `mediadevices capture` vs v4l2-ctl, ffmpeg and gst-launch-1.0 on the same device, YUYV or MJPEG decoded (run in the rig).")

        @OptionGroup var common: Common

        @OptionGroup var stream: Stream.Options

        @Option(help: "Frames each tool streams.")
        var frames = 400

        @Option(help: "The steady-state window, in seconds after each tool starts: FROM,TO.")
        var window = "6,14"

        @Option(help: "Measure CPU per frame as a run of --frames less a run of this many frames, over the frames between, instead of in the --window: for streams the tools cannot keep up with (MJPEG decoding under emulation), where a frame costs far more than start-up varies.")
        var baselineFrames: Int?

        @Option(help: "What the converting rows convert to (NV12, I420, ARGB); with --format MJPG every row of ours decodes to it.")
        var outputFormat = "NV12"

        @Option(help: "Scale the converting rows (and gst-launch-1.0's and ffmpeg's pipelines) to WxH; with --format MJPG a row of ours then decodes whole, for reference.")
        var outputSize: String?

        @Option(help: "Times to repeat every run (the least CPU is reported: noise only adds).")
        var repeats = 1

        @Option(help: "A writable directory (GStreamer's registry, the tools' log).")
        var workDirectory = "/tmp/mediadevices-benchmark"

        @Option(help: "Measure only the rows whose name contains one of these, comma-separated (e.g. \"callback only,executor only,gst\"; a row's whole name selects that row alone); ratios need their reference rows.")
        var only: String?

        func run() throws {
            try common.checkOptimized()
            let frameSize = try stream.frameSize()
            let pixelFormat = try stream.pixelFormat()
            guard let output = OutputFormat.pixelFormat(parsing: outputFormat) else {
                throw ValidationError("--output-format takes NV12, I420 or ARGB")
            }
            guard repeats > 0 else { throw ValidationError("--repeats takes at least 1") }
            let scaledTo = try BenchmarkCommand.outputSize(outputSize)
            let method: CaptureCPUBenchmark.Method
            if let baselineFrames {
                guard baselineFrames > 0, baselineFrames < frames else { throw ValidationError("--baseline-frames takes 1 to --frames - 1") }
                method = .difference(baselineFrames: baselineFrames)
            } else {
                let bounds = window.split(separator: ",").compactMap { Double($0) }
                guard bounds.count == 2, bounds[0] >= 0, bounds[1] > bounds[0] else {
                    throw ValidationError("--window takes FROM,TO seconds (FROM < TO)")
                }
                guard Double(frames) / Double(stream.fps) > bounds[1] + 1 else {
                    throw ValidationError("\(frames) frames at \(stream.fps) fps end before the window does: raise --frames")
                }
                method = .window(from: bounds[0], to: bounds[1])
            }
            let benchmark = CaptureCPUBenchmark(device: stream.device, width: frameSize.width, height: frameSize.height, fps: stream.fps,
                                                frames: frames, pixelFormat: pixelFormat, output: output, outputSize: scaledTo, method: method,
                                                repeats: repeats, workDirectory: workDirectory,
                                                only: only?.split(separator: ",").map(String.init) ?? [])
            let rows = try benchmark.run(progress: common.progress)
            common.report(benchmark.title, rows, table: benchmark.table(rows))
        }
    }

    /// `--frames`, `--window` and `--rounds`: runs of a fixed number of frames measured in a
    /// steady-state window before their end (`ProcessCPU.runSampledBeforeEnd`), every row once a round.
    struct SteadyStateRuns: ParsableArguments {
        @Option(help: "Frames each run streams (longer than the window and the time before the end).")
        var frames = 250

        @Option(help: "The steady-state window: LENGTH,BEFORE-END seconds (the window ends BEFORE-END seconds before each run does).")
        var window = "6,2"

        @Option(help: "Rounds (every row once per round).")
        var rounds = 2

        /// The window as (length, before the end), checked against the runs' length at `fps`.
        func window(fps: Int) throws -> (length: Double, beforeEnd: Double) {
            let bounds = window.split(separator: ",").compactMap { Double($0) }
            guard bounds.count == 2, bounds[0] > 0, bounds[1] >= 0, rounds > 0 else {
                throw ValidationError("--window takes LENGTH,BEFORE-END seconds, --rounds at least 1")
            }
            guard Double(frames) / Double(fps) > bounds[0] + bounds[1] + 1 else {
                throw ValidationError("\(frames) frames at \(fps) fps end before the window does: raise --frames")
            }
            return (bounds[0], bounds[1])
        }
    }

    struct PipeWireCamera: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "pipewire",
            abstract: "CPU per delivered frame of a camera through its PipeWire node vs gst-launch-1.0 pipewiresrc on the node and vs our direct V4L2 path (run in the rig, in a camera session).")

        @OptionGroup var common: Common

        @Option(help: "The V4L2 node WirePlumber's node wraps.")
        var device: String

        @Option(help: "The PipeWire node's object.serial (default: the node PipeWire lists for --device).")
        var serial: UInt64?

        @Option(help: "The PipeWire node's global id, for pipewiresrc path= (default: the node PipeWire lists for --device).")
        var node: UInt32?

        @Option(help: "Frame size (YUYV).")
        var size = "640x480"

        @Option(help: "Frame rate.")
        var fps = 25

        @OptionGroup var runs: SteadyStateRuns

        @Option(help: "A writable directory (GStreamer's registry, the tools' log).")
        var workDirectory = "/tmp/mediadevices-benchmark"

        func run() throws {
            try common.checkOptimized()
            guard let frameSize = Size(parsing: size) else { throw ValidationError("bad size '\(size)'") }
            let bounds = try runs.window(fps: fps)
            let (frames, rounds) = (runs.frames, runs.rounds)
            var (serial, node) = (serial, node)
            if serial == nil || node == nil {
                let discovery = CaptureDevice.scan(backends: [.pipewire])
                guard let listed = discovery.devices.first(where: { $0.path == device })?.pipeWireNodes.first else {
                    throw BenchmarkError("PipeWire lists no node for \(device): \(discovery.problems.map(\.description).joined(separator: "; "))")
                }
                (serial, node) = (serial ?? listed.serial, node ?? listed.id)
            }
            let benchmark = PipeWireCameraBenchmark(device: device, serial: serial!, nodeID: node!, width: frameSize.width, height: frameSize.height,
                                                    fps: fps, frames: frames, window: bounds, rounds: rounds,
                                                    workDirectory: workDirectory)
            let (rows, notes) = try benchmark.run(progress: common.progress)
            for note in notes { common.progress(note) }
            common.report(benchmark.title, rows, table: PipeWireCameraBenchmark.table(rows))
        }
    }

    struct Latency: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Capture delay and delivery latency (driver timestamp → callback / sequence reader): p50, p99 (run in the rig).")

        @OptionGroup var common: Common

        @OptionGroup var stream: Stream.Options

        @Option(help: "Frames measured (after the warm-up).")
        var frames = 300

        @Option(help: "Frames left out at the start.")
        var warmUp = 10

        func run() throws {
            try common.checkOptimized()
            let frameSize = try stream.frameSize()
            guard try stream.pixelFormat() == .yuyv else { throw ValidationError("latency measures a YUYV stream (--format YUYV)") }
            let benchmark = LatencyBenchmark(device: stream.device, width: frameSize.width, height: frameSize.height, fps: stream.fps,
                                             frames: frames, warmUpFrames: warmUp)
            let rows = try benchmark.run(progress: common.progress)
            common.report("Latency, \(stream.device) YUYV \(stream.size) @ \(stream.fps) fps, \(frames) frames", rows, table: LatencyBenchmark.table(rows))
        }
    }

    struct Stream: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Stream N frames from a camera to nothing (the library's own cost; `capture` runs it).",
            shouldDisplay: false)

        /// The camera stream the rig parts measure: a V4L2 node streaming YUYV (or MJPEG) at a size and rate.
        struct Options: ParsableArguments {
            @Option(help: "The camera: a V4L2 capture node, or pipewire:SERIAL (its PipeWire node; `stream` only).")
            var device: String

            @Option(help: "Pixel format the camera streams: YUYV, or MJPG (`capture` then measures decoding).")
            var format = "YUYV"

            @Option(help: "Frame size.")
            var size = "640x480"

            @Option(help: "Frame rate.")
            var fps = 25

            /// The frame size, parsed.
            func frameSize() throws -> Size {
                guard let frameSize = Size(parsing: size) else { throw ValidationError("bad size '\(size)'") }
                return frameSize
            }

            /// The pixel format, parsed: YUYV or MJPEG.
            func pixelFormat() throws -> PixelFormat {
                guard let pixelFormat = PixelFormat(named: format), pixelFormat == .yuyv || pixelFormat == .mjpeg else {
                    throw ValidationError("--format takes YUYV or MJPG")
                }
                return pixelFormat
            }
        }

        @OptionGroup var common: Common

        @OptionGroup var stream: Stream.Options

        @Option(help: "Frames to receive.")
        var frames = 100

        @Option(help: "callback (zero-copy consumer), sequence (leased frames, global executor), executor (leased frames read on the capture thread), converted (a --output-format sequence, read on the capture thread) or callback-converted (a ConvertingConsumer to --output-format).")
        var path = "callback"

        @Option(help: "What the converted and callback-converted paths convert to (NV12, I420, ARGB).")
        var outputFormat = "NV12"

        @Option(help: "The size the converted and callback-converted paths scale to (WxH).")
        var outputSize: String?

        @Flag(help: "Decode each MJPEG frame whole, then scale (no reduced-size decode in the IDCT).")
        var jpegWholeDecode = false

        func run() throws {
            let frameSize = try stream.frameSize()
            guard let streamPath = StreamOnly.Path(rawValue: path) else { throw ValidationError("--path is callback, sequence, executor, converted or callback-converted") }
            guard let output = OutputFormat.pixelFormat(parsing: outputFormat) else { throw ValidationError("--output-format takes NV12, I420 or ARGB") }
            let scaledTo = try BenchmarkCommand.outputSize(outputSize)
            try StreamOnly(device: stream.device, width: frameSize.width, height: frameSize.height, fps: stream.fps, frames: frames,
                           path: streamPath, pixelFormat: try stream.pixelFormat(), output: output, outputSize: scaledTo,
                           wholeDecode: jpegWholeDecode).run()
        }
    }
}
