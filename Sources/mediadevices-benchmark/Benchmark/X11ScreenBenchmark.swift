import Foundation
import Glibc
import MediaDevices
import MediaDevicesCommandLine

/// `mediadevices-benchmark screen` on an X11 screen: CPU time (user + system, all threads) per grabbed frame,
/// ours against `ffmpeg -f x11grab` grabbing the same rectangle of the same display in the same
/// run, raw and converted to the same format; and what a grab skipped by DAMAGE costs. Both
/// sides grab through MIT-SHM, so the X server's copy is the same and only the clients are
/// compared. ffmpeg's figure is its CPU for `frames` + 10 frames less its CPU for 10 (start-up
/// cancels), the least of `repeats` runs; ours is the process's CPU over `frames` grabs, the least
/// of `repeats`.
struct X11ScreenBenchmark {
    var screen: Screen
    var frames: Int
    var output: OutputFormat
    var runsFFmpeg: Bool
    var repeats = 3
    var log = "/tmp/mediadevices-x11-benchmark.log"

    /// One comparison: our CPU and ffmpeg's per frame, in milliseconds, and their ratio.
    struct Row: Encodable {
        var what: String
        var oursMilliseconds: Double
        var ffmpegMilliseconds: Double?
        var ratioToFFmpeg: Double?
        var ffmpegCommand: String
        var ffmpegError: String?
    }

    struct Figures: Encodable {
        var screen: String
        var width: Int
        var height: Int
        var frames: Int
        var rows: [Row]
        /// Deadlines of a still screen that passed with no DAMAGE, and our process's CPU per such
        /// deadline (the capture thread sleeps on the X connection, with a wake-up a second).
        var skippedGrabs: Int
        var cpuPerSkippedGrabMicroseconds: Double
        /// The `frames()` sequence on the capture executor against the callback (set by the command).
        var sequence: SequenceBenchmark.Figures? = nil
    }

    func run() throws -> Figures {
        let source = ScreenSource(screen: screen)
        defer { source.release() }
        try source.initialize()
        guard let size = source.captureSettings?.format.size, let frame = screen.frame else {
            throw BenchmarkError("\(screen.uniqueID) is not an X11 screen")
        }
        let converter = try FrameConverter(output: output, device: screen.uniqueID)
        _ = try source.grabFrame { try converter.convert($0) { _ in } }   // sizes the converter's buffers
        let raw = try ourCPU { _ = try source.grabFrame { $0.bytesUsed } }
        let converted = try ourCPU { try source.grabFrame { try converter.convert($0) { _ in } } }
        let pixelFormat = ["NV12": "nv12", "YU12": "yuv420p"][output.pixelFormat.name] ?? "bgra"
        let input = ["-f", "x11grab", "-draw_mouse", "0", "-framerate", "1000", "-video_size", "\(size.width)x\(size.height)",
                     "-i", "\(screen.card)+\(frame.x),\(frame.y)"]
        let rows = [
            row("grab (raw BGRx)", ours: raw, ffmpeg: input + ["-c:v", "rawvideo"]),
            row("grab + \(output.pixelFormat.name)", ours: converted, ffmpeg: input + ["-vf", "format=\(pixelFormat)", "-c:v", "rawvideo"]),
        ]
        let skipped = try skippedGrabCost()
        return Figures(screen: screen.uniqueID, width: size.width, height: size.height, frames: frames, rows: rows,
                       skippedGrabs: skipped.count, cpuPerSkippedGrabMicroseconds: skipped.microseconds)
    }

    /// Our process's CPU per call of `body` over `frames` calls, in ms (the least of `repeats`).
    private func ourCPU(_ body: () throws -> Void) throws -> Double {
        var best = Double.infinity
        for _ in 0..<repeats {
            let before = ProcessCPU.cpuNanoseconds(of: getpid()) ?? 0
            for _ in 0..<frames { try body() }
            let after = ProcessCPU.cpuNanoseconds(of: getpid()) ?? 0
            best = min(best, (after - before) / 1e6 / Double(frames))
        }
        return best
    }

    private func row(_ what: String, ours: Double, ffmpeg arguments: [String]) -> Row {
        let command = (["ffmpeg"] + arguments + ["-f", "null", "-"]).joined(separator: " ")
        guard runsFFmpeg else { return Row(what: what, oursMilliseconds: ours, ffmpegCommand: command, ffmpegError: "skipped") }
        do {
            let theirs = try ffmpegCPU(arguments)
            return Row(what: what, oursMilliseconds: ours, ffmpegMilliseconds: theirs, ratioToFFmpeg: ours / theirs, ffmpegCommand: command)
        } catch {
            return Row(what: what, oursMilliseconds: ours, ffmpegCommand: command, ffmpegError: "\(error)")
        }
    }

    /// ffmpeg's CPU per frame, in ms: `frames` + 10 frames less 10 frames, the least of `repeats` each.
    private func ffmpegCPU(_ arguments: [String]) throws -> Double {
        func least(_ count: Int) throws -> Double {
            var best = Double.infinity
            for _ in 0..<repeats {
                let usage = try ProcessCPU.run(["ffmpeg", "-hide_banner", "-nostdin", "-loglevel", "error"] + arguments
                                               + ["-frames:v", "\(count)", "-f", "null", "-"], log: log)
                guard usage.status == 0 else { throw BenchmarkError("ffmpeg exited with status \(usage.status); see \(log)") }
                best = min(best, usage.cpuNanoseconds)
            }
            return best
        }
        let base = try least(10)
        return max(try least(frames + 10) - base, 0) / 1e6 / Double(frames)
    }

    /// Captures the still screen at 60 fps for a second: our CPU over the deadlines skipped.
    private func skippedGrabCost() throws -> (count: Int, microseconds: Double) {
        let source = ScreenSource(screen: screen, frameRate: FrameRate(60))
        defer { source.release() }
        try source.start()
        usleep(200_000)   // past the first frame
        let (cpu, skipped) = (ProcessCPU.cpuNanoseconds(of: getpid()) ?? 0, source.statistics.unchangedFrames)
        usleep(1_000_000)
        let (cpuAfter, skippedAfter) = (ProcessCPU.cpuNanoseconds(of: getpid()) ?? 0, source.statistics.unchangedFrames)
        source.stop()
        let count = skippedAfter - skipped
        return (count, count > 0 ? (cpuAfter - cpu) / 1e3 / Double(count) : 0)
    }
}
