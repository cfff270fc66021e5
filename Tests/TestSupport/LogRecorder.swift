import Logging
import Synchronization

/// A swift-log `LogHandler` that keeps every line it is given ("level: message metadata"), for
/// tests of what the library logs; `logger(label:)` makes a logger that writes to it.
public final class LogRecorder: Sendable {
    private let kept = Mutex<[String]>([])

    /// An empty recorder.
    public init() {}

    /// The lines so far.
    public var lines: [String] { kept.withLock { $0 } }

    /// A logger at `level` whose lines this recorder keeps; `beforeEachLine` runs in the log
    /// handler before it keeps a line (a test's probe of what the handler may do there).
    public func logger(label: String, level: Logger.Level = .trace, beforeEachLine: @escaping @Sendable () -> Void = {}) -> Logger {
        var logger = Logger(label: label) { _ in Handler(recorder: self, beforeEachLine: beforeEachLine) }
        logger.logLevel = level
        return logger
    }

    fileprivate func keep(_ line: String) { kept.withLock { $0.append(line) } }

    private struct Handler: LogHandler {
        let recorder: LogRecorder
        let beforeEachLine: @Sendable () -> Void
        var logLevel: Logger.Level = .trace
        var metadata: Logger.Metadata = [:]
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) {
            beforeEachLine()
            let all = metadata.merging(event.metadata ?? [:]) { $1 }
            recorder.keep("\(event.level): \(event.message) \(all.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " "))")
        }
    }
}
