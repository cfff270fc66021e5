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

    /// A run with the CPU time the process used inside a window of its life.
    struct SampledUsage {
        var total: Usage
        /// CPU time (user + system, all threads) between the two samples.
        var windowCPUNanoseconds: Double
        /// Wall time between the two samples.
        var windowWallNanoseconds: Double
        /// Voluntary context switches (a thread blocked and was woken again), all threads,
        /// between the two samples.
        var windowWakeUps: Double
        /// Voluntary context switches between the two samples of the threads named
        /// `threadName` (`/proc/PID/task/*/comm`), when one was given.
        var windowThreadWakeUps: Double?
        /// Each thread's CPU time and wake-ups between the two samples (`runSampled` only).
        var windowThreads: [ThreadCPU.Usage] = []
    }

    /// Runs `arguments` and reads its CPU time from `/proc/PID/stat` at `windowStart` and
    /// `windowEnd` seconds after it started: the cost in steady state, free of start-up and
    /// teardown. Throws if the process ended before the window did.
    /// With `threadName`, also counts the wake-ups of that thread alone; with `interruptAfter`,
    /// sends SIGINT once the window is sampled (for tools that run until told to stop).
    static func runSampled(_ arguments: [String], log: String, windowStart: Double, windowEnd: Double,
                           threadName: String? = nil, interruptAfter: Bool = false) throws -> SampledUsage {
        var first: (cpu: Double, wall: UInt64, wakeUps: Double, thread: Double)?
        var second: (cpu: Double, wall: UInt64, wakeUps: Double, thread: Double)?
        var threads: [[ThreadCPU.Sample]] = []
        var child: pid_t = 0
        let total = try run(arguments, log: log) { pid, start in
            for (index, at) in [windowStart, windowEnd].enumerated() {
                let target = start + UInt64(at * 1e9)
                let now = BenchmarkClock.nanoseconds()
                if target > now { usleep(useconds_t((target - now) / 1_000)) }
                // One reading of every thread gives the process's figures and each thread's.
                let sampled = ThreadCPU.sample(of: pid)
                guard let cpu = cpuNanoseconds(of: pid, threads: sampled) else { return }
                let sample = (cpu, BenchmarkClock.nanoseconds(), wakeUps(of: sampled), threadName.map { wakeUps(of: sampled, thread: $0) } ?? 0)
                threads.append(sampled)
                child = pid
                if index == 0 { first = sample } else { second = sample }
            }
            if interruptAfter { kill(pid, SIGINT) }
        }
        guard let first, let second else {
            throw BenchmarkError("\(arguments[0]) ended (status \(total.status)) before \(windowEnd) s: give it more frames")
        }
        return SampledUsage(total: total, windowCPUNanoseconds: second.cpu - first.cpu,
                            windowWallNanoseconds: Double(second.wall - first.wall), windowWakeUps: second.wakeUps - first.wakeUps,
                            windowThreadWakeUps: threadName == nil ? nil : second.thread - first.thread,
                            windowThreads: ThreadCPU.usage(pid: child, from: threads[0], to: threads[1]))
    }

    /// Runs `arguments` and samples its CPU time and wake-ups every `interval` seconds until it
    /// ends; the window is the `length` seconds that end `beforeEnd` seconds before its last
    /// sample: the steady state of a run of a known number of frames, however long its start-up
    /// took (a debug build's start under emulation takes longer than any fixed window's start),
    /// with its teardown left out. Throws if the run succeeded in less than `length + beforeEnd`;
    /// a run that failed (status not 0) is returned with an empty window.
    static func runSampledBeforeEnd(_ arguments: [String], log: String, length: Double, beforeEnd: Double,
                                    interval: Double = 0.25) throws -> SampledUsage {
        var samples: [(cpu: Double, wall: UInt64, wakeUps: Double)] = []
        samples.reserveCapacity(4096)
        let total = try run(arguments, log: log) { pid, _ in
            while true {
                // Ended (a zombie until reaped by `run`'s wait4): WNOWAIT leaves it to be reaped.
                var info = siginfo_t()
                if waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0, info.si_signo == SIGCHLD { return }
                guard let cpu = cpuNanoseconds(of: pid) else { return }
                samples.append((cpu, BenchmarkClock.nanoseconds(), wakeUps(of: pid)))
                usleep(useconds_t(interval * 1e6))
            }
        }
        // A failed run has no window: its status says so.
        guard total.status == 0 else {
            return SampledUsage(total: total, windowCPUNanoseconds: 0, windowWallNanoseconds: 0, windowWakeUps: 0, windowThreadWakeUps: nil)
        }
        guard let last = samples.last,
              let end = samples.lastIndex(where: { $0.wall + UInt64(beforeEnd * 1e9) <= last.wall }),
              let start = samples.lastIndex(where: { $0.wall + UInt64(length * 1e9) <= samples[end].wall }) else {
            throw BenchmarkError("\(arguments[0]) ran (status \(total.status)) less than \(length + beforeEnd) s: give it more frames")
        }
        let (first, second) = (samples[start], samples[end])
        return SampledUsage(total: total, windowCPUNanoseconds: second.cpu - first.cpu, windowWallNanoseconds: Double(second.wall - first.wall),
                            windowWakeUps: second.wakeUps - first.wakeUps, windowThreadWakeUps: nil)
    }

    /// Voluntary context switches of every thread of `pid` so far (`voluntary_ctxt_switches` in
    /// `/proc/PID/task/*/status`): each is a thread going to sleep to be woken later. Threads
    /// that ended in between are not counted (they are the tools' start-up and teardown threads).
    /// With `thread`, only the threads of that name (`/proc/PID/task/*/comm`).
    static func wakeUps(of pid: pid_t, thread: String? = nil) -> Double {
        wakeUps(of: ThreadCPU.sample(of: pid), thread: thread)
    }

    /// The voluntary context switches of `threads` (one reading of a process), or of those named `thread`.
    static func wakeUps(of threads: [ThreadCPU.Sample], thread: String? = nil) -> Double {
        threads.filter { thread == nil || $0.name == thread }.reduce(0) { $0 + $1.wakeUps }
    }

    /// CPU time (user + system) of every thread of `pid` so far: the scheduler's nanosecond
    /// run times (`/proc/PID/task/*/schedstat`), or `/proc/PID/stat`'s clock ticks (10 ms) when
    /// the kernel keeps no schedstat.
    static func cpuNanoseconds(of pid: pid_t) -> Double? {
        cpuNanoseconds(of: pid, threads: ThreadCPU.sample(of: pid))
    }

    /// The CPU time of `pid` from `threads`, one reading of its threads (`/proc/PID/stat`'s
    /// clock ticks when the kernel keeps no schedstat).
    static func cpuNanoseconds(of pid: pid_t, threads: [ThreadCPU.Sample]) -> Double? {
        let times = threads.map(\.cpuNanoseconds)
        return times.isEmpty || times.contains(nil) ? tickNanoseconds(of: pid) : times.reduce(0) { $0 + ($1 ?? 0) }
    }

    /// User + system time of every thread of `pid` so far, from `/proc/PID/stat` (clock ticks).
    static func tickNanoseconds(of pid: pid_t) -> Double? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let end = stat.lastIndex(of: ")") else { return nil }
        // Fields after "(comm)": state is field 3; utime and stime are fields 14 and 15.
        let fields = stat[stat.index(after: end)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) * 1e9 / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// Runs `arguments` (the first is looked up in PATH), its output to `log` (appended), its
    /// standard input `/dev/null` or a copy of `standardInput` (a descriptor handed to the child
    /// as its fd 0); `whileRunning` is called with the child's pid and start time before it is
    /// waited for.
    static func run(_ arguments: [String], log: String, standardInput: Int32? = nil,
                    whileRunning: (pid_t, UInt64) -> Void = { _, _ in }) throws -> Usage {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if let standardInput {
            posix_spawn_file_actions_adddup2(&actions, standardInput, 0)
        } else {
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        }
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
        whileRunning(pid, start)
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

    /// The last `lines` lines of a tools' log, for an error that names what a tool said.
    static func tail(of log: String, lines: Int = 5) -> String {
        ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").suffix(lines).joined(separator: "\n")
    }

    /// The path of the running executable.
    static var ownExecutable: String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    }

    /// The `mediadevices` command-line tool whose `capture` and `record` are measured:
    /// `MEDIADEVICES_TOOL` (scripts/benchmark.sh sets it to the release build's), else the one on PATH.
    static var commandLineTool: String {
        ProcessInfo.processInfo.environment["MEDIADEVICES_TOOL"] ?? "mediadevices"
    }

    /// Throws unless `commandLineTool` runs (its `--help`), naming how to build it.
    static func checkCommandLineTool() throws {
        let log = NSTemporaryDirectory() + "mediadevices-tool-check.txt"
        unlink(log)
        guard let usage = try? run([commandLineTool, "--help"], log: log), usage.status == 0 else {
            throw BenchmarkError("cannot run the mediadevices tool '\(commandLineTool)': build it (swift build -c release --product mediadevices at the repository root) and set MEDIADEVICES_TOOL to .build/release/mediadevices")
        }
    }
}
