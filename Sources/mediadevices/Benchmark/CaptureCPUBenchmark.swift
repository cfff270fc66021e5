import Foundation
import Glibc

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
/// adds. Rows "MediaDevices … only" stream through the library to nothing (`benchmark stream`),
/// to show what the library costs apart from `capture`'s queue copy and file writing.
struct CaptureCPUBenchmark {
    struct Row: Encodable {
        var tool: String
        var command: String
        var frames: Int
        /// The steady-state window, in seconds after the start.
        var window: [Double]
        /// CPU in the window over the frames delivered in it (the least over the repeats).
        var cpuPerFrameNanoseconds: Double
        /// The whole run's CPU over its frames, start-up included (the least over the repeats).
        var cpuPerFrameWithStartupNanoseconds: Double
        /// Frames over the whole run's wall time: the tool kept up (start-up makes it lower).
        var measuredFrameRate: Double
        var overV4L2Ctl: Double?
        var overFFmpeg: Double?
    }

    var device: String
    var width: Int
    var height: Int
    var fps: Int
    var frames: Int
    var windowStart: Double
    var windowEnd: Double
    var repeats: Int
    var workDirectory: String

    /// The tools, as argument lists for a stream of `frames` frames.
    func tools(includeConversion: Bool) -> [(name: String, arguments: (Int) -> [String])] {
        let me = ProcessCPU.ownExecutable
        let size = "\(width)x\(height)"
        var list: [(String, (Int) -> [String])] = [
            ("mediadevices capture", { [me, "capture", device, "--format", "YUYV", "--size", size, "--fps", "\(fps)",
                                        "--frames", "\($0)", "--output", "/dev/null"] }),
            ("mediadevices capture --direct", { [me, "capture", device, "--format", "YUYV", "--size", size, "--fps", "\(fps)",
                                                 "--direct", "--frames", "\($0)", "--output", "/dev/null"] }),
        ]
        if includeConversion {
            list.append(("mediadevices capture → NV12", { [me, "capture", device, "--format", "YUYV", "--size", size, "--fps", "\(fps)",
                                                           "--output-format", "NV12", "--frames", "\($0)", "--output", "/dev/null"] }))
        }
        for path in StreamOnly.Path.allCases {
            list.append(("MediaDevices \(path.rawValue) only", { [me, "benchmark", "stream", "--device", device, "--size", size, "--fps", "\(fps)",
                                                                  "--frames", "\($0)", "--path", path.rawValue] }))
        }
        list += [
            ("v4l2-ctl", { ["v4l2-ctl", "-d", device, "--set-fmt-video=width=\(width),height=\(height),pixelformat=YUYV",
                            "--set-parm=\(fps)", "--stream-mmap", "--stream-count=\($0)", "--stream-to=/dev/null"] }),
            ("ffmpeg", { ["ffmpeg", "-nostdin", "-hide_banner", "-loglevel", "error", "-f", "v4l2", "-input_format", "yuyv422",
                          "-video_size", size, "-framerate", "\(fps)", "-i", device, "-frames:v", "\($0)", "-f", "null", "-"] }),
            ("gst-launch-1.0", { ["gst-launch-1.0", "-q", "v4l2src", "device=\(device)", "num-buffers=\($0)", "!",
                                  "video/x-raw,format=YUY2,width=\(width),height=\(height),framerate=\(fps)/1", "!", "fakesink"] }),
        ]
        return list
    }

    /// Whether this build's `capture` takes `--output-format` (the pipeline's CLI option).
    static func captureConverts() -> Bool {
        let log = NSTemporaryDirectory() + "mediadevices-capture-help.txt"
        unlink(log)
        guard (try? ProcessCPU.run([ProcessCPU.ownExecutable, "capture", "--help"], log: log)) != nil,
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
        let list = tools(includeConversion: Self.captureConverts())
        // Warm-up: libraries into the page cache, GStreamer's registry, the device's first open.
        for tool in list {
            progress("warming up \(tool.name)")
            let usage = try ProcessCPU.run(tool.arguments(5), log: log)
            guard usage.status == 0 else { throw failure(tool.name, tool.arguments(5), usage.status, log) }
        }
        var samples: [String: [ProcessCPU.SampledUsage]] = [:]
        for repeat_ in 0..<repeats {
            for tool in list {
                progress("run \(repeat_ + 1)/\(repeats): \(tool.name), \(frames) frames")
                let usage = try ProcessCPU.runSampled(tool.arguments(frames), log: log, windowStart: windowStart, windowEnd: windowEnd)
                guard usage.total.status == 0 else { throw failure(tool.name, tool.arguments(frames), usage.total.status, log) }
                samples[tool.name, default: []].append(usage)
            }
        }
        var rows: [Row] = list.map { tool in
            let runs = samples[tool.name]!
            let perFrame = runs.map { $0.windowCPUNanoseconds / ($0.windowWallNanoseconds / 1e9 * Double(fps)) }.min()!
            let whole = runs.map(\.total.cpuNanoseconds).min()!
            let wall = runs.map(\.total.wallNanoseconds).min()!
            return Row(tool: tool.name, command: tool.arguments(frames).joined(separator: " "), frames: frames,
                       window: [windowStart, windowEnd], cpuPerFrameNanoseconds: perFrame,
                       cpuPerFrameWithStartupNanoseconds: whole / Double(frames),
                       measuredFrameRate: Double(frames) / (wall / 1e9))
        }
        let v4l2 = rows.first { $0.tool == "v4l2-ctl" }?.cpuPerFrameNanoseconds
        let ffmpeg = rows.first { $0.tool == "ffmpeg" }?.cpuPerFrameNanoseconds
        for index in rows.indices {
            rows[index].overV4L2Ctl = v4l2.map { rows[index].cpuPerFrameNanoseconds / $0 }
            rows[index].overFFmpeg = ffmpeg.map { rows[index].cpuPerFrameNanoseconds / $0 }
        }
        return rows
    }

    private func failure(_ name: String, _ arguments: [String], _ status: Int32, _ log: String) -> BenchmarkError {
        let tail = ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").suffix(5).joined(separator: "\n")
        return BenchmarkError("\(name) exited with status \(status): \(arguments.joined(separator: " "))\n\(tail)")
    }

    static func table(_ rows: [Row]) -> String {
        var table = BenchmarkTable("tool", "CPU/frame", "with start-up", "fps", "÷ v4l2-ctl", "÷ ffmpeg", "goals (≤1.2× v4l2-ctl, ≤0.3× ffmpeg)")
        for row in rows {
            let goals = row.tool.hasPrefix("mediadevices capture")
                ? "\(goalMark(row.overV4L2Ctl ?? .infinity, 1.2)), \(goalMark(row.overFFmpeg ?? .infinity, 0.3))" : ""
            table.add(row.tool, formatDuration(row.cpuPerFrameNanoseconds), formatDuration(row.cpuPerFrameWithStartupNanoseconds),
                      String(format: "%.1f", row.measuredFrameRate), formatRatio(row.overV4L2Ctl ?? .nan),
                      formatRatio(row.overFFmpeg ?? .nan), goals)
        }
        return table.text
    }
}
