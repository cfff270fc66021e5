import Foundation
import Glibc

/// Issue 14's capture cost: CPU per second of capture and wake-ups per second of
/// `mediadevices record` against the field's recorder for the same source, format and period:
/// `arecord` for an ALSA device, `parec` for a PulseAudio (or pipewire-pulse) source.
///
/// Each tool records for `seconds`; its CPU time (all threads, the scheduler's run time) and
/// voluntary context switches are read at two moments in steady state, so start-up and teardown
/// stay outside; the least CPU of `repeats` runs is reported (noise only adds). A wake-up is a
/// thread going to sleep and being woken: a recorder that sleeps until each period is delivered
/// wakes at the period rate. Ours has two threads that do (the audio thread and `record`'s
/// writer, woken by the bus per period), so its figure per period is about 2 where a one-thread
/// tool's is 1; the audio thread's own figure is printed beside it.
struct AudioCaptureCPUBenchmark {
    /// What is recorded: an ALSA PCM name (`hw:Loopback,1,0`) or `pulse:SOURCE`.
    var source: String
    var periodFrames: Int
    var periods = 4
    var sampleRate = 48000
    var channels = 2
    var seconds = 9
    var window = (from: 2.0, to: 8.0)
    var repeats = 3
    var workDirectory: String

    /// The name `AudioDriver` gives its capture thread.
    static let audioThread = "audio-capture"

    /// One tool's figures (from its run with the least CPU).
    struct Row {
        var tool: String
        var command: [String]
        var cpuPerSecondNanoseconds: Double
        var wakeUpsPerSecond: Double
        var audioThreadWakeUpsPerSecond: Double?
    }

    var isPulse: Bool { source.hasPrefix("pulse:") }
    var periodsPerSecond: Double { Double(sampleRate) / Double(periodFrames) }

    /// Ours and the reference, as argument lists.
    var tools: [(name: String, arguments: [String], interrupt: Bool)] {
        let ours = [ProcessCPU.commandLineTool, "record", source, "--seconds", "\(seconds + 2)", "--rate", "\(sampleRate)",
                    "--channels", "\(channels)", "--period", "\(periodFrames)", "--periods", "\(periods)", "--output", "/dev/null"]
        let reference: (String, [String])
        if isPulse {
            let milliseconds = periodFrames * 1000 / sampleRate
            reference = ("parec", ["parec", "-d", String(source.dropFirst("pulse:".count)), "--rate=\(sampleRate)", "--channels=\(channels)",
                                   "--format=s16le", "--latency-msec=\(milliseconds)", "/dev/null"])
        } else {
            reference = ("arecord", ["arecord", "-q", "-D", source, "-f", "S16_LE", "-r", "\(sampleRate)", "-c", "\(channels)",
                                     "--period-size=\(periodFrames)", "--buffer-size=\(periodFrames * periods)", "-d", "\(seconds + 2)",
                                     "-t", "raw", "/dev/null"])
        }
        return [("mediadevices record", ours, false), (reference.0, reference.1, isPulse)]
    }

    func run(progress: (String) -> Void) throws -> [Row] {
        try FileManager.default.createDirectory(atPath: workDirectory, withIntermediateDirectories: true)
        let log = workDirectory + "/audio-tools.log"
        var best: [String: Row] = [:]
        for attempt in 1...repeats {
            for tool in tools {
                progress("run \(attempt)/\(repeats): \(tool.name) from \(source)")
                let usage = try ProcessCPU.runSampled(tool.arguments, log: log, windowStart: window.from, windowEnd: window.to,
                                                      threadName: tool.name == "mediadevices record" ? Self.audioThread : nil,
                                                      interruptAfter: tool.interrupt)
                // parec exits 0 on SIGINT; a recorder that failed before the window threw above.
                guard usage.total.status == 0 || (tool.interrupt && usage.total.status == 128 + SIGINT) else {
                    let tail = (try? String(contentsOfFile: log, encoding: .utf8))?.split(separator: "\n").suffix(5).joined(separator: "\n") ?? ""
                    throw BenchmarkError("\(tool.arguments.joined(separator: " ")) exited with status \(usage.total.status):\n\(tail)")
                }
                let wall = usage.windowWallNanoseconds / 1e9
                let row = Row(tool: tool.name, command: tool.arguments, cpuPerSecondNanoseconds: usage.windowCPUNanoseconds / wall,
                              wakeUpsPerSecond: usage.windowWakeUps / wall, audioThreadWakeUpsPerSecond: usage.windowThreadWakeUps.map { $0 / wall })
                if row.cpuPerSecondNanoseconds < best[tool.name]?.cpuPerSecondNanoseconds ?? .infinity { best[tool.name] = row }
            }
        }
        return tools.compactMap { best[$0.name] }
    }

    /// The rows as a table, each against the reference (the last row).
    func table(_ rows: [Row]) -> String {
        guard let reference = rows.last else { return "" }
        var table = BenchmarkTable("tool", "CPU per second", "÷ \(reference.tool)", "wake-ups/s", "per period", "audio thread/s", "per period")
        for row in rows {
            table.add(row.tool, formatDuration(row.cpuPerSecondNanoseconds), formatRatio(row.cpuPerSecondNanoseconds / reference.cpuPerSecondNanoseconds),
                      String(format: "%.1f", row.wakeUpsPerSecond), String(format: "%.2f", row.wakeUpsPerSecond / periodsPerSecond),
                      row.audioThreadWakeUpsPerSecond.map { String(format: "%.1f", $0) } ?? "–",
                      row.audioThreadWakeUpsPerSecond.map { String(format: "%.2f", $0 / periodsPerSecond) } ?? "–")
        }
        return String(format: "capture from %@ at %d-frame periods (%.0f periods/s, %d Hz, %d channels, S16), steady state %.0f–%.0f s, least CPU of %d runs:\n",
                      source, periodFrames, periodsPerSecond, sampleRate, channels, window.from, window.to, repeats) + table.text
    }
}
