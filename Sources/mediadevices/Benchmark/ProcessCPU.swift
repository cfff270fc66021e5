import Foundation
import Glibc

/// Runs a command as a child process and reports the CPU time it used (user + system, from
/// `wait4`'s resource usage: the child's own, not ours) and the wall time.
enum ProcessCPU {
    struct Usage {
        var userNanoseconds: Double
        var systemNanoseconds: Double
        var wallNanoseconds: Double
        var status: Int32
        var cpuNanoseconds: Double { userNanoseconds + systemNanoseconds }
    }

    /// Runs `arguments` (the first is looked up in PATH), its output to `log` (appended).
    static func run(_ arguments: [String], log: String) throws -> Usage {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let cArguments = arguments.map { strdup($0) } + [nil]
        defer { for argument in cArguments { free(argument) } }
        var pid: pid_t = 0
        let start = BenchmarkClock.nanoseconds()
        let spawned = posix_spawnp(&pid, arguments[0], &actions, nil, cArguments, environ)
        guard spawned == 0 else {
            throw BenchmarkError("cannot start \(arguments[0]): \(String(cString: strerror(spawned)))")
        }
        var status: Int32 = 0
        var usage = rusage()
        while wait4(pid, &status, 0, &usage) < 0 {
            guard errno == EINTR else { throw BenchmarkError("wait4 for \(arguments[0]) failed: \(String(cString: strerror(errno)))") }
        }
        let wall = Double(BenchmarkClock.nanoseconds() - start)
        func nanoseconds(_ time: timeval) -> Double { Double(time.tv_sec) * 1e9 + Double(time.tv_usec) * 1e3 }
        // Exit status, or 128 + signal.
        let code = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        return Usage(userNanoseconds: nanoseconds(usage.ru_utime), systemNanoseconds: nanoseconds(usage.ru_stime),
                     wallNanoseconds: wall, status: code)
    }

    /// The path of the running executable.
    static var ownExecutable: String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    }
}
