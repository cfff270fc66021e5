import ArgumentParser
import Foundation
import MediaDevices
import MediaDevicesCommandLine

/// `mediadevices-benchmark testpattern`: the test pattern's `frames()` sequence read on its
/// capture executor (as the quick start reads it) against a consumer callback, CPU and wake-ups
/// per frame in the same process (`SequenceBenchmark`, as `screen` measures every screen
/// backend). The test pattern draws each frame into a buffer the sequence leases, so the two
/// paths differ only by the sequence's own cost. `MEDIADEVICES_TIMING` says how the CPU figures
/// were timed (an instruction-timed rig boot; native time otherwise).
struct TestPatternBenchmarkCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "testpattern",
        abstract: "Time the test pattern's frames() sequence on its capture executor against a consumer callback (CPU and wake-ups per frame).")

    @Option(help: "Frames to time in each run.")
    var frames: Int = 300

    @Option(help: "Frame size.")
    var size: String = "640x480"

    @Option(help: "Frame rate.")
    var fps: Int = 30

    @Flag(help: "Print the figures as JSON.")
    var json = false

    func validate() throws {
        if frames < 2 { throw ValidationError("--frames must be at least 2") }
        if fps < 1 || fps > 120 { throw ValidationError("--fps takes 1 to 120") }
        if Size(parsing: size) == nil { throw ValidationError("--size takes WIDTHxHEIGHT") }
    }

    func run() throws {
        let request = FormatRequest(pixelFormat: .yuyv, size: Size(parsing: size), frameRate: FrameRate(fps))
        let source = TestPatternSource(request: request)
        defer { source.release() }
        try source.initialize()
        let figures = try SequenceBenchmark(source: source, name: "the test pattern", frames: frames).run()
        if json { printJSON(figures); return }
        print("test pattern YUYV \(size) at \(fps) fps (the sequence leases the drawn buffer):")
        SequenceBenchmark.lines(figures, timing: ScreenBenchmarkCommand.timing).forEach { print("  " + $0) }
    }
}
