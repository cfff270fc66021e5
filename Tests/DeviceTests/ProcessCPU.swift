import Foundation

/// CPU time (user + system, in seconds) from /proc, for the benchmarks' CPU figures: a thread of
/// this process by id, or a whole process. The scheduler's run times in nanoseconds
/// (`schedstat`), or the clock ticks of `stat` (10 ms) where the kernel keeps no schedstat.
enum ProcessCPU {
    /// The calling thread's id (its /proc/self/task entry).
    /// (/proc/thread-self links to "PID/task/TID"; -1 when it cannot be read.)
    static var currentThreadID: Int32 {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self")).flatMap { Int32($0.split(separator: "/").last ?? "") } ?? -1
    }

    /// The CPU thread `id` of this process has used since it started.
    static func thread(_ id: Int32) -> Double? { seconds(task: "/proc/self/task/\(id)") }

    /// The CPU process `pid` (all its threads, those that ended included when the kernel keeps
    /// no schedstat) has used since it started.
    static func process(_ pid: pid_t) -> Double? {
        guard let tasks = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task") else { return nil }
        let times = tasks.map { runSeconds(schedstat: "/proc/\(pid)/task/\($0)/schedstat") }
        return times.isEmpty || times.contains(nil) ? tickSeconds(stat: "/proc/\(pid)/stat") : times.reduce(0) { $0 + ($1 ?? 0) }
    }

    /// The command name of process `pid`.
    static func command(_ pid: pid_t) -> String {
        ((try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8)) ?? "?").trimmingCharacters(in: .whitespacesAndNewlines)
    }

    private static func seconds(task: String) -> Double? {
        runSeconds(schedstat: task + "/schedstat") ?? tickSeconds(stat: task + "/stat")
    }

    /// The first field of `schedstat`: nanoseconds run on a CPU.
    private static func runSeconds(schedstat path: String) -> Double? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8), let first = text.split(separator: " ").first,
              let nanoseconds = Double(first) else { return nil }
        return nanoseconds / 1e9
    }

    private static func tickSeconds(stat path: String) -> Double? {
        guard let stat = try? String(contentsOfFile: path, encoding: .utf8), let close = stat.lastIndex(of: ")") else { return nil }
        // After the command's closing parenthesis: state (field 3) … utime (14), stime (15).
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }
}
