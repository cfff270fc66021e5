import Synchronization

/// Hands ``VirtualCameraEvent``s to every sequence ``VirtualCamera/events`` made. Internal.
final class VirtualCameraEvents: Sendable {
    private struct State {
        var next = 0
        var continuations: [Int: AsyncStream<VirtualCameraEvent>.Continuation] = [:]
    }

    private let state = Mutex(State())
    /// Events each sequence keeps for a reader that is behind; older ones are dropped.
    static let bufferSize = 64

    /// A new sequence of the events from now on.
    func makeStream() -> AsyncStream<VirtualCameraEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: VirtualCameraEvent.self,
                                                           bufferingPolicy: .bufferingNewest(Self.bufferSize))
        let id = state.withLock { state in
            defer { state.next += 1 }
            state.continuations[state.next] = continuation
            return state.next
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.continuations.removeValue(forKey: id) }
        }
        return stream
    }

    /// Hands `event` to every sequence.
    func send(_ event: VirtualCameraEvent) {
        let continuations = state.withLock { Array($0.continuations.values) }
        for continuation in continuations { continuation.yield(event) }
    }

    /// Ends every sequence made so far.
    func finish() {
        let continuations = state.withLock { state in
            defer { state.continuations.removeAll() }
            return Array(state.continuations.values)
        }
        for continuation in continuations { continuation.finish() }
    }
}
