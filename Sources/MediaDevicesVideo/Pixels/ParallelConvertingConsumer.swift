import Foundation
import MediaDevicesCore
import Synchronization

/// Converts frames on threads of its own, several frames at once, and hands the results to its
/// consumer one at a time in capture order: ``ConvertingConsumer`` with more than one thread.
///
/// Each frame's bytes are copied out of the device's buffer on the capture thread (for a JPEG,
/// a small part of its decode), so the buffer goes back to the device at once; then one of the
/// `threads` threads converts it. When every thread has a frame, a new frame is dropped and
/// counted (`busyFrames`). Frames that cannot be converted are dropped and counted
/// (`corruptFrames`). Nothing is allocated per frame once every thread has seen the largest frame.
// @unchecked Sendable: its state is in `engine` (locked) and its workers' threads; the consumer calls come from one capture thread.
package final class ParallelConvertingConsumer: VideoFrameConsumer, @unchecked Sendable {
    private let engine: Engine
    private let downstream: any VideoFrameConsumer

    /// Converts to `output` on `threads` threads (at least 1) and hands the results to
    /// `consumer` in capture order. Throws `.unsupportedFormat` for an output the pipeline
    /// cannot produce, `.invalidValue` for fewer than one thread, `.io` when a thread cannot start.
    package init(output: OutputFormat, threads: Int, consumer: any VideoFrameConsumer) throws(MediaDevicesError) {
        guard threads >= 1 else {
            throw MediaDevicesError(.invalidValue, device: nil, operation: "convert on threads",
                                    detail: "threads must be at least 1 (got \(threads))")
        }
        downstream = consumer
        engine = try Engine(output: output, threads: threads, consumer: consumer)
    }

    deinit { engine.shutDown() }

    /// The output frames are converted to.
    package var output: OutputFormat { engine.output }

    /// How many threads convert.
    package var threads: Int { engine.workers.count }

    /// Frames dropped because they could not be converted (corrupt JPEGs, short buffers).
    package var corruptFrames: Int { engine.state.withLock { $0.corrupt } }

    /// Why the last dropped frame could not be converted.
    package var lastCorruptFrameReason: String? { engine.state.withLock { $0.reason } }

    /// Frames dropped because every thread was still converting an earlier frame.
    package var busyFrames: Int { engine.state.withLock { $0.busy } }

    /// Frames converted and handed on.
    package var convertedFrames: Int { engine.state.withLock { $0.delivered } }

    /// Copies `frame` and has a free thread convert it; drops it (`busyFrames`) when none is free.
    package func consumeFrame(_ frame: VideoFrame) { engine.submit(frame) }

    /// Waits until the frames already taken are converted and handed on, then passes the end of
    /// capture on.
    package func captureDidStop(error: MediaDevicesError?) {
        engine.drain()
        downstream.captureDidStop(error: error)
    }

    /// One converting thread's state: its converter, the copy of the frame it converts, and the
    /// place that frame holds in capture order.
    // @unchecked Sendable: a worker's fields are written by the capture thread only while the worker is idle, then read by its thread after `work` is signalled.
    final class Worker: @unchecked Sendable {
        let converter: FrameConverter
        /// The frame's bytes, copied; grows to the largest frame seen.
        var storage = UnsafeMutableRawPointer.allocate(byteCount: 1, alignment: 64)
        var capacity = 1
        /// The frame to convert, its planes in `storage`.
        var frame: VideoFrame?
        /// Its place in capture order.
        var ticket = 0
        /// Signalled when `frame` is set, or to end the thread.
        let work = DispatchSemaphore(value: 0)
        var thread: CaptureThread?

        init(output: OutputFormat) throws(MediaDevicesError) { converter = try FrameConverter(output: output) }

        deinit { storage.deallocate() }

        /// Copies `frame`'s planes into `storage` (growing it when the frame is larger) and
        /// keeps a frame over the copy with the same format, timing and orientation.
        func take(_ frame: VideoFrame) {
            var needed = 0, index = 0
            while index < frame.planeCount {
                needed += (frame.plane(index).bytes.count + 63) & ~63
                index += 1
            }
            if needed > capacity {
                storage.deallocate()
                storage = .allocate(byteCount: needed, alignment: 64)
                capacity = needed
            }
            var offset = 0
            var copied = (FramePlane.empty, FramePlane.empty, FramePlane.empty)
            index = 0
            while index < min(frame.planeCount, 3) {
                let source = frame.plane(index)
                if let base = source.bytes.baseAddress, source.bytes.count > 0 {
                    (storage + offset).copyMemory(from: base, byteCount: source.bytes.count)
                }
                let plane = FramePlane(bytes: UnsafeRawBufferPointer(start: storage + offset, count: source.bytes.count),
                                       bytesPerRow: source.bytesPerRow)
                switch index {
                case 0: copied.0 = plane
                case 1: copied.1 = plane
                default: copied.2 = plane
                }
                offset += (source.bytes.count + 63) & ~63
                index += 1
            }
            self.frame = VideoFrame(format: frame.format, timestamp: frame.timestamp, sequence: frame.sequence,
                                    orientation: frame.orientation, captureDelay: frame.captureDelay,
                                    planeCount: frame.planeCount, bytesUsed: frame.bytesUsed,
                                    plane0: copied.0, plane1: copied.1, plane2: copied.2)
        }
    }

    /// The threads and their shared state, apart from the consumer object so that the threads
    /// (which hold the engine) do not keep the consumer alive: its release ends them.
    // @unchecked Sendable: its shared state is behind `state`'s lock; the turn condition orders deliveries.
    final class Engine: @unchecked Sendable {
        struct State {
            /// Which workers hold a frame.
            var holding: [Bool]
            /// The worker given the last frame: the next goes to the first free one after it, so
            /// that every thread takes its turn (and warms its converter).
            var lastWorker = -1
            /// The next ticket to give out, and the next to hand on.
            var nextTicket = 0
            var nextDelivery = 0
            var corrupt = 0
            var reason: String?
            var busy = 0
            var delivered = 0
            var stopping = false
        }

        let output: OutputFormat
        let workers: [Worker]
        let state: Mutex<State>
        /// Waited on for a turn to hand on (tickets in order) and for the workers to drain.
        private let turn = NSCondition()
        private let consumer: any VideoFrameConsumer

        init(output: OutputFormat, threads: Int, consumer: any VideoFrameConsumer) throws(MediaDevicesError) {
            self.output = output
            self.consumer = consumer
            workers = try (0..<threads).map { (_) throws(MediaDevicesError) in try Worker(output: output) }
            state = Mutex(State(holding: Array(repeating: false, count: threads)))
            for (index, worker) in workers.enumerated() {
                do {
                    worker.thread = try CaptureThread(name: "md-convert") { [self] in self.run(index) }
                } catch {
                    shutDown()
                    throw error
                }
            }
        }

        /// Capture thread: gives `frame` to a free worker with the next ticket, or counts it busy.
        func submit(_ frame: VideoFrame) {
            let taken: (worker: Int, ticket: Int)? = state.withLock { state in
                // `while`, not `first(where:)` or `for in`: unspecialized in a debug build, those allocate.
                let count = state.holding.count
                var step = 1
                while step <= count && state.holding[(state.lastWorker + step) % count] { step += 1 }
                guard !state.stopping, step <= count else {
                    state.busy += 1
                    return nil
                }
                let free = (state.lastWorker + step) % count
                state.holding[free] = true
                state.lastWorker = free
                defer { state.nextTicket += 1 }
                return (free, state.nextTicket)
            }
            guard let taken else { return }
            let worker = workers[taken.worker]
            worker.take(frame)
            worker.ticket = taken.ticket
            worker.work.signal()
        }

        /// A worker thread: converts each frame it is given, then waits for its turn to hand
        /// the result on (or, for a frame that failed, to pass its turn).
        private func run(_ index: Int) {
            let worker = workers[index]
            while true {
                worker.work.wait()
                guard let frame = worker.frame else { return }  // shut down while idle
                do {
                    try worker.converter.convert(frame) { converted in
                        awaitTurn(worker.ticket)
                        consumer.consumeFrame(converted)
                    }
                    state.withLock { $0.delivered += 1 }
                } catch {
                    let reason = error.description
                    state.withLock { $0.corrupt += 1; $0.reason = reason }
                    awaitTurn(worker.ticket)
                }
                worker.frame = nil
                turn.lock()
                let stopping = state.withLock { state -> Bool in
                    state.nextDelivery += 1
                    state.holding[index] = false
                    return state.stopping
                }
                turn.broadcast()
                turn.unlock()
                if stopping { return }  // shut down while this frame was converted
            }
        }

        /// Waits until `ticket` is the next to hand on.
        private func awaitTurn(_ ticket: Int) {
            turn.lock()
            while state.withLock({ $0.nextDelivery }) != ticket { turn.wait() }
            turn.unlock()
        }

        /// Waits until no worker holds a frame.
        func drain() {
            turn.lock()
            while state.withLock({ $0.holding.contains(true) }) { turn.wait() }
            turn.unlock()
        }

        /// Ends the threads (from the consumer's release; the threads do not hold it): idle ones
        /// at once, a thread holding a frame once it has handed it on. Waits for them, unless
        /// called on one of them (the consumer released in its own consumer's call): the others
        /// may be waiting for that one's turn, so they end on their own.
        func shutDown() {
            let idle = state.withLock { state -> [Int] in
                state.stopping = true
                return state.holding.indices.filter { !state.holding[$0] }
            }
            for index in idle where workers[index].thread != nil {
                workers[index].frame = nil
                workers[index].work.signal()
            }
            guard !workers.contains(where: { $0.thread?.isCurrent == true }) else { return }
            for worker in workers { worker.thread?.join() }
        }
    }
}
