import Foundation
import Glibc

/// Issue 54: CPU per frame to serve a camera on a v4l2loopback device to 1 and to 3 readers:
/// `mediadevices publish CAMERA --v4l2loopback DEVICE` against GStreamer
/// (`v4l2src ! <caps> ! v4l2sink`) and FFmpeg (`-f v4l2 … -c:v rawvideo -f v4l2 DEVICE`) writing
/// the same frames to the same device (goal: ours ≤ 0.7× the better of them).
///
/// Each row is the producer, a child process that streams the camera's own format (YUYV from
/// vivid: no conversion in any row) onto the loopback device for a fixed number of frames,
/// while 1 or 3 readers (`v4l2-ctl --stream-mmap`, each restarted until the producer's stream
/// lets it open the device: with `exclusive_caps=1` it is a capture device only while a
/// producer streams) read every frame. Only the producer's CPU counts (user + system, all
/// threads), in the window `window.length` seconds long that ends `window.beforeEnd` seconds
/// before the producer does, over the frames the camera delivered in it (window × rate). A
/// v4l2loopback producer writes each frame once whatever the number of readers (the module
/// copies it into its own buffers, which every reader maps), so the readers' count should not
/// move a producer's figure: the 3-reader rows show whether it does. The frames the readers
/// counted are reported, so a row whose readers read nothing says so. A row's figure is its
/// least over the rounds, a ratio the median over the rounds of the ratio within each round.
struct VirtualCameraBenchmark {
    struct Row: Encodable {
        var tool: String
        var readers: Int
        var command: String
        /// The steady-state window: its length, and how long before the run's end it ends (s).
        var window: [Double]
        /// The producer's CPU per frame in the window, the least over the rounds.
        var cpuPerFrameNanoseconds: Double
        /// CPU per frame of each round, in the order run.
        var cpuPerFrameOfEachRoundNanoseconds: [Double]
        /// Threads woken per frame in the window (voluntary context switches), in the round with the least CPU.
        var wakeUpsPerFrame: Double
        /// Frames each reader counted over the whole run, in the round with the least CPU.
        var framesRead: [Int]
        /// Over the better of the GStreamer and FFmpeg rows with the same number of readers (ours only).
        var overBestPeer: Double?
    }

    /// The camera (a V4L2 capture node).
    var device: String
    /// The v4l2loopback device written to.
    var loopback: String
    var width: Int
    var height: Int
    var fps: Int
    var frames: Int
    var window: (length: Double, beforeEnd: Double)
    var rounds: Int
    var readerCounts: [Int]
    var workDirectory: String
    /// A shell command run before each row, which leaves the loopback device as a fresh load of
    /// the module has it (ours sets its `keep_format`, so the device stays a camera after it
    /// quits, and GStreamer's `v4l2sink` refuses a device that is not an output).
    var reset: String?

    static let ours = "mediadevices publish --v4l2loopback"
    static let gstreamer = "gst-launch-1.0 v4l2src ! v4l2sink"
    static let ffmpeg = "ffmpeg -f v4l2 … -f v4l2"
    /// Ours over the better peer, at most.
    static let goal = 0.7

    var producers: [(name: String, arguments: [String])] {
        let size = "\(width)x\(height)"
        return [
            (Self.ours, [ProcessCPU.commandLineTool, "publish", device, "--v4l2loopback", loopback, "--format", "YUYV", "--size", size,
                         "--fps", "\(fps)", "--timeout", String(format: "%.1f", Double(frames) / Double(fps))]),
            (Self.gstreamer, ["gst-launch-1.0", "-q", "v4l2src", "device=\(device)", "num-buffers=\(frames)", "!",
                              "video/x-raw,format=YUY2,width=\(width),height=\(height),framerate=\(fps)/1", "!", "v4l2sink", "device=\(loopback)"]),
            (Self.ffmpeg, ["ffmpeg", "-nostdin", "-hide_banner", "-loglevel", "error", "-f", "v4l2", "-input_format", "yuyv422",
                           "-video_size", size, "-framerate", "\(fps)", "-i", device, "-frames:v", "\(frames)", "-c:v", "rawvideo",
                           "-f", "v4l2", loopback]),
        ]
    }

    func run(progress: (String) -> Void) throws -> [Row] {
        try FileManager.default.createDirectory(atPath: workDirectory, withIntermediateDirectories: true)
        setenv("GST_REGISTRY", workDirectory + "/gst-registry.bin", 1)
        let log = workDirectory + "/vcam-producers.log"
        typealias Figures = (perFrame: Double, wakeUps: Double, read: [Int])
        var figures: [String: [Figures]] = [:]
        for round in 0..<rounds {
            for readers in readerCounts {
                for producer in producers {
                    progress("round \(round + 1)/\(rounds): \(producer.name), \(readers) reader(s), \(frames) frames")
                    if let reset {
                        let status = try ProcessCPU.run(["/bin/sh", "-c", reset], log: log).status
                        guard status == 0 else { throw BenchmarkError("the reset command failed (status \(status)): \(reset)\n\(ProcessCPU.tail(of: log))") }
                    }
                    let group = try ReaderGroup(count: readers, device: loopback, directory: workDirectory)
                    let usage = try ProcessCPU.runSampledBeforeEnd(producer.arguments, log: log, length: window.length, beforeEnd: window.beforeEnd)
                    let read = group.stop()
                    guard usage.total.status == 0 else {
                        throw BenchmarkError("\(producer.name) exited with status \(usage.total.status): \(producer.arguments.joined(separator: " "))\n\(ProcessCPU.tail(of: log))")
                    }
                    let delivered = usage.windowWallNanoseconds / 1e9 * Double(fps)
                    figures["\(producer.name)/\(readers)", default: []].append((usage.windowCPUNanoseconds / delivered, usage.windowWakeUps / delivered, read))
                }
            }
        }
        var rows: [Row] = []
        for readers in readerCounts {
            func ratio(_ row: String, _ reference: String) -> Double? {
                guard let mine = figures["\(row)/\(readers)"], let theirs = figures["\(reference)/\(readers)"] else { return nil }
                return median(zip(mine, theirs).map { $0.perFrame / $1.perFrame }.sorted())
            }
            for producer in producers {
                let each = figures["\(producer.name)/\(readers)"]!, least = each.min { $0.perFrame < $1.perFrame }!
                let overBest = producer.name == Self.ours
                    ? [ratio(Self.ours, Self.gstreamer), ratio(Self.ours, Self.ffmpeg)].compactMap { $0 }.max() : nil
                rows.append(Row(tool: producer.name, readers: readers, command: producer.arguments.joined(separator: " "),
                                window: [window.length, window.beforeEnd], cpuPerFrameNanoseconds: least.perFrame,
                                cpuPerFrameOfEachRoundNanoseconds: each.map(\.perFrame), wakeUpsPerFrame: least.wakeUps,
                                framesRead: least.read, overBestPeer: overBest))
            }
        }
        return rows
    }

    var title: String {
        "v4l2loopback producer CPU per delivered frame (user+system of the producer, all threads, over \(window.length) s ending \(window.beforeEnd) s before the end of runs of"
            + " \(frames) frames, least of \(rounds) rounds; ratios: median over the rounds of each round's ratio), \(device) YUYV \(width)x\(height) @ \(fps) fps"
            + " onto \(loopback), read by v4l2-ctl --stream-mmap; the readers' own CPU is in no row"
    }

    static func table(_ rows: [Row]) -> String {
        var table = BenchmarkTable("producer", "readers", "CPU/frame", "each round", "wake-ups/frame", "frames read", "÷ better peer", "goal")
        for row in rows {
            let mark = row.overBestPeer.map { String(format: "≤%g× ", goal) + goalMark($0, goal) } ?? ""
            table.add(row.tool, "\(row.readers)", formatDuration(row.cpuPerFrameNanoseconds),
                      row.cpuPerFrameOfEachRoundNanoseconds.map(formatDuration).joined(separator: " / "),
                      String(format: "%.2f", row.wakeUpsPerFrame), row.framesRead.map(String.init).joined(separator: " "),
                      row.overBestPeer.map(formatRatio) ?? "-", mark)
        }
        return table.text
    }
}

/// Readers of a loopback device for the length of one row: each a shell loop that runs
/// `v4l2-ctl --stream-mmap` until it is stopped (the device opens for capture only once the
/// producer streams, and a reader's stream ends when the producer's does), its output (one `<`
/// a frame) in a file of its own.
private struct ReaderGroup {
    var shells: [pid_t] = []
    var logs: [String] = []

    init(count: Int, device: String, directory: String) throws {
        for index in 0..<count {
            let log = "\(directory)/vcam-reader-\(index).log"
            unlink(log)
            let script = "trap 'kill $c 2>/dev/null; exit 0' TERM; while :; do v4l2-ctl -d \(device) --stream-mmap --stream-to=/dev/null >>\(log) 2>&1 & c=$!; wait $c; sleep 0.1; done"
            var pid: pid_t = 0
            let shell: [String] = ["/bin/sh", "-c", script]
            let arguments = shell.map { strdup($0) } + [nil]
            defer { for argument in arguments { free(argument) } }
            let spawned = posix_spawn(&pid, "/bin/sh", nil, nil, arguments, environ)
            guard spawned == 0 else { throw BenchmarkError("cannot start a reader shell: \(String(cString: strerror(spawned)))") }
            shells.append(pid)
            logs.append(log)
        }
    }

    /// Stops every reader; the frames each counted.
    func stop() -> [Int] {
        for pid in shells {
            kill(pid, SIGTERM)
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        }
        return logs.map { log in
            ((try? Data(contentsOf: URL(fileURLWithPath: log))) ?? Data()).reduce(0) { $1 == UInt8(ascii: "<") ? $0 + 1 : $0 }
        }
    }
}
