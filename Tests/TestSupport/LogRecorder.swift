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

    /// A logger at `level` whose lines this recorder keeps.
    public func logger(label: String, level: Logger.Level = .trace) -> Logger {
        var logger = Logger(label: label) { _ in Handler(recorder: self) }
        logger.logLevel = level
        return logger
    }

    fileprivate func keep(_ line: String) { kept.withLock { $0.append(line) } }

    private struct Handler: LogHandler {
        let recorder: LogRecorder
        var logLevel: Logger.Level = .trace
        var metadata: Logger.Metadata = [:]
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) {
            let all = metadata.merging(event.metadata ?? [:]) { $1 }
            recorder.keep("\(event.level): \(event.message) \(all.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " "))")
        }
    }
}
