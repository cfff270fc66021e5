import ArgumentParser
import Foundation

/// `mediadevices-benchmark console`: the browser console's MJPEG serving against ustreamer's on
/// the same camera (`MJPEGServerBenchmark`; run in the rig).
struct ConsoleBenchmarkCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "console",
        abstract: "Server CPU per frame of the browser console (Examples/Console) against ustreamer, serving one camera's MJPEG stream to 1 and to N curl clients (run in the rig).")

    @OptionGroup var common: BenchmarkCommand.Common

    @OptionGroup var stream: BenchmarkCommand.Stream.Options

    @Option(help: "The console's executable (scripts/console-check.sh builds it into .build-apps/).")
    var console: String

    @Option(help: "Client counts, comma-separated.")
    var clients = "1,4"

    @Option(help: "Seconds before the first reading (start-up, connections, the capture's first frames).")
    var warmUp = 6.0

    @Option(help: "Seconds between the two readings.")
    var seconds = 10.0

    @Option(help: "Runs of every server and client count (the least CPU is reported: noise only adds).")
    var repeats = 2

    @Option(help: "The emulated USB camera's frame log (the file MEDIADEVICES_USB_FRAME_LOG named to it): with an MJPEG stream, glass-to-client latency is measured too.")
    var frameLog: String?

    @Option(help: "A writable directory (the servers' logs).")
    var workDirectory = "/tmp/mediadevices-benchmark-console"

    func run() throws {
        try common.checkOptimized()
        let size = try stream.frameSize()
        let format = try stream.pixelFormat() == .mjpeg ? "MJPG" : "YUYV"
        let counts = clients.split(separator: ",").compactMap { Int($0) }
        guard !counts.isEmpty, counts.allSatisfy({ $0 >= 1 }), counts.count == clients.split(separator: ",").count else {
            throw ValidationError("--clients takes counts of at least 1, comma-separated (e.g. 1,4)")
        }
        guard warmUp >= 0, seconds > 0, repeats > 0 else { throw ValidationError("--warm-up ≥ 0, --seconds > 0 and --repeats ≥ 1") }
        guard FileManager.default.isExecutableFile(atPath: console) else {
            throw ValidationError("--console \(console) is not an executable: build it with `swift build -c release --package-path Examples/Console`")
        }
        let benchmark = MJPEGServerBenchmark(device: stream.device, width: size.width, height: size.height, fps: stream.fps, format: format,
                                             clientCounts: counts, warmUp: warmUp, seconds: seconds, repeats: repeats,
                                             console: console, frameLog: frameLog, workDirectory: workDirectory)
        let rows = try benchmark.run(progress: common.progress)
        common.report(benchmark.title, rows, table: benchmark.table(rows))
    }
}
