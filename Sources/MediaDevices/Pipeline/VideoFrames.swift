import Synchronization

/// An asynchronous sequence of captured frames with a bounded buffer. When the application
/// falls behind, the oldest waiting frame is dropped (AVFoundation's
/// `alwaysDiscardsLateVideoFrames`) and counted in `droppedFrames`. The sequence ends when the
/// source stops, and throws the source's `MediaDevicesError` when it fails.
///
/// Iterate it from one task at a time.
public struct VideoFrames: AsyncSequence, Sendable {
    /// Each element is a pooled copy of one frame.
    public typealias Element = VideoFrameBuffer
    let queue: FrameQueue

    /// Frames this sequence dropped because its buffer was full.
    public var droppedFrames: Int { queue.droppedFrames }

    /// The iterator.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let queue: FrameQueue
        /// The next frame, `nil` at the end; throws the source's failure.
        public mutating func next() async throws -> VideoFrameBuffer? { try await queue.next() }
    }

    /// Makes the iterator.
    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(queue: queue) }
}

/// The bounded drop-oldest queue behind `VideoFrames`, with its own buffer pool.
final class FrameQueue: Sendable {
    private struct State {
        var ring: [VideoFrameBuffer?]
        var head = 0
        var count = 0
        var pool: [VideoFrameBuffer] = []
        var waiter: CheckedContinuation<VideoFrameBuffer?, any Error>?
        var finished = false
        var error: MediaDevicesError?
        var dropped = 0
    }

    private let state: Mutex<State>
    private let capacity: Int

    init(capacity: Int) {
        self.capacity = capacity
        state = Mutex(State(ring: Array(repeating: nil, count: capacity)))
    }

    var droppedFrames: Int { state.withLock { $0.dropped } }

    /// Whether a task is parked in `next()`.
    var hasWaiter: Bool { state.withLock { $0.waiter != nil } }

    /// Copies `frame` into a pooled buffer and queues it. Returns how many frames were dropped
    /// (0 or 1). Called on the capture thread.
    func push(_ frame: VideoFrame) -> Int {
        var dropped = 0
        let buffer: VideoFrameBuffer? = state.withLock { state in
            if state.finished { return nil }
            if state.waiter == nil && state.count == capacity {
                // Drop the oldest waiting frame; its buffer becomes free again.
                state.ring[state.head] = nil
                state.head = (state.head + 1) % capacity
                state.count -= 1
                state.dropped += 1
                dropped += 1
            }
            for index in state.pool.indices where isKnownUniquelyReferenced(&state.pool[index]) {
                return state.pool[index]
            }
            // The pool holds one buffer per queue slot plus two (one being filled, one held by
            // the application); anything beyond means the application keeps frames: drop.
            if state.pool.count < capacity + 2 {
                let buffer = VideoFrameBuffer(format: frame.format)
                state.pool.append(buffer)
                return buffer
            }
            state.dropped += 1
            dropped += 1
            return nil
        }
        guard let buffer else { return dropped }
        buffer.fill(from: frame)
        let waiter: CheckedContinuation<VideoFrameBuffer?, any Error>? = state.withLock { state in
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter
            }
            if state.count == capacity {
                state.ring[state.head] = nil
                state.head = (state.head + 1) % capacity
                state.count -= 1
                state.dropped += 1
                dropped += 1
            }
            state.ring[(state.head + state.count) % capacity] = buffer
            state.count += 1
            return nil
        }
        waiter?.resume(returning: buffer)
        return dropped
    }

    /// The next frame, waiting if none is queued; `nil` once finished and drained.
    func next() async throws -> VideoFrameBuffer? {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<VideoFrameBuffer?, any Error>) in
                enum Outcome { case frame(VideoFrameBuffer), end, failure(MediaDevicesError), wait }
                let outcome: Outcome = state.withLock { state in
                    if state.count > 0 {
                        let buffer = state.ring[state.head]!
                        state.ring[state.head] = nil
                        state.head = (state.head + 1) % capacity
                        state.count -= 1
                        return .frame(buffer)
                    }
                    if state.finished {
                        if let error = state.error {
                            state.error = nil
                            return .failure(error)
                        }
                        return .end
                    }
                    if Task.isCancelled { return .end }
                    if state.waiter != nil {
                        return .failure(MediaDevicesError(.invalidState, device: nil, operation: "VideoFrames.next()",
                                                          detail: "Another task is already waiting on this sequence; iterate it from one task, or make one sequence per reader with frames(bufferSize:)"))
                    }
                    state.waiter = continuation
                    return .wait
                }
                switch outcome {
                case .frame(let buffer): continuation.resume(returning: buffer)
                case .end: continuation.resume(returning: nil)
                case .failure(let error): continuation.resume(throwing: error)
                case .wait: break
                }
            }
        } onCancel: {
            let waiter = state.withLock { state in
                let waiter = state.waiter
                state.waiter = nil
                return waiter
            }
            waiter?.resume(returning: nil)
        }
    }

    /// Ends the sequence after the queued frames; a waiting `next()` returns `nil` or throws.
    func finish(error: MediaDevicesError?) {
        let waiter = state.withLock { state in
            state.finished = true
            state.error = error
            let waiter = state.waiter
            state.waiter = nil
            return waiter
        }
        if let waiter {
            if let error {
                state.withLock { $0.error = nil }
                waiter.resume(throwing: error)
            } else {
                waiter.resume(returning: nil)
            }
        }
    }
}
