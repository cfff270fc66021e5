import MediaDevicesCore
import Synchronization

/// What a source publishes for readers on any thread (the format in force, the device, the
/// orientation), behind a short lock that is never held while waiting for anything. A class, so
/// that a source and its device part (`SourceDevice`) share one.
final class PublishedState<Value: Sendable>: Sendable {
    private let value: Mutex<Value>

    /// State starting as `value`.
    init(_ value: Value) { self.value = Mutex(value) }

    /// Reads or changes the state under its lock.
    func withLock<Result: Sendable, E: Error>(_ body: (inout Value) throws(E) -> Result) throws(E) -> Result {
        try value.withLock { (value: inout Value) throws(E) -> Result in try body(&value) }
    }
}
