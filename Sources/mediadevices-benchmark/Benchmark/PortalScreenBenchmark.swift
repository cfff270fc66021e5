import Foundation
import Glibc
import MediaDevices
import MediaDevicesCommandLine
import Synchronization

/// `mediadevices-benchmark screen` on a portal screen: CPU time (user + system, all threads) per delivered
/// frame while the shared screen changes all the time, ours against `gst-launch-1.0
/// pipewiresrc` reading the same portal stream in the same run, raw and converted to the same
/// format. Both sides are PipeWire consumers of
/// the compositor's stream (memfd buffers), so only the clients are compared. Ours is the
/// process's CPU over a window of capture at 60 fps pacing (above the picture's rate, so every
/// new picture is taken; the capture thread wakes when the compositor sends one) divided by the
/// frames delivered, the least of `repeats`; GStreamer's
/// is its CPU for `frames` + 10 buffers less its CPU for 10 (start-up cancels), the least of
/// `repeats`, each run on its own portal session (`PortalScreenCast`, the remote handed to
/// `pipewiresrc fd=0`).
struct PortalScreenBenchmark {
    var screen: Screen
    var frames: Int
    var output: OutputFormat
    var runsGStreamer: Bool
    var repeats = 3
    var log = "/tmp/mediadevices-portal-benchmark.log"

    /// One comparison: our CPU and GStreamer's per frame, in milliseconds, and their ratio.
    struct Row: Encodable {
        var what: String
        var oursMilliseconds: Double
        var oursFrames: Int
        /// Deadlines in our window that passed with no new picture (counted, not grabbed: the
        /// capture thread sleeps until the compositor sends one).
        var oursUnchangedGrabs: Int
        var gstreamerMilliseconds: Double?
        var ratioToGStreamer: Double?
        var gstreamerCommand: String
        var gstreamerError: String?
    }

    struct Figures: Encodable {
        var screen: String
        var width: Int
        var height: Int
        var rows: [Row]
        /// The `frames()` sequence on the capture executor against the callback (set by the command).
        var sequence: SequenceBenchmark.Figures? = nil
    }

    /// Counts frames and converts each when given a converter (on the capture thread); signals
    /// `reached` at the `target`-th (the main thread sleeps on it: no polling in the figure).
    // @unchecked Sendable: the counters are atomics; `converter` is used only in `consumeFrame`, on the capture thread.
    private final class Consumer: VideoFrameConsumer, @unchecked Sendable {
        let converter: FrameConverter?
        let delivered = Atomic<Int>(0)
        let target = Atomic<Int>(.max)
        let reached = DispatchSemaphore(value: 0)
        init(converter: FrameConverter?) { self.converter = converter }
        func consumeFrame(_ frame: VideoFrame) {
            if let converter { try? converter.convert(frame) { _ in } }
            if delivered.add(1, ordering: .relaxed).newValue == target.load(ordering: .relaxed) { reached.signal() }
        }
    }

    func run() throws -> Figures {
        let source = ScreenSource(screen: screen, frameRate: FrameRate(60))
        defer { source.release() }
        try source.initialize()
        guard let size = source.captureSettings?.format.size else { throw BenchmarkError("\(screen.uniqueID) gave no format") }
        let raw = try ourCPU(source, converter: nil)
        let converted = try ourCPU(source, converter: try FrameConverter(output: output, device: screen.uniqueID))
        source.release()
        let caps = ["NV12": "NV12", "YU12": "I420"][output.pixelFormat.name] ?? "BGRA"
        let rows = [
            row("grab (raw BGRx)", ours: raw, pipeline: ["!", "video/x-raw,format=BGRx", "!", "fakesink"]),
            row("grab + \(output.pixelFormat.name)", ours: converted,
                pipeline: ["!", "video/x-raw,format=BGRx", "!", "videoconvert", "!", "video/x-raw,format=\(caps)", "!", "fakesink"]),
        ]
        return Figures(screen: screen.uniqueID, width: size.width, height: size.height, rows: rows)
    }

    /// Our process's CPU per delivered frame over `frames` frames of capture (after a second of
    /// warm-up), in ms, and how many frames that was: the least of `repeats`.
    private func ourCPU(_ source: ScreenSource, converter: FrameConverter?) throws -> Ours {
        var best = Ours(milliseconds: .infinity, frames: 0, unchanged: 0)
        for _ in 0..<repeats {
            let consumer = Consumer(converter: converter)
            source.consumer = consumer
            try source.start()
            defer { source.stop(); source.consumer = nil }
            usleep(1_000_000)
            let (cpu, count, unchanged) = (ProcessCPU.cpuNanoseconds(of: getpid()) ?? 0, consumer.delivered.load(ordering: .relaxed),
                                           source.statistics.unchangedFrames)
            consumer.target.store(count + frames, ordering: .relaxed)
            if consumer.delivered.load(ordering: .relaxed) < count + frames, consumer.reached.wait(timeout: .now() + 60) == .timedOut {
                throw BenchmarkError("fewer than \(frames) new pictures in 60 s: is the screen changing (scripts/wayland-session.sh animate)?")
            }
            let (cpuAfter, countAfter, unchangedAfter) = (ProcessCPU.cpuNanoseconds(of: getpid()) ?? 0,
                                                          consumer.delivered.load(ordering: .relaxed), source.statistics.unchangedFrames)
            let perFrame = (cpuAfter - cpu) / 1e6 / Double(countAfter - count)
            if perFrame < best.milliseconds { best = Ours(milliseconds: perFrame, frames: countAfter - count, unchanged: unchangedAfter - unchanged) }
        }
        return best
    }

    /// Our figure: CPU per delivered frame, the frames and the unchanged grabs of the window.
    private struct Ours {
        var milliseconds: Double
        var frames: Int
        var unchanged: Int
    }

    private func row(_ what: String, ours: Ours, pipeline: [String]) -> Row {
        let command = (["gst-launch-1.0", "pipewiresrc", "fd=FD", "path=NODE", "num-buffers=N"] + pipeline).joined(separator: " ")
        guard runsGStreamer else {
            return Row(what: what, oursMilliseconds: ours.milliseconds, oursFrames: ours.frames, oursUnchangedGrabs: ours.unchanged, gstreamerCommand: command, gstreamerError: "skipped")
        }
        do {
            let theirs = try gstreamerCPU(pipeline)
            return Row(what: what, oursMilliseconds: ours.milliseconds, oursFrames: ours.frames, oursUnchangedGrabs: ours.unchanged, gstreamerMilliseconds: theirs,
                       ratioToGStreamer: ours.milliseconds / theirs, gstreamerCommand: command)
        } catch {
            return Row(what: what, oursMilliseconds: ours.milliseconds, oursFrames: ours.frames, oursUnchangedGrabs: ours.unchanged, gstreamerCommand: command,
                       gstreamerError: "\(error)")
        }
    }

    /// GStreamer's CPU per buffer, in ms: `frames` + 10 buffers less 10, the least of `repeats`
    /// each, each on a new portal session handed to it as its standard input.
    private func gstreamerCPU(_ pipeline: [String]) throws -> Double {
        func least(_ count: Int) throws -> Double {
            var best = Double.infinity
            for _ in 0..<repeats {
                let cast = try PortalScreenCast(screen: screen)
                defer { cast.close() }
                let usage = try ProcessCPU.run(["gst-launch-1.0", "-q", "pipewiresrc", "fd=0", "path=\(cast.nodeID)", "num-buffers=\(count)"]
                                               + pipeline, log: log, standardInput: cast.pipeWireRemote.rawValue)
                guard usage.status == 0 else { throw BenchmarkError("gst-launch-1.0 exited with status \(usage.status); see \(log)") }
                best = min(best, usage.cpuNanoseconds)
            }
            return best
        }
        let base = try least(10)
        return max(try least(frames + 10) - base, 0) / 1e6 / Double(frames)
    }
}
