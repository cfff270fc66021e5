import ArgumentParser
import Foundation
import MediaDevices

/// `mediadevices-benchmark vcam`: the CPU a v4l2loopback producer spends per frame, ours
/// (`mediadevices publish`) against GStreamer's and FFmpeg's, with 1 and 3 readers
/// (`VirtualCameraBenchmark`; run in the rig with vivid and the loopback module loaded).
struct VirtualCameraBenchmarkCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "vcam",
        abstract: "Producer CPU per frame of a camera served on a v4l2loopback device: mediadevices publish against gst-launch-1.0 v4l2src ! v4l2sink and ffmpeg -f v4l2, with 1 and 3 readers (run in the rig).")

    @OptionGroup var common: BenchmarkCommand.Common

    @Option(help: "The camera (a V4L2 capture node giving YUYV).")
    var device = "/dev/video0"

    @Option(help: "The v4l2loopback device (scripts/v4l2loopback.sh load).")
    var loopback = "/dev/video10"

    @Option(help: "Frame size (YUYV).")
    var size = "640x480"

    @Option(help: "Frame rate.")
    var fps = 25

    @OptionGroup var runs: BenchmarkCommand.SteadyStateRuns

    @Option(help: "Reader counts, comma-separated.")
    var readers = "1,3"

    @Option(help: "A shell command run before each row that leaves the loopback device as the module's load does (e.g. reloading it): ours keeps its format after it quits.")
    var reset: String?

    @Option(help: "A writable directory (GStreamer's registry, the tools' logs).")
    var workDirectory = "/tmp/mediadevices-benchmark"

    func run() throws {
        try common.checkOptimized()
        try ProcessCPU.checkCommandLineTool()
        guard let frameSize = Size(parsing: size) else { throw ValidationError("bad size '\(size)'") }
        let window = try runs.window(fps: fps)
        let counts = readers.split(separator: ",").compactMap { Int($0) }
        guard !counts.isEmpty, counts.allSatisfy({ $0 > 0 }) else { throw ValidationError("--readers takes positive counts, e.g. 1,3") }
        let benchmark = VirtualCameraBenchmark(device: device, loopback: loopback, width: frameSize.width, height: frameSize.height, fps: fps,
                                               frames: runs.frames, window: window, rounds: runs.rounds, readerCounts: counts,
                                               workDirectory: workDirectory, reset: reset)
        let rows = try benchmark.run(progress: common.progress)
        common.report(benchmark.title, rows, table: VirtualCameraBenchmark.table(rows))
    }
}
