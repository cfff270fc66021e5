import Foundation
import Glibc

/// Each thread's CPU time and wake-ups in a process, from `/proc/PID/task/*`: the measure that
/// tells which thread a row's CPU per frame goes to (the capture thread, the main thread, the
/// cooperative pool's or libdispatch's threads), where the process total cannot.
enum ThreadCPU {
    /// One thread's figures so far.
    struct Sample {
        var tid: Int32
        /// `/proc/PID/task/TID/comm`: the name the thread set, else the executable's.
        var name: String
        /// The scheduler's run time (`schedstat`'s first field, nanoseconds; user + system);
        /// `nil` when the kernel keeps no schedstat.
        var cpuNanoseconds: Double?
        /// Voluntary context switches (`voluntary_ctxt_switches` in `status`): each a sleep and a wake-up.
        var wakeUps: Double
    }

    /// A thread's figures between two samples of a process.
    struct Usage: Encodable {
        /// `main`, the thread's own name, or `unnamed N` (a thread that set none: N counts them in
        /// the order they were created); a second thread of one name is `NAME 2`, and so on.
        var thread: String
        var cpuNanoseconds: Double
        var wakeUps: Double
        /// The thread started after the first sample (its figures count from its start).
        var startedInWindow: Bool
    }

    /// Every thread of `pid` now, by thread id (empty when the process is gone).
    static func sample(of pid: pid_t) -> [Sample] {
        let directory = "/proc/\(pid)/task"
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        var samples: [Sample] = []
        for task in tasks {
            guard let tid = Int32(task) else { continue }
            let schedstat = try? String(contentsOfFile: "\(directory)/\(task)/schedstat", encoding: .utf8)
            let runtime = schedstat?.split(separator: " ").first.flatMap { Double($0) }
            let name = (try? String(contentsOfFile: "\(directory)/\(task)/comm", encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines) ?? "?"
            let status = (try? String(contentsOfFile: "\(directory)/\(task)/status", encoding: .utf8)) ?? ""
            let line = status.split(separator: "\n").first { $0.hasPrefix("voluntary_ctxt_switches:") }
            let wakeUps = line.flatMap { Double($0.split(separator: ":").last?.trimmingCharacters(in: .whitespaces) ?? "") } ?? 0
            samples.append(Sample(tid: tid, name: name, cpuNanoseconds: runtime, wakeUps: wakeUps))
        }
        return samples.sorted { $0.tid < $1.tid }
    }

    /// Each thread alive at `second` over the window from `first` (threads that ended in
    /// between are left out: start-up and teardown threads), in the order they were created.
    static func usage(pid: pid_t, from first: [Sample], to second: [Sample]) -> [Usage] {
        let before = Dictionary(first.map { ($0.tid, $0) }, uniquingKeysWith: { a, _ in a })
        let processName = second.first { $0.tid == pid }?.name
        var unnamed = 0
        var seen: [String: Int] = [:]
        return second.map { thread in
            var label: String
            if thread.tid == pid {
                label = "main"
            } else if thread.name == processName {
                unnamed += 1
                label = "unnamed \(unnamed)"
            } else {
                label = thread.name
            }
            // A second thread of one name (libdispatch's workers) is `NAME 2`, and so on.
            seen[label, default: 0] += 1
            if let count = seen[label], count > 1 { label += " \(count)" }
            let start = before[thread.tid]
            return Usage(thread: label, cpuNanoseconds: (thread.cpuNanoseconds ?? 0) - (start?.cpuNanoseconds ?? 0),
                         wakeUps: thread.wakeUps - (start?.wakeUps ?? 0), startedInWindow: start == nil)
        }
    }
}
