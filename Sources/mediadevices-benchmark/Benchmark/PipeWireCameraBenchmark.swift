import Foundation
import Glibc

/// Issue 34: CPU per delivered frame of a camera read through its PipeWire node (a V4L2 camera
/// that WirePlumber's V4L2 monitor offers), against GStreamer's `pipewiresrc` on the same node
/// (goal ≤ 0.7×) and against our own direct V4L2 path on the same camera (goal ≤ 1.2×: the cost
/// of the PipeWire hop), and the frame sequence as the quick start reads it, on the source's
/// capture executor, against the callback through the same node (issue 52, goal ≤ 1.1×).
///
/// Every row is a child process that receives each frame and drops it: ours through a consumer
/// callback (`mediadevices-benchmark stream --path callback`, on `pipewire:SERIAL` or on the V4L2 node)
/// or a `frames()` reader on the capture executor (`--path executor`, on `pipewire:SERIAL`),
/// GStreamer into `fakesink`. CPU is the process's user + system time, all threads (the
/// scheduler's run times, `/proc/PID/task/*/schedstat`), sampled through the run; the window is
/// the `window.length` seconds that end `window.beforeEnd` seconds before the run does (each run
/// streams a fixed number of frames: loading, connecting and negotiating come before the window
/// however long they take, teardown after it), over the frames the camera delivered in it (wall
/// time × rate; the measured rate says whether the tool kept up). The PipeWire daemon's and WirePlumber's own CPU is in no row: every
/// PipeWire row shares it, and a direct V4L2 reader has none. Rounds run every row back to back;
/// a row's figure is its least over the rounds, a ratio the median over the rounds of the ratio
/// within each round.
struct PipeWireCameraBenchmark {
    struct Row: Encodable {
        var tool: String
        var command: String
        var frames: Int
        /// The steady-state window: its length, and how long before the run's end it ends (s).
        var window: [Double]
        /// CPU per frame in the window, the least over the rounds.
        var cpuPerFrameNanoseconds: Double
        /// CPU per frame of each round, in the order run.
        var cpuPerFrameOfEachRoundNanoseconds: [Double]
        /// The whole run's CPU over its frames, start-up included (the least).
        var cpuPerFrameWithStartupNanoseconds: Double
        /// Frames over the whole run's wall time (start-up makes it lower than the camera's rate).
        var measuredFrameRate: Double
        /// Threads woken per frame in the window (voluntary context switches, all threads), in
        /// the round with the least CPU.
        var wakeUpsPerFrame: Double
        /// Over the PipeWire reference row (GStreamer's `pipewiresrc`).
        var overPipewiresrc: Double?
        /// Over our direct V4L2 row.
        var overDirectV4L2: Double?
        /// Over our callback through PipeWire (the sequence row only).
        var overCallback: Double?
    }

    /// The V4L2 node the PipeWire node wraps.
    var device: String
    /// The PipeWire node's `object.serial` (our rows name it `pipewire:SERIAL`).
    var serial: UInt64
    /// The PipeWire node's global id (`pipewiresrc path=`).
    var nodeID: UInt32
    var width: Int
    var height: Int
    var fps: Int
    var frames: Int
    var window: (length: Double, beforeEnd: Double)
    var rounds: Int
    var workDirectory: String

    static let throughPipeWire = "MediaDevices through PipeWire (callback)"
    static let directV4L2 = "MediaDevices direct V4L2 (callback)"
    static let executorSequence = "MediaDevices through PipeWire (frames() on the capture executor)"
    static let pipewiresrc = "gst-launch-1.0 pipewiresrc"
    /// (row, reference, most CPU per frame as a fraction of the reference's).
    static let goals: [(row: String, reference: String, limit: Double)] = [(throughPipeWire, pipewiresrc, 0.7), (throughPipeWire, directV4L2, 1.2),
                                                                           (executorSequence, throughPipeWire, 1.1)]

    /// GStreamer's caps for the node's own format (no conversion), and the conversion to I420
    /// tried when `pipewiresrc` does not negotiate them.
    var gstFormats: [[String]] {
        [["video/x-raw,format=YUY2,width=\(width),height=\(height),framerate=\(fps)/1"],
         ["videoconvert", "!", "video/x-raw,format=I420"]]
    }

    func ourRow(_ device: String, path: String = "callback") -> (Int) -> [String] {
        { [ProcessCPU.ownExecutable, "stream", "--device", device, "--format", "YUYV", "--size", "\(width)x\(height)",
           "--fps", "\(fps)", "--frames", "\($0)", "--path", path] }
    }

    func gstRow(_ format: [String]) -> (Int) -> [String] {
        { ["gst-launch-1.0", "-q", "pipewiresrc", "path=\(nodeID)", "num-buffers=\($0)", "!"] + format + ["!", "fakesink"] }
    }

    /// The reference pipeline as its row says it: `! <caps> ! fakesink` when the node's format
    /// negotiates, else through videoconvert.
    static func gstName(_ format: [String]) -> String {
        pipewiresrc + " ! " + format.filter { $0 != "!" }.joined(separator: " ! ") + " ! fakesink"
    }

    func run(progress: (String) -> Void) throws -> (rows: [Row], notes: [String]) {
        try FileManager.default.createDirectory(atPath: workDirectory, withIntermediateDirectories: true)
        setenv("GST_REGISTRY", workDirectory + "/gst-registry.bin", 1)
        let log = workDirectory + "/pipewire-tools.log"
        var notes: [String] = []
        // No warm-up of our rows: their window ends before their end, however long their start
        // took. GStreamer's pipeline is tried first (which also builds its registry): the node's
        // format straight into fakesink if it negotiates.
        var tools: [(name: String, arguments: (Int) -> [String])] = [(Self.directV4L2, ourRow(device)),
                                                                     (Self.throughPipeWire, ourRow("pipewire:\(serial)")),
                                                                     (Self.executorSequence, ourRow("pipewire:\(serial)", path: "executor"))]
        var chosen: [String]?
        for format in gstFormats {
            progress("trying \(Self.gstName(format))")
            if let usage = try? ProcessCPU.run(gstRow(format)(5), log: log), usage.status == 0 { chosen = format; break }
            notes.append("\(Self.gstName(format)) did not run (status != 0; see \(log))")
        }
        guard let chosen else { throw BenchmarkError("gst-launch-1.0 pipewiresrc path=\(nodeID) ran with none of its pipelines: \(ProcessCPU.tail(of: log))") }
        tools.append((Self.gstName(chosen), gstRow(chosen)))
        typealias Figures = (perFrame: Double, whole: Double, wall: Double, wakeUps: Double)
        var figures: [String: [Figures]] = [:]
        for round in 0..<rounds {
            for tool in tools {
                progress("round \(round + 1)/\(rounds): \(tool.name), \(frames) frames")
                let usage = try sampled(tool, log: log)
                let delivered = usage.windowWallNanoseconds / 1e9 * Double(fps)
                figures[tool.name, default: []].append((usage.windowCPUNanoseconds / delivered, usage.total.cpuNanoseconds / Double(frames),
                                                        usage.total.wallNanoseconds, usage.windowWakeUps / delivered))
            }
        }
        let gstName = Self.gstName(chosen)
        func ratio(_ row: String, _ reference: String) -> Double? {
            guard let mine = figures[row], let theirs = figures[reference] else { return nil }
            return median(zip(mine, theirs).map { $0.perFrame / $1.perFrame }.sorted())
        }
        let rows = tools.map { tool in
            let each = figures[tool.name]!, least = each.min { $0.perFrame < $1.perFrame }!
            return Row(tool: tool.name, command: tool.arguments(frames).joined(separator: " "), frames: frames, window: [window.length, window.beforeEnd],
                       cpuPerFrameNanoseconds: least.perFrame, cpuPerFrameOfEachRoundNanoseconds: each.map(\.perFrame),
                       cpuPerFrameWithStartupNanoseconds: each.map(\.whole).min()!,
                       measuredFrameRate: Double(frames) / (each.map(\.wall).min()! / 1e9), wakeUpsPerFrame: least.wakeUps,
                       overPipewiresrc: tool.name == gstName ? nil : ratio(tool.name, gstName),
                       overDirectV4L2: tool.name == Self.directV4L2 ? nil : ratio(tool.name, Self.directV4L2),
                       overCallback: tool.name == Self.executorSequence ? ratio(tool.name, Self.throughPipeWire) : nil)
        }
        return (rows, notes)
    }

    /// One run of `tool` for `frames` frames, its CPU sampled in the window.
    private func sampled(_ tool: (name: String, arguments: (Int) -> [String]), log: String) throws -> ProcessCPU.SampledUsage {
        try retryingWhileBusy(tool, log: log) {
            let usage = try ProcessCPU.runSampledBeforeEnd(tool.arguments(frames), log: log, length: window.length, beforeEnd: window.beforeEnd)
            return (usage, usage.total.status)
        }
    }

    /// Runs `body` until its status is 0. The direct V4L2 row waits (up to 20 s, trying each
    /// second) while the camera is still busy: WirePlumber closes the device only once the node
    /// has been idle a few seconds after a PipeWire row. Any other failure throws.
    private func retryingWhileBusy<Result>(_ tool: (name: String, arguments: (Int) -> [String]), log: String,
                                           _ body: () throws -> (Result, Int32)) throws -> Result {
        for _ in 0..<20 {
            let start = (try? FileManager.default.attributesOfItem(atPath: log)[.size] as? Int) ?? 0
            let (result, status) = try body()
            if status == 0 { return result }
            let written = String(decoding: ((try? Data(contentsOf: URL(fileURLWithPath: log))) ?? Data()).dropFirst(start), as: UTF8.self)
            guard tool.name == Self.directV4L2, written.localizedCaseInsensitiveContains("busy") else {
                throw BenchmarkError("\(tool.name) exited with status \(status): \(tool.arguments(frames).joined(separator: " "))\n\(ProcessCPU.tail(of: log))")
            }
            sleep(1)
        }
        throw BenchmarkError("\(device) stayed busy for 20 s after the PipeWire rows: \(ProcessCPU.tail(of: log))")
    }

    var title: String {
        "PipeWire camera CPU per delivered frame (user+system of each process, all threads, over \(window.length) s ending \(window.beforeEnd) s before the end of runs of"
            + " \(frames) frames, least of \(rounds) rounds; ratios: median over the rounds of each round's ratio), \(device) as PipeWire node \(nodeID)"
            + " (serial \(serial)), YUYV \(width)x\(height) @ \(fps) fps; the daemons' own CPU is in no row"
    }

    static func table(_ rows: [Row]) -> String {
        var table = BenchmarkTable("tool", "CPU/frame", "each round", "with start-up", "fps", "wake-ups/frame", "÷ pipewiresrc", "÷ direct V4L2",
                                   "÷ callback", "goals")
        for row in rows {
            let marks = goals.filter { $0.row == row.tool }.map { goal in
                let (ratio, name) = switch goal.reference {
                case directV4L2: (row.overDirectV4L2, "V4L2")
                case throughPipeWire: (row.overCallback, "callback")
                default: (row.overPipewiresrc, "pipewiresrc")
                }
                return String(format: "≤%g× %@ ", goal.limit, name) + goalMark(ratio ?? .infinity, goal.limit)
            }
            table.add(row.tool, formatDuration(row.cpuPerFrameNanoseconds),
                      row.cpuPerFrameOfEachRoundNanoseconds.map(formatDuration).joined(separator: " / "),
                      formatDuration(row.cpuPerFrameWithStartupNanoseconds), String(format: "%.1f", row.measuredFrameRate),
                      String(format: "%.2f", row.wakeUpsPerFrame), formatRatio(row.overPipewiresrc ?? .nan),
                      formatRatio(row.overDirectV4L2 ?? .nan), row.overCallback.map(formatRatio) ?? "-", marks.joined(separator: ", "))
        }
        return table.text
    }
}
