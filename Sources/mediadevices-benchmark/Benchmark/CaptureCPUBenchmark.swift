import Foundation
import Glibc
import MediaDevices
import MediaDevicesCommandLine

/// Part 3: CPU time per delivered frame (user + system of the process) for `mediadevices capture`
/// and the field's tools, each streaming the same device at the same format and rate.
///
/// Every tool streams `frames` frames, a few times over; its CPU time (user + system, all
/// threads: the scheduler's run time from `/proc/PID/task/*/schedstat`) is read at two moments
/// in steady state, and the CPU per frame is the CPU between them over the frames the device
/// delivered between them (the wall time times the frame rate). Start-up (loading libraries,
/// opening the device, FFmpeg's probing, GStreamer's plugin scan) and teardown are outside the
/// window; the whole run's CPU over its frames is printed beside it. The least of the repeats
/// is reported: noise (other work on the machine, an emulated CPU descheduled by its host) only
/// adds. The ratios between rows are taken within each round of repeats (every row once, back
/// to back) and the median over the rounds is printed: under emulation the host's load moves a
/// row by up to 3x over minutes, and the rows of one round share most of it. Rows
/// "MediaDevices … only" stream through the library to nothing (`mediadevices-benchmark stream`), to show
/// what the library costs apart from `capture`'s queue copy and file writing.
///
/// An MJPEG stream (`pixelFormat` compressed) is measured decoded: our rows convert to `output`
/// (I420) — the library's converted `frames` sequence and `capture --output-format` — against
/// `gst-launch-1.0 … ! jpegdec idct-method=ifast ! fakesink` (libjpeg's fast IDCT, jpegdec's
/// default and ours) and `ffmpeg -input_format mjpeg … -f null -` (both decode); v4l2-ctl
/// streams the JPEGs undecoded, for scale. Where the tools cannot keep up with the stream
/// (decoding under emulation), frames delivered are not wall time × rate: the `.difference`
/// method then takes each tool's CPU for `frames` frames less its CPU for `baselineFrames`
/// frames (the least of the repeats each), over the frames between: start-up and teardown
/// cancel, and every tool handles exactly that many frames.
struct CaptureCPUBenchmark {
    struct Row: Encodable {
        var tool: String
        var command: String
        var frames: Int
        /// The steady-state window, in seconds after the start (the `.window` method).
        var window: [Double]?
        /// The shorter run's frames (the `.difference` method).
        var baselineFrames: Int?
        /// CPU per frame: in the window over the frames delivered in it, or the difference of the
        /// two runs over the frames between them (the least over the repeats).
        var cpuPerFrameNanoseconds: Double
        /// The whole run's CPU over its frames, start-up included (the least over the repeats).
        var cpuPerFrameWithStartupNanoseconds: Double
        /// Each repeat's CPU per frame in its window, in the order run (the `.window` method
        /// only): how far the host's load moved the row.
        var cpuPerFrameOfEachRunNanoseconds: [Double]?
        /// Frames over the whole run's wall time: the tool kept up (start-up makes it lower).
        var measuredFrameRate: Double
        /// Threads woken per frame in the window (voluntary context switches, all threads; the
        /// `.window` method only), from the run with the least CPU.
        var wakeUpsPerFrame: Double?
        /// Each thread's CPU and wake-ups per frame in the window (the `.window` method only):
        /// where the row's CPU goes, in the run with the least CPU and in each run.
        var threads: [ThreadRow]?
        /// CPU per frame over the callback path it is compared with (`callbackReference(for:)`).
        /// Every ratio is, with the window method, the median over the rounds of the ratio within
        /// each round (see `run`); with the difference method, the least over the least.
        var overCallback: Double?
        /// CPU per frame over our whole-picture decode then scale (`--output-size` MJPEG runs).
        var overWholeDecode: Double?
        var overV4L2Ctl: Double?
        var overFFmpeg: Double?
        var overGStreamer: Double?
        /// CPU per frame over `gst-launch-1.0 … ! filesink location=/dev/null` (undecoded streams):
        /// GStreamer writing every frame to a file, as `capture --output /dev/null` does.
        var overGStreamerFileSink: Double?
    }

    /// One thread of a row's process, per frame of its window.
    struct ThreadRow: Encodable {
        /// `main`, the thread's name (the capture thread's is set by the library), or `unnamed N`.
        var thread: String
        var cpuPerFrameNanoseconds: Double
        var wakeUpsPerFrame: Double
        /// The thread started inside the window.
        var startedInWindow: Bool
        /// Its CPU per frame in each run, in the order run (0 in a run without it).
        var cpuPerFrameOfEachRunNanoseconds: [Double] = []
    }

    /// How CPU per frame is measured (see the type's notes).
    enum Method {
        /// In the steady-state window FROM–TO seconds after the start, over wall time × rate.
        case window(from: Double, to: Double)
        /// The CPU of `frames` frames less that of this many, over the frames between.
        case difference(baselineFrames: Int)
    }

    var device: String
    var width: Int
    var height: Int
    var fps: Int
    var frames: Int
    /// What the device streams: YUYV, or MJPEG (then every row decodes).
    var pixelFormat: PixelFormat = .yuyv
    /// What the converting rows convert to.
    var output: PixelFormat = .nv12
    /// The size the converting rows (and GStreamer's and FFmpeg's pipelines) scale to; `nil`
    /// keeps the stream's.
    var outputSize: Size?
    var method: Method
    var repeats: Int
    var workDirectory: String
    /// Only the rows whose name contains one of these, or is one of them (all rows when empty).
    var only: [String] = []

    /// Whether the stream is compressed: every row then decodes it (but v4l2-ctl's).
    var decodes: Bool { pixelFormat.isCompressed }

    /// The goals for our rows: (reference tool, most CPU per frame as a fraction of it). Decoding
    /// MJPEG to at most half its size (issue 39): 0.5x GStreamer's decode-then-scale and our own
    /// whole decode then scale, 0.4x at a quarter of the width or less.
    var goals: [(reference: String, limit: Double)] {
        if decodes, let outputSize, outputSize.width * 2 <= width, outputSize.height * 2 <= height {
            let limit = outputSize.width * 4 <= width ? 0.4 : 0.5
            return [("gst-launch-1.0", limit), (wholeDecodeRow, limit)]
        }
        return decodes ? [("gst-launch-1.0", 0.8), ("ffmpeg", 0.5)] : [("v4l2-ctl", 1.2), ("ffmpeg", 0.3)]
    }

    /// What the converting rows convert to, as their names say it: `I420` or `I420 640x360`.
    var outputName: String {
        (output == .yu12 ? "I420" : output.name) + (outputSize.map { " \($0)" } ?? "")
    }

    /// The row decoding each JPEG whole and then scaling (`OutputFormat.jpegScaledDecoding`
    /// off): the library before issue 39, the reference for the scaled decode.
    var wholeDecodeRow: String { "MediaDevices whole decode only" + Self.converting(outputName) }

    /// GStreamer writing the frames to `/dev/null` (undecoded streams): the like-for-like peer of
    /// `mediadevices capture --output /dev/null`.
    static let gstFileSinkRow = "gst-launch-1.0 → filesink"
    /// The CLI's `capture` writing frames to a file against GStreamer doing the same (issue 39):
    /// at most 0.8× `gst-launch-1.0 v4l2src ! filesink location=/dev/null`.
    static let fileSinkGoal: (reference: String, limit: Double) = (gstFileSinkRow, 0.8)

    /// The leased frames' goals (issue 15), for the sequence rows and `capture`: against the
    /// callback path and GStreamer.
    static let leaseGoals: [(reference: String, limit: Double)] = [(callbackRow, 1.1), ("gst-launch-1.0", 0.7)]
    /// The row the lease goals compare the library's rows with.
    static let callbackRow = "MediaDevices callback only"
    /// The row the lease goals compare the CLI's rows with: its own callback path, doing the
    /// same writes.
    static let cliCallbackRow = "mediadevices capture --direct"
    /// What the rows converting to `output` add to their names.
    static func converting(_ output: String) -> String { " → \(output)" }

    /// The callback path `tool`'s row is compared with (÷ callback): the CLI's for the CLI, and
    /// for a converting row the callback path converting to the same output.
    static func callbackReference(for tool: String) -> String {
        let conversion = tool.range(of: " → ").map { String(tool[$0.lowerBound...]) } ?? ""
        return (tool.hasPrefix("mediadevices capture") ? cliCallbackRow : callbackRow) + conversion
    }
    /// The rows the lease goals apply to: the leased sequences and the default `capture`, or,
    /// when every row decodes (`decodes`), the converted sequence and `capture` converting.
    static func hasLeaseGoals(_ tool: String, decodes: Bool) -> Bool {
        if decodes { return tool.hasPrefix("MediaDevices converted only") || tool.hasPrefix("mediadevices capture → ") }
        return tool == "mediadevices capture" || tool == "MediaDevices sequence only" || tool == "MediaDevices executor only"
    }

    /// The tools, as argument lists for a stream of `frames` frames.
    func tools(includeConversion: Bool) -> [(name: String, arguments: (Int) -> [String])] {
        let me = ProcessCPU.ownExecutable, cli = ProcessCPU.commandLineTool
        let size = "\(width)x\(height)"
        let fourCC = pixelFormat.fourCC.description
        let outputFlag = output == .yu12 ? "I420" : output.name
        let sizeOptions = outputSize.map { ["--output-size", "\($0)"] } ?? []
        let stream = ["--format", fourCC, "--size", size, "--fps", "\(fps)"]
        func capture(_ options: [String]) -> (Int) -> [String] {
            { [cli, "capture", device] + stream + options
                + ["--frames", "\($0)", "--timeout", "\(StreamOnly.timeLimit(frames: $0, fps: fps))", "--output", "/dev/null"] }
        }
        var list: [(String, (Int) -> [String])] = []
        if !decodes {
            list += [("mediadevices capture", capture([])), ("mediadevices capture --off-thread", capture(["--off-thread"])),
                     ("mediadevices capture --direct", capture(["--direct"]))]
        }
        if includeConversion || decodes {
            list.append(("mediadevices capture" + Self.converting(outputName), capture(["--output-format", outputFlag] + sizeOptions)))
        }
        if decodes {
            list.append((Self.cliCallbackRow + Self.converting(outputName), capture(["--direct", "--output-format", outputFlag] + sizeOptions)))
        }
        for path in decodes ? [.callbackConverted, .converted] : StreamOnly.Path.allCases {
            let name = path == .callbackConverted ? Self.callbackRow + Self.converting(outputName)
                : "MediaDevices \(path.rawValue) only" + (path == .converted ? Self.converting(outputName) : "")
            list.append((name, { [me, "stream", "--device", device] + stream
                                 + ["--output-format", outputFlag, "--frames", "\($0)", "--path", path.rawValue] + sizeOptions }))
        }
        if decodes, outputSize != nil {
            list.append((wholeDecodeRow, { [me, "stream", "--device", device] + stream
                                           + ["--output-format", outputFlag, "--frames", "\($0)", "--path", "converted", "--jpeg-whole-decode"]
                                           + sizeOptions }))
        }
        // jpegdec's IDCT named (its default, ifast): the one our rows use (`JPEGDecoding.fast`).
        var gstCaps = decodes ? ["image/jpeg,width=\(width),height=\(height),framerate=\(fps)/1", "!", "jpegdec", "idct-method=ifast"]
                              : ["video/x-raw,format=YUY2,width=\(width),height=\(height),framerate=\(fps)/1"]
        // Scaled as the issue's reference pipeline does: the whole picture decoded, then videoscale.
        if let outputSize { gstCaps += ["!", "videoscale", "!", "video/x-raw,width=\(outputSize.width),height=\(outputSize.height)"] }
        let ffmpegScale = outputSize.map { ["-vf", "scale=\($0.width):\($0.height)"] } ?? []
        list += [
            ("v4l2-ctl", { ["v4l2-ctl", "-d", device, "--set-fmt-video=width=\(width),height=\(height),pixelformat=\(fourCC)",
                            "--set-parm=\(fps)", "--stream-mmap", "--stream-count=\($0)", "--stream-to=/dev/null"] }),
            ("ffmpeg", { ["ffmpeg", "-nostdin", "-hide_banner", "-loglevel", "error", "-f", "v4l2", "-input_format",
                          decodes ? "mjpeg" : "yuyv422",
                          "-video_size", size, "-framerate", "\(fps)", "-i", device, "-frames:v", "\($0)"] + ffmpegScale + ["-f", "null", "-"] }),
            ("gst-launch-1.0", { ["gst-launch-1.0", "-q", "v4l2src", "device=\(device)", "num-buffers=\($0)", "!"]
                                 + gstCaps + ["!", "fakesink"] }),
        ]
        if !decodes {
            list.append((Self.gstFileSinkRow, { ["gst-launch-1.0", "-q", "v4l2src", "device=\(device)", "num-buffers=\($0)", "!"]
                                                + gstCaps + ["!", "filesink", "location=/dev/null"] }))
        }
        return list
    }

    /// Whether this build's `capture` takes `--output-format` (the pipeline's CLI option).
    static func captureConverts() -> Bool {
        let log = NSTemporaryDirectory() + "mediadevices-capture-help.txt"
        unlink(log)
        guard (try? ProcessCPU.run([ProcessCPU.commandLineTool, "capture", "--help"], log: log)) != nil,
              let help = try? String(contentsOfFile: log, encoding: .utf8) else { return false }
        return help.contains("--output-format")
    }

    func run(progress: (String) -> Void) throws -> [Row] {
        try FileManager.default.createDirectory(atPath: workDirectory, withIntermediateDirectories: true)
        // GStreamer writes its plugin registry under HOME: give it a writable one, built once
        // (the first scan takes ~40 s under emulation) before anything is timed.
        setenv("GST_REGISTRY", workDirectory + "/gst-registry.bin", 1)
        if access(getenv("HOME").map { String(cString: $0) } ?? "/nonexistent", W_OK) != 0 { setenv("HOME", workDirectory, 1) }
        let log = workDirectory + "/tools.log"
        let all = tools(includeConversion: Self.captureConverts())
        // A whole row name selects that row alone ("mediadevices capture" is also the start of
        // the other capture rows); anything else selects every row containing it.
        let names = Set(all.map(\.name))
        let list = all.filter { tool in
            only.isEmpty || only.contains { $0 == tool.name || (!names.contains($0) && tool.name.contains($0)) }
        }
        guard !list.isEmpty else { throw BenchmarkError("--only \(only.joined(separator: ",")) matches no row") }
        // Warm-up: libraries into the page cache, GStreamer's registry, the device's first open.
        for tool in list {
            progress("warming up \(tool.name)")
            let usage = try ProcessCPU.run(tool.arguments(5), log: log)
            guard usage.status == 0 else { throw failure(tool.name, tool.arguments(5), usage.status, log) }
        }
        // Each tool's runs: the whole run's usage, the window's CPU and wall time (`.window`),
        // and the shorter runs' usage (`.difference`).
        typealias Run = (total: ProcessCPU.Usage, window: (cpu: Double, wall: Double, wakeUps: Double, threads: [ThreadCPU.Usage])?)
        var runs: [String: [Run]] = [:]
        var baselines: [String: [ProcessCPU.Usage]] = [:]
        func measure(_ tool: (name: String, arguments: (Int) -> [String]), _ count: Int, window: (from: Double, to: Double)?) throws -> Run {
            let arguments = tool.arguments(count)
            let result: Run
            if let window {
                let usage = try ProcessCPU.runSampled(arguments, log: log, windowStart: window.from, windowEnd: window.to)
                result = (usage.total, (usage.windowCPUNanoseconds, usage.windowWallNanoseconds, usage.windowWakeUps, usage.windowThreads))
            } else {
                result = (try ProcessCPU.run(arguments, log: log), nil)
            }
            guard result.total.status == 0 else { throw failure(tool.name, arguments, result.total.status, log) }
            return result
        }
        for repeat_ in 0..<repeats {
            for tool in list {
                progress("run \(repeat_ + 1)/\(repeats): \(tool.name), \(frames) frames")
                switch method {
                case .window(let from, let to):
                    runs[tool.name, default: []].append(try measure(tool, frames, window: (from, to)))
                case .difference(let baselineFrames):
                    runs[tool.name, default: []].append(try measure(tool, frames, window: nil))
                    progress("run \(repeat_ + 1)/\(repeats): \(tool.name), \(baselineFrames) frames")
                    baselines[tool.name, default: []].append(try measure(tool, baselineFrames, window: nil).total)
                }
            }
        }
        var rows: [Row] = list.map { tool in
            let toolRuns = runs[tool.name]!
            let whole = toolRuns.map(\.total.cpuNanoseconds).min()!
            let wall = toolRuns.map(\.total.wallNanoseconds).min()!
            var row = Row(tool: tool.name, command: tool.arguments(frames).joined(separator: " "), frames: frames,
                          cpuPerFrameNanoseconds: 0, cpuPerFrameWithStartupNanoseconds: whole / Double(frames),
                          measuredFrameRate: Double(frames) / (wall / 1e9))
            switch method {
            case .window(let from, let to):
                row.window = [from, to]
                let perFrame = toolRuns.compactMap(\.window).map { window in
                    let frames = window.wall / 1e9 * Double(fps)
                    return (cpu: window.cpu / frames, wakeUps: window.wakeUps / frames,
                            threads: window.threads.map { ThreadRow(thread: $0.thread, cpuPerFrameNanoseconds: $0.cpuNanoseconds / frames,
                                                                    wakeUpsPerFrame: $0.wakeUps / frames, startedInWindow: $0.startedInWindow) })
                }
                let least = perFrame.min { $0.cpu < $1.cpu }!
                row.cpuPerFrameNanoseconds = least.cpu
                row.cpuPerFrameOfEachRunNanoseconds = perFrame.map(\.cpu)
                row.wakeUpsPerFrame = least.wakeUps
                // Every thread of any run with its figure in each, so a run that cost more shows
                // which thread did (also one that only that run had).
                var labels: [String] = []
                for run in perFrame { for thread in run.threads where !labels.contains(thread.thread) { labels.append(thread.thread) } }
                row.threads = labels.map { label in
                    var thread = least.threads.first { $0.thread == label }
                        ?? ThreadRow(thread: label, cpuPerFrameNanoseconds: 0, wakeUpsPerFrame: 0, startedInWindow: false)
                    thread.cpuPerFrameOfEachRunNanoseconds = perFrame.map { run in
                        run.threads.first { $0.thread == label }?.cpuPerFrameNanoseconds ?? 0
                    }
                    return thread
                }
            case .difference(let baselineFrames):
                row.baselineFrames = baselineFrames
                let baseline = baselines[tool.name]!.map(\.cpuNanoseconds).min()!
                row.cpuPerFrameNanoseconds = (whole - baseline) / Double(frames - baselineFrames)
            }
            return row
        }
        // A row over its reference: with each run's figure (the window method), the median over
        // the rounds of the two rows' ratio within a round (the rows of a round run back to back,
        // so the host's load, which drifts over minutes, mostly cancels); else the least over the
        // least.
        func ratio(_ row: Row, _ reference: String) -> Double? {
            // A difference figure at or below zero is smaller than the runs' start-up noise
            // (v4l2-ctl's undecoded MJPEG stream): no ratio with it means anything.
            guard let other = rows.first(where: { $0.tool == reference }),
                  row.cpuPerFrameNanoseconds > 0, other.cpuPerFrameNanoseconds > 0 else { return nil }
            if let mine = row.cpuPerFrameOfEachRunNanoseconds, let theirs = other.cpuPerFrameOfEachRunNanoseconds,
               mine.count == theirs.count, !mine.isEmpty {
                return median(zip(mine, theirs).map { $0 / $1 }.sorted())
            }
            return row.cpuPerFrameNanoseconds / other.cpuPerFrameNanoseconds
        }
        for index in rows.indices {
            let row = rows[index]
            rows[index].overCallback = ratio(row, Self.callbackReference(for: row.tool))
            rows[index].overWholeDecode = row.tool == wholeDecodeRow ? nil : ratio(row, wholeDecodeRow)
            rows[index].overV4L2Ctl = ratio(row, "v4l2-ctl")
            rows[index].overFFmpeg = ratio(row, "ffmpeg")
            rows[index].overGStreamer = ratio(row, "gst-launch-1.0")
            rows[index].overGStreamerFileSink = row.tool == Self.gstFileSinkRow ? nil : ratio(row, Self.gstFileSinkRow)
        }
        return rows
    }

    private func failure(_ name: String, _ arguments: [String], _ status: Int32, _ log: String) -> BenchmarkError {
        let tail = ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").suffix(5).joined(separator: "\n")
        return BenchmarkError("\(name) exited with status \(status): \(arguments.joined(separator: " "))\n\(tail)")
    }

    /// The table's title: what was measured, and how.
    var title: String {
        let how: String
        switch method {
        case .window(let from, let to):
            how = "user+system, \(from)–\(to) s into each run, least of \(repeats); ratios: median over the rounds of each round's ratio"
        case .difference(let baselineFrames):
            how = "user+system of a \(frames)-frame run less a \(baselineFrames)-frame run, over the \(frames - baselineFrames) frames between, least of \(repeats) each"
        }
        var title = "Capture CPU per frame (\(how)), \(device) \(pixelFormat) \(width)x\(height) @ \(fps) fps"
        if decodes {
            if let outputSize {
                title += "\nScaled to \(outputSize): ours decoding at 1/2, 1/4 or 1/8 in libjpeg-turbo's IDCT where the size allows"
                    + " (`whole decode only`: the whole picture decoded, then scaled by libyuv); gst-launch-1.0 through jpegdec ! videoscale,"
                    + " ffmpeg through -vf scale"
            }
            title += "\nDecoded to \(output == .yu12 ? "I420" : output.name): ours through the library's converted `frames(bufferSize:output:)` sequence"
                + " (`converted only`) and `mediadevices capture --output-format`; gst-launch-1.0 through jpegdec, ffmpeg through its"
                + " mjpeg decoder (both to the JPEG's own subsampling); v4l2-ctl streams the JPEGs undecoded"
                + "\nIDCT: libjpeg's fast integer one in ours (`JPEGDecoding.fast`, the default) and in jpegdec (`idct-method=ifast`, its default)"
            if let simd = getenv("JSIMD_FORCESSE2").map({ String(cString: $0) }), simd == "1" {
                title += "\nlibjpeg-turbo held to SSE2 (JSIMD_FORCESSE2=1) in ours and in jpegdec alike"
            }
        }
        return title
    }

    func table(_ rows: [Row]) -> String {
        func short(_ reference: String) -> String {
            reference == "gst-launch-1.0" ? "gst" : reference == Self.gstFileSinkRow ? "gst filesink" : reference.hasPrefix(Self.callbackRow) ? "callback"
                : reference == wholeDecodeRow ? "whole decode" : reference
        }
        func callbackMark(_ tool: String, _ limit: Double, _ ratio: Double?) -> String {
            "\(Self.callbackReference(for: tool).hasPrefix(Self.callbackRow) ? "callback" : "--direct") " + goalMark(ratio ?? .infinity, limit)
        }
        func describe(_ goals: [(reference: String, limit: Double)]) -> String {
            goals.map { String(format: "≤%g× %@", $0.limit, short($0.reference)) }.joined(separator: ", ")
        }
        func mark(_ goal: (reference: String, limit: Double), _ ratios: [String: Double?]) -> String {
            "\(short(goal.reference)) " + goalMark(ratios[goal.reference].flatMap { $0 } ?? .infinity, goal.limit)
        }
        let leaseGoalText = "; \(decodes ? "converted sequence, capture" : "leased (sequence, executor, capture)"): \(describe(Self.leaseGoals))"
        let fileSinkGoalText = decodes ? "" : "; capture: \(describe([Self.fileSinkGoal]))"
        var table = BenchmarkTable("tool", "CPU/frame", "each run", "with start-up", "fps", "wake-ups/frame", "÷ v4l2-ctl", "÷ ffmpeg", "÷ gst",
                                   "÷ gst filesink", "÷ callback (CLI: ÷ --direct)", "÷ whole decode",
                                   "goals (\(describe(goals))\(leaseGoalText)\(fileSinkGoalText))")
        for row in rows {
            let ratios = ["v4l2-ctl": row.overV4L2Ctl, "ffmpeg": row.overFFmpeg, "gst-launch-1.0": row.overGStreamer,
                          Self.gstFileSinkRow: row.overGStreamerFileSink,
                          Self.callbackRow: row.overCallback, wholeDecodeRow: row.overWholeDecode]
            let ours = (row.tool.hasPrefix("mediadevices capture") || (decodes && row.tool.hasPrefix("MediaDevices"))) && row.tool != wholeDecodeRow
            var marks = ours ? goals.map { mark($0, ratios) } : []
            if Self.hasLeaseGoals(row.tool, decodes: decodes) {
                marks += Self.leaseGoals.map { $0.reference == Self.callbackRow ? callbackMark(row.tool, $0.limit, row.overCallback) : mark($0, ratios) }
            }
            if !decodes, row.tool == "mediadevices capture" { marks.append(mark(Self.fileSinkGoal, ratios)) }
            table.add(row.tool, row.cpuPerFrameNanoseconds > 0 ? formatDuration(row.cpuPerFrameNanoseconds) : "< noise",
                      row.cpuPerFrameOfEachRunNanoseconds.map { $0.map(formatDuration).joined(separator: " / ") } ?? "–",
                      formatDuration(row.cpuPerFrameWithStartupNanoseconds),
                      String(format: "%.1f", row.measuredFrameRate), row.wakeUpsPerFrame.map { String(format: "%.2f", $0) } ?? "–",
                      formatRatio(row.overV4L2Ctl ?? .nan), formatRatio(row.overFFmpeg ?? .nan), formatRatio(row.overGStreamer ?? .nan),
                      formatRatio(row.overGStreamerFileSink ?? .nan), formatRatio(row.overCallback ?? .nan), formatRatio(row.overWholeDecode ?? .nan), marks.joined(separator: ", "))
        }
        return table.text + threadTable(rows)
    }

    /// Each of our rows' threads, per frame (the run with the least CPU, and every run's CPU):
    /// which thread the CPU and the wake-ups go to. Threads that used no CPU in any window are
    /// left out.
    func threadTable(_ rows: [Row]) -> String {
        var table = BenchmarkTable("tool", "thread", "CPU/frame", "each run", "wake-ups/frame")
        for row in rows where row.tool.lowercased().hasPrefix("mediadevices") {
            for thread in row.threads ?? [] where thread.cpuPerFrameOfEachRunNanoseconds.contains(where: { $0 > 0 }) {
                table.add(row.tool, thread.thread + (thread.startedInWindow ? " (started in the window)" : ""),
                          formatDuration(thread.cpuPerFrameNanoseconds),
                          thread.cpuPerFrameOfEachRunNanoseconds.map(formatDuration).joined(separator: " / "),
                          String(format: "%.2f", thread.wakeUpsPerFrame))
            }
        }
        return table.rows.isEmpty ? "" : "\n\nPer thread (/proc/PID/task/*: schedstat run time, voluntary switches), in the window;"
            + " libdispatch's threads carry the end of their root queue's name (Linux keeps 15 characters):"
            + " `oot.default-qos` (com.apple.root.default-qos) runs Swift's global executor's jobs,"
            + " `-qos.overcommit` (com.apple.root.default-qos.overcommit) libdispatch's own work:\n" + table.text
    }
}
