import Synchronization

/// Hands each frame from a source's capture thread to its consumer and its asynchronous
/// sequences, and keeps the statistics. One per source; it outlives stream restarts (format
/// changes, device switches), so consumers never re-subscribe.
final class FrameDelivery: Sendable {
    private struct State {
        var consumer: (any VideoFrameConsumer)?
        var queues: [FrameQueue] = []
        var accumulator = StatisticsAccumulator()
    }

    private let state = Mutex(State())

    /// The callback consumer.
    var consumer: (any VideoFrameConsumer)? {
        get { state.withLock { $0.consumer } }
        set { state.withLock { $0.consumer = newValue } }
    }

    /// Statistics so far.
    var statistics: CaptureStatistics { state.withLock { $0.accumulator.statistics } }

    /// A new asynchronous sequence fed by this delivery.
    func makeFrames(bufferSize: Int) -> VideoFrames {
        let queue = FrameQueue(capacity: max(1, bufferSize))
        state.withLock { $0.queues.append(queue) }
        return VideoFrames(queue: queue)
    }

    /// Starts a new run: zeroes the statistics.
    func resetStatistics() { state.withLock { $0.accumulator = StatisticsAccumulator() } }

    /// The stream restarted (new format or device): sequence numbers begin again.
    func streamRestarted() { state.withLock { $0.accumulator.restartSequence() } }

    /// Delivers one frame: records it, calls the consumer, copies it into each queue.
    /// Runs on the capture thread and allocates nothing in steady state.
    func deliver(_ frame: VideoFrame) {
        let (consumer, queues) = state.withLock { state in
            state.accumulator.record(timestamp: frame.timestamp, sequence: frame.sequence,
                                     captureDelay: frame.captureDelay)
            return (state.consumer, state.queues)
        }
        consumer?.consumeFrame(frame)
        var drops = 0
        // An index loop: in unoptimized builds `for in` goes through the stdlib's generic
        // iterator, whose coroutine frame is heap-allocated per call.
        var index = 0
        while index < queues.count {
            drops += queues[index].push(frame)
            index += 1
        }
        if drops > 0 { state.withLock { $0.accumulator.recordQueueDrops(drops) } }
    }

    /// Capturing ended: tells the consumer and ends every sequence (with `error`, if any).
    func finish(error: MediaDevicesError?) {
        let (consumer, queues) = state.withLock { state in
            let queues = state.queues
            state.queues.removeAll()
            return (state.consumer, queues)
        }
        for queue in queues { queue.finish(error: error) }
        consumer?.captureDidStop(error: error)
    }
}
