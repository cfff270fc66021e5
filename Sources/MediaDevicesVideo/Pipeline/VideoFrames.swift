import MediaDevicesCore
import Synchronization

/// The sequence ``VideoSource/frames(bufferSize:)`` returns (see there), with its own counters;
/// package-internal: the command-line tool and the tests get it from `frameSequence(bufferSize:)`.
@usableFromInline
package struct VideoFrames: AsyncSequence, Sendable {
    /// Each element is one frame: the driver's buffer on lease or a pooled copy.
    @usableFromInline package typealias Element = VideoFrameBuffer
    /// What the sequence throws: the source's failure.
    @usableFromInline package typealias Failure = MediaDevicesError
    let queue: FrameQueue
    /// Keeps the source feeding `queue` while this sequence or an iterator of it lives (`nil` for
    /// a queue fed directly).
    private let subscription: FrameDelivery.Subscription?

    init(queue: FrameQueue, subscription: FrameDelivery.Subscription? = nil) {
        self.queue = queue
        self.subscription = subscription
    }

    /// Frames this sequence dropped because its buffer was full.
    package var droppedFrames: Int { queue.figures.dropped }
    /// Frames this sequence delivered as the driver's own buffer, on lease.
    package var leasedFrames: Int { queue.figures.leased }
    /// Frames that could have been leased but were copied, because a lease would have left the
    /// driver fewer buffers than it needs (the application held too many).
    package var copiedFrames: Int { queue.figures.copied }

    /// The iterator.
    @usableFromInline
    package struct AsyncIterator: AsyncIteratorProtocol {
        /// What the iterator throws: the source's failure.
        @usableFromInline package typealias Failure = MediaDevicesError
        @usableFromInline let queue: FrameQueue
        /// Keeps the sequence fed while the iterator lives.
        let subscription: FrameDelivery.Subscription?

        init(queue: FrameQueue, subscription: FrameDelivery.Subscription? = nil) {
            self.queue = queue
            self.subscription = subscription
        }

        /// The next frame, `nil` at the end; throws the source's failure. This is what
        /// `for try await` calls: it runs on the caller's isolation, with no hop to another
        /// executor unless it has to wait, so a reader on the `captureExecutor` that finds a frame
        /// (or steps the capture loop to one) costs no executor switch.
        ///
        /// Inlinable, so that it is compiled into the caller: called across modules, a function
        /// with an isolated parameter switches to that isolation's executor on entry (for `nil`,
        /// the generic one), which under a task-executor preference takes the task's
        /// status-record lock on every frame.
        @inlinable
        package mutating func next(isolation actor: isolated (any Actor)?) async throws(MediaDevicesError) -> VideoFrameBuffer? {
            switch try queue.nextWithoutWaiting() {
            case .frame(let buffer): return buffer
            case .end: return nil
            case .wait: return try await queue.waitForNext()
            }
        }

        /// The next frame, `nil` at the end; throws the source's failure.
        @usableFromInline package mutating func next() async throws(MediaDevicesError) -> VideoFrameBuffer? { try await next(isolation: nil) }
    }

    /// Makes the iterator.
    @usableFromInline package func makeAsyncIterator() -> AsyncIterator { AsyncIterator(queue: queue, subscription: subscription) }
}

/// The bounded drop-oldest queue behind ``VideoFrames``, with its own buffer pool.
@usableFromInline
final class FrameQueue: Sendable {
    /// A queued frame: its buffer's place in the pool, and whether it is on lease. (The pool
    /// holds the buffer; a reference here would be retained and released as entries move.)
    private struct Entry {
        let slot: Int
        let leased: Bool
    }

    // `@unchecked Sendable`: its pointers are only followed under the queue's lock.
    private struct State: @unchecked Sendable {
        // The ring, the pool and the pool's per-buffer flags are memory allocated once with the
        // queue, not arrays: each change of an array inside the lock checked the array's
        // uniqueness (8 runtime calls a leased frame, counted with callgrind).
        /// Queued frames: `capacity` slots from `head`, `count` of them filled.
        let ring: UnsafeMutablePointer<Entry?>
        let capacity: Int
        var head = 0
        var count = 0
        /// The pooled buffers: one per queue slot plus two (one being filled, one held by the
        /// application), made as needed; the first `poolCount` are initialized.
        let pool: UnsafeMutablePointer<VideoFrameBuffer>
        var poolCount = 0
        var waiter: UnsafeContinuation<VideoFrameBuffer?, any Error>?
        var finished = false
        var error: MediaDevicesError?
        var figures = Figures()

        /// Per pooled buffer: handed to the reader on lease, and the pool has not ended that lease
        /// yet. (A queued frame is not marked: nobody else holds it, and dropping it ends its
        /// lease.)
        let lent: UnsafeMutablePointer<Bool>
        /// Per pooled buffer: in the ring. Such a buffer is not free, though only the pool holds it.
        let queued: UnsafeMutablePointer<Bool>
        /// How many of `lent` are set: with none, a sweep has nothing to do.
        var lentCount = 0

        /// The most buffers the pool makes.
        var poolCapacity: Int { capacity + 2 }

        init(capacity: Int) {
            self.capacity = capacity
            ring = .allocate(capacity: capacity)
            ring.initialize(repeating: nil, count: capacity)
            pool = .allocate(capacity: capacity + 2)
            lent = .allocate(capacity: capacity + 2)
            lent.initialize(repeating: false, count: capacity + 2)
            queued = .allocate(capacity: capacity + 2)
            queued.initialize(repeating: false, count: capacity + 2)
        }

        /// Frees the memory (the queue is going away); the buffers go, ending their leases.
        mutating func deallocate() {
            ring.deinitialize(count: capacity)
            ring.deallocate()
            pool.deinitialize(count: poolCount)
            pool.deallocate()
            poolCount = 0
            lent.deallocate()
            queued.deallocate()
        }

        /// Gives back the leases of pooled buffers nobody else holds any more (the application
        /// let go of them), so the driver gets its buffers back. Looks only at buffers handed out
        /// on lease (a lease the application ended with `release()` is cleared here too).
        mutating func sweep() {
            guard lentCount > 0 else { return }
            var unseen = lentCount
            var index = 0
            while unseen > 0 && index < poolCount {
                if lent[index] {
                    unseen -= 1
                    if isKnownUniquelyReferenced(&pool[index]) {
                        pool[index].endLease()
                        lent[index] = false
                        lentCount -= 1
                    }
                }
                index += 1
            }
        }

        /// The place in the pool of a buffer nobody holds, if there is one.
        mutating func unheldSlot() -> Int? {
            var index = 0
            while index < poolCount {
                if !queued[index] && isKnownUniquelyReferenced(&pool[index]) { return index }
                index += 1
            }
            return nil
        }

        /// Hands `entry` to the reader: from now on the sweep watches for the reader letting go.
        mutating func handOut(_ entry: Entry) -> VideoFrameBuffer {
            if entry.leased && !lent[entry.slot] {
                lent[entry.slot] = true
                lentCount += 1
            }
            return pool[entry.slot]
        }

        /// A pooled buffer nobody holds and its place in the pool, after dropping the oldest
        /// queued frame if the queue is full and nobody waits; `nil` when the sequence ended or
        /// the application holds every buffer (the frame is then dropped and counted).
        mutating func freeSlot(for frame: VideoFrame, dropped: inout Int) -> Int? {
            if finished { return nil }
            if waiter == nil && count == capacity {
                // Drop the oldest waiting frame; its buffer becomes free again.
                dropOldest()
                dropped += 1
            }
            sweep()
            if let index = unheldSlot() { return index }
            // The pool holds one buffer per queue slot plus two (one being filled, one held by
            // the application); anything beyond means the application keeps frames: drop.
            if poolCount < poolCapacity {
                (pool + poolCount).initialize(to: VideoFrameBuffer(format: frame.format))
                poolCount += 1
                return poolCount - 1
            }
            figures.dropped += 1
            dropped += 1
            return nil
        }

        /// Hands `entry` to the waiting reader (returned with its buffer, to resume once the lock
        /// is released), or queues it (dropping the oldest if full).
        mutating func enqueue(_ entry: Entry, dropped: inout Int) -> Resumption? {
            if let waiter {
                self.waiter = nil
                return Resumption(waiter: waiter, buffer: handOut(entry))
            }
            if count == capacity {
                dropOldest()
                dropped += 1
            }
            ring[(head + count) % capacity] = entry
            queued[entry.slot] = true
            count += 1
            return nil
        }

        /// Takes the oldest queued entry (there must be one).
        mutating func popOldest() -> Entry {
            let entry = ring[head].take()!
            queued[entry.slot] = false
            head = (head + 1) % capacity
            count -= 1
            return entry
        }

        /// Drops the oldest queued frame (nobody else has seen it: its lease ends now).
        mutating func dropOldest() {
            pool[popOldest().slot].endLease()
            figures.dropped += 1
        }
    }

    /// A reader that waited, to resume with its frame once the lock is released.
    private struct Resumption {
        let waiter: UnsafeContinuation<VideoFrameBuffer?, any Error>
        let buffer: VideoFrameBuffer

        func resume() { waiter.resume(returning: buffer) }
    }

    /// What a sequence counted.
    struct Figures {
        var dropped = 0
        var leased = 0
        var copied = 0
    }

    private let state: Mutex<State>
    private let capacity: Int
    /// Whether frames from a lending source are leased rather than copied.
    private let leases: Bool
    /// The executor of the capture thread feeding this queue, when it can step its loop for a
    /// reader there.
    private let executor: CaptureExecutor?

    /// Where the queue also counts the frames it hands out leased and copied (its source's
    /// statistics), when it has one.
    private let handOut: HandOutCounters?

    init(capacity: Int, leases: Bool = true, executor: CaptureExecutor? = nil, handOut: HandOutCounters? = nil) {
        self.capacity = capacity
        self.leases = leases
        self.executor = executor
        self.handOut = handOut
        state = Mutex(State(capacity: capacity))
    }

    deinit { state.withLock { $0.deallocate() } }

    var figures: Figures { state.withLock { $0.figures } }

    /// Whether a task is parked in `next()`.
    var hasWaiter: Bool { state.withLock { $0.waiter != nil } }

    /// Queues `frame`: on lease when its source lends it and the lender agrees, else copied into
    /// a pooled buffer. Returns how many frames were dropped (0 or 1). Called on the capture
    /// thread; allocates nothing once the pool is full-grown.
    func push(_ frame: VideoFrame) -> Int {
        var dropped = 0
        // A lease is taken and queued under one lock with the choice of buffer (a lease copies
        // no pixels, so nothing slow runs under it); a copy is made outside the lock, into a
        // buffer nobody else can reach until it is queued (only this thread pushes).
        let outcome = state.withLock { state -> Pushed in
            guard let slot = state.freeSlot(for: frame, dropped: &dropped) else { return .dropped }
            guard leases, let lendable = frame.lendable, lendable.lease() else { return .toCopy(state.pool[slot], slot: slot) }
            state.pool[slot].lend(frame, from: lendable)
            state.figures.leased += 1
            handOut?.leased.add(1, ordering: .relaxed)
            return .queued(state.enqueue(Entry(slot: slot, leased: true), dropped: &dropped))
        }
        switch outcome {
        case .dropped: break
        case .queued(let resumption): resumption?.resume()
        case .toCopy(let buffer, let slot):
            buffer.fill(from: frame)
            enqueue(slot, copied: leases && frame.lendable != nil, dropped: &dropped)
        }
        return dropped
    }

    /// What `push` did under the lock: queued a lease (with the reader to resume, if one
    /// waited), found a buffer to copy into, or dropped the frame.
    private enum Pushed {
        case queued(Resumption?)
        case toCopy(VideoFrameBuffer, slot: Int)
        case dropped
    }

    /// Converts `frame` with `converter` straight into a pooled buffer (one pass: the converter
    /// reads the driver's buffer and writes the pool's) and queues it. Returns how many frames
    /// were dropped; throws the converter's error (the frame is then not queued).
    /// With `decoded`, the frame's MJPEG picture decoded once for several sequences, the
    /// converter starts from it.
    func push(_ frame: VideoFrame, converter: FrameConverter, decoded: DecodedJPEG? = nil) throws(MediaDevicesError) -> Int {
        var dropped = 0
        let claimed = state.withLock { state -> (VideoFrameBuffer, Int)? in
            state.freeSlot(for: frame, dropped: &dropped).map { (state.pool[$0], $0) }
        }
        guard let (buffer, slot) = claimed else { return dropped }
        if let decoded {
            try converter.convert(frame, decoded: decoded, into: buffer.image) { buffer.adopt($0) }
        } else {
            try converter.convert(frame, into: buffer.image) { buffer.adopt($0) }
        }
        enqueue(slot, copied: false, dropped: &dropped)
        return dropped
    }

    /// Queues the pool's buffer `slot` (filled outside the lock, not leased) or hands it to a
    /// waiting reader; `copied`: a lease was refused and it holds a copy.
    private func enqueue(_ slot: Int, copied: Bool, dropped: inout Int) {
        let resumption = state.withLock { state in
            if copied {
                state.figures.copied += 1
                handOut?.copied.add(1, ordering: .relaxed)
            }
            return state.enqueue(Entry(slot: slot, leased: false), dropped: &dropped)
        }
        resumption?.resume()
    }

    /// What `next()` found under the lock.
    /// (The failure is boxed, `any Error`: a `MediaDevicesError` payload made the enum a large
    /// value copied about on every call.)
    private enum Outcome { case frame(VideoFrameBuffer), end, failure(any Error), wait }

    /// Under the lock: gives back the frame the caller had before (the last loop body's), then
    /// takes the next queued frame, or the end, or else parks `continuation` (when given).
    private func take(_ state: inout State, parking continuation: UnsafeContinuation<VideoFrameBuffer?, any Error>?) -> Outcome {
        state.sweep()
        if state.count > 0 { return .frame(state.handOut(state.popOldest())) }
        if state.finished {
            if let error = state.error {
                state.error = nil
                return .failure(error)
            }
            return .end
        }
        if Task.isCancelled { return .end }
        guard let continuation else { return .wait }
        if state.waiter != nil {
            return .failure(MediaDevicesError(.invalidState, device: nil, operation: "VideoFrames.next()",
                                              detail: "Another task is already waiting on this sequence; iterate it from one task, or make one sequence per reader with frames(bufferSize:)"))
        }
        state.waiter = continuation
        return .wait
    }

    /// What `nextWithoutWaiting()` found.
    @usableFromInline
    enum Ready {
        /// A frame.
        case frame(VideoFrameBuffer)
        /// The sequence ended and is drained.
        case end
        /// Nothing yet: `waitForNext()`.
        case wait
    }

    /// The next frame or the end, if there is one now; throws the source's failure. On the
    /// capture thread (a reader preferring the source's ``CaptureExecutor``) it steps the capture
    /// loop while it may (see `CaptureExecutor.stepForReader`) rather than answer `.wait`.
    /// Synchronous, so that the caller's `next` costs no executor hop when a frame is there.
    @usableFromInline
    func nextWithoutWaiting() throws(MediaDevicesError) -> Ready {
        repeat {
            switch state.withLock({ take(&$0, parking: nil) }) {
            case .frame(let buffer): return .frame(buffer)
            case .end: return .end
            case .failure(let error): throw MediaDevicesError.converting(error, device: nil, operation: "VideoFrames.next()")
            case .wait: break
            }
        } while executor?.stepForReader() == true
        return .wait
    }

    /// The next frame, waiting if none is queued; `nil` once finished and drained.
    @usableFromInline
    func waitForNext() async throws(MediaDevicesError) -> VideoFrameBuffer? {
        do {
            return try await waitForNextUntyped()
        } catch {
            throw MediaDevicesError.converting(error, device: nil, operation: "VideoFrames.next()")
        }
    }

    /// `waitForNext()`, throwing what the continuation was resumed with.
    private func waitForNextUntyped() async throws -> VideoFrameBuffer? {
        try await withTaskCancellationHandler {
            try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<VideoFrameBuffer?, any Error>) in
                switch state.withLock({ take(&$0, parking: continuation) }) {
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
            state.sweep()
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
