import Foundation

/// Figures of this process's capture threads, read from /proc.
enum CaptureThreadFigures {
    /// Voluntary context switches (sleeps ended by a wake-up) of this process's `md-screen`
    /// threads (a `ScreenSource`'s capture thread); `nil` when there is none.
    static func screenWakeUps() -> Int? {
        guard let tasks = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task") else { return nil }
        var total: Int?
        for task in tasks {
            guard let name = try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8),
                  name.trimmingCharacters(in: .whitespacesAndNewlines) == "md-screen",
                  let status = try? String(contentsOfFile: "/proc/self/task/\(task)/status", encoding: .utf8),
                  let line = status.split(separator: "\n").first(where: { $0.hasPrefix("voluntary_ctxt_switches:") }),
                  let count = Int(line.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) else { continue }
            total = (total ?? 0) + count
        }
        return total
    }

    /// The `md-screen` threads' wake-ups over the next `seconds` (the caller sleeps meanwhile).
    static func screenWakeUps(during seconds: Double) throws -> Int {
        guard let before = screenWakeUps() else { throw CaptureThreadFiguresError() }
        usleep(UInt32(seconds * 1_000_000))
        guard let after = screenWakeUps() else { throw CaptureThreadFiguresError() }
        return after - before
    }
}

/// No `md-screen` thread in this process: the source is not capturing.
struct CaptureThreadFiguresError: Error, CustomStringConvertible {
    var description: String { "no md-screen capture thread in this process" }
}
