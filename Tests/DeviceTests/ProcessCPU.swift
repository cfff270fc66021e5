import Foundation

/// CPU time (user + system, in seconds) from /proc, for the benchmarks' CPU figures: a thread of
/// this process by name, or a whole process. /proc counts in clock ticks (10 ms), so measure
/// seconds of work, not single periods.
enum ProcessCPU {
    /// The calling thread's id (its /proc/self/task entry).
    /// (/proc/thread-self links to "PID/task/TID"; -1 when it cannot be read.)
    static var currentThreadID: Int32 {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self")).flatMap { Int32($0.split(separator: "/").last ?? "") } ?? -1
    }

    /// The CPU thread `id` of this process has used since it started.
    static func thread(_ id: Int32) -> Double? { seconds(stat: "/proc/self/task/\(id)/stat") }

    /// The CPU process `pid` (all its threads) has used since it started.
    static func process(_ pid: pid_t) -> Double? { seconds(stat: "/proc/\(pid)/stat") }

    /// The command name of process `pid`.
    static func command(_ pid: pid_t) -> String {
        ((try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8)) ?? "?").trimmingCharacters(in: .whitespacesAndNewlines)
    }

    private static func seconds(stat path: String) -> Double? {
        guard let stat = try? String(contentsOfFile: path, encoding: .utf8), let close = stat.lastIndex(of: ")") else { return nil }
        // After the command's closing parenthesis: state (field 3) … utime (14), stime (15).
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }
}
