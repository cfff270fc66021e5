import Logging
import MediaDevicesCore
import Synchronization
import Glibc

/// Hands each frame from a source's capture thread to its consumer and its asynchronous
/// sequences, and keeps the statistics. One per source; it outlives stream restarts (format
/// changes, device switches), so consumers never re-subscribe.
final class FrameDelivery: Sendable {
    /// A sequence the delivery feeds. A class, so that the per-frame loop reads it in place
    /// rather than copying it out of the array.
    // @unchecked Sendable: `converter` (one thread at a time) is used only on the capture thread.
    private final class Feed: @unchecked Sendable {
        let queue: FrameQueue
        /// Converts frames to the output the sequence asked for; `nil` delivers them as they come.
        let converter: FrameConverter?

        init(queue: FrameQueue, converter: FrameConverter?) {
            self.queue = queue
            self.converter = converter
        }
    }

    /// Keeps a sequence fed while the application holds it (or an iterator of it): when the last
    /// one goes (dropped, or its task cancelled), the delivery stops feeding its queue. This,
    /// rather than a weak reference to the queue, because a weakly referenced object pays the
    /// runtime's slow reference counting on every retain and release, several times a frame.
    final class Subscription: Sendable {
        private let delivery: FrameDelivery
        private let queue: FrameQueue

        fileprivate init(delivery: FrameDelivery, queue: FrameQueue) {
            self.delivery = delivery
            self.queue = queue
        }

        deinit { delivery.stopFeeding(queue) }
    }

    private struct State {
        var consumer: (any VideoFrameConsumer)? {
            didSet { converting = (consumer as? ConvertingConsumer).flatMap { $0.parallel == nil ? $0 : nil } }
        }
        /// The consumer, when it converts frames on the capture thread (it may then share the
        /// frame's MJPEG decode; one converting on threads of its own copies the frame instead).
        var converting: ConvertingConsumer?
        var queues: [Feed] = []
        var accumulator = StatisticsAccumulator()
        /// Between `beginRun()` and the `finish` that ends it: the consumer hears of the end once.
        var runActive = false
        /// From `beginRun()` to the run's first frame, which the log describes.
        var firstFramePending = false
        /// When the run began (monotonic nanoseconds), for the first frame's delay.
        var runBegan: UInt64 = 0
    }

    private let state = Mutex(State())
    /// Runs tasks that prefer it on the capture thread (see ``CaptureExecutor``).
    let executor = CaptureExecutor()
    /// The frames the sequences handed out leased and copied this run (counted by the queues).
    private let handOut = HandOutCounters()
    /// Decodes an MJPEG frame once for all its converting consumers (capture thread only).
    private let sharedDecoder = JPEGFrameDecoder()
    /// The device errors about its frames name (the source core keeps it current).
    private let label = Mutex<String?>(nil)
    /// The application's logger (`nil`: nothing is logged); read at a run's events, never per frame.
    private let loggerBox = Mutex<Logger?>(nil)
    /// Lines held by `logAfterControl` until the control lock is released (`logHeldLines`).
    private let heldLines = Mutex<[(level: Logger.Level, message: Logger.Message, metadata: Logger.Metadata)]>([])
    /// `frameTimeout` in nanoseconds (0: none).
    private let stallLimit = Atomic<UInt64>(0)
    /// When the run began or last delivered a frame (monotonic nanoseconds).
    private let lastProgress = Atomic<UInt64>(0)
    /// The V4L2 codes of MJPEG and JPEG, compared per frame.
    private static let jpegCodes = (PixelFormat.mjpeg.v4l2Code, PixelFormat.jpeg.v4l2Code)

    /// How a frame's converting consumers get their MJPEG picture.
    private enum Decode {
        /// Each converter decodes for itself (not MJPEG, or one converting consumer).
        case own
        /// Decoded once, at the largest scale any of them needs.
        case shared(DecodedJPEG)
        /// The one decode failed: every converting consumer drops the frame.
        case failed(any Error)
    }

    /// The callback consumer.
    var consumer: (any VideoFrameConsumer)? {
        get { state.withLock { $0.consumer } }
        set { state.withLock { $0.consumer = newValue } }
    }

    /// The device (path or unique ID) that errors about its frames name; read only when a frame
    /// is dropped.
    var deviceLabel: String? {
        get { label.withLock { $0 } }
        set { label.withLock { $0 = newValue } }
    }

    /// Where the run's events are logged (see `log`); `nil`: nowhere.
    var logger: Logger? {
        get { loggerBox.withLock { $0 } }
        set { loggerBox.withLock { $0 = newValue } }
    }

    /// Logs `message` at `level` with the device and `metadata`, when there is a logger.
    func log(_ level: Logger.Level, _ message: @autoclosure () -> Logger.Message, _ metadata: @autoclosure () -> Logger.Metadata = [:]) {
        guard let logger else { return }
        var all = metadata()
        all["device"] = "\(deviceLabel ?? "")"
        logger.log(level: level, message(), metadata: all)
    }

    /// Holds a line that a device part makes under the source's control lock (a log handler is
    /// the application's code, which must not run under it); `logHeldLines()` logs it.
    func logAfterControl(_ level: Logger.Level, _ message: Logger.Message, _ metadata: Logger.Metadata) {
        guard logger != nil else { return }
        heldLines.withLock { $0.append((level, message, metadata)) }
    }

    /// Logs the lines `logAfterControl` held, in order (called with no lock held).
    func logHeldLines() {
        let lines = heldLines.withLock { lines in
            defer { lines.removeAll() }
            return lines
        }
        for line in lines { log(line.level, line.message, line.metadata) }
    }

    /// Statistics so far.
    var statistics: CaptureStatistics {
        var statistics = state.withLock { $0.accumulator.statistics }
        statistics.leasedFrames = handOut.leased.load(ordering: .relaxed)
        statistics.copiedFrames = handOut.copied.load(ordering: .relaxed)
        return statistics
    }

    /// How long a run may go without delivering a frame before it ends with `.timeout`; `nil`
    /// (the default): no limit. Read by the capture loops while they wait (`stall(device:)`).
    var frameTimeout: Duration? {
        get {
            let limit = stallLimit.load(ordering: .relaxed)
            return limit == 0 ? nil : .nanoseconds(Int64(clamping: limit))
        }
        set {
            let nanoseconds = newValue.map { max($0.nanosecondCount, 1) } ?? 0
            stallLimit.store(UInt64(clamping: nanoseconds), ordering: .relaxed)
        }
    }

    /// The error that ends a run which has gone longer than `frameTimeout` without a frame
    /// (since it began or its last frame), or nil. Called by the capture loops while no frame
    /// comes; allocates nothing unless it fails.
    func stall(device: String) -> MediaDevicesError? {
        let limit = stallLimit.load(ordering: .relaxed)
        guard limit > 0 else { return nil }
        let now = MonotonicClock.now(), last = lastProgress.load(ordering: .relaxed)
        guard now > last, now - last > limit else { return nil }
        return MediaDevicesError(.timeout, device: device, operation: "capture", errno: ETIMEDOUT,
                                 detail: "No frame for \(Duration.nanoseconds(Int64(clamping: now - last))) while the stream kept running (frameTimeout \(Duration.nanoseconds(Int64(clamping: limit)))): the camera stopped sending (a stalled sensor pipeline or driver, a paused PipeWire node); check the camera and start capture again, or set a longer frameTimeout")
    }

    /// A new asynchronous sequence fed by this delivery, converting each frame with `converter`
    /// (on the capture thread, into the sequence's pooled buffers) when there is one.
    func makeFrames(bufferSize: Int, converter: FrameConverter? = nil) -> VideoFrames {
        let queue = FrameQueue(capacity: max(1, bufferSize), executor: executor, handOut: handOut)
        state.withLock { $0.queues.append(Feed(queue: queue, converter: converter)) }
        return VideoFrames(queue: queue, subscription: Subscription(delivery: self, queue: queue))
    }

    /// The application let go of `queue`'s sequence: it gets no more frames.
    private func stopFeeding(_ queue: FrameQueue) {
        state.withLock { $0.queues.removeAll { $0.queue === queue } }
    }

    /// A run starts: statistics begin at zero, and its end will be reported to the consumer.
    func beginRun() {
        state.withLock {
            $0.accumulator = StatisticsAccumulator()
            $0.runActive = true
            $0.firstFramePending = true
            $0.runBegan = MonotonicClock.now()
            lastProgress.store(MonotonicClock.now(), ordering: .relaxed)
            handOut.leased.store(0, ordering: .relaxed)
            handOut.copied.store(0, ordering: .relaxed)
        }
    }

    /// The stream restarted (new format or device): sequence numbers begin again.
    func streamRestarted() {
        lastProgress.store(MonotonicClock.now(), ordering: .relaxed)
        state.withLock { $0.accumulator.restartSequence() }
    }

    /// Counts a screen grab skipped because nothing had changed (no frame, no sequence gap).
    func recordUnchangedFrame() { recordUnchangedFrames(1) }

    /// Counts `count` deadlines that passed with nothing new on the screen.
    func recordUnchangedFrames(_ count: Int) {
        if count > 0 { state.withLock { $0.accumulator.recordUnchangedFrames(count) } }
    }

    /// Delivers one frame: records it, calls the consumer, copies it into each queue.
    /// Runs on the capture thread and allocates nothing in steady state.
    func deliver(_ frame: VideoFrame) {
        lastProgress.store(MonotonicClock.now(), ordering: .relaxed)
        if let defect = Self.framingDefect(of: frame, device: deviceLabel) {
            // Dropped for all: a converting consumer counts it as its own decode failure would.
            let converting = state.withLock { state in
                state.accumulator.recordUnusableFrame(sequence: frame.sequence, defect)
                return state.converting
            }
            converting?.drop(frame, because: defect)
            return
        }
        let (consumer, converting, queues, firstSince) = state.withLock { state in
            state.accumulator.record(timestamp: frame.timestamp, sequence: frame.sequence,
                                     captureDelay: frame.captureDelay)
            if let lendable = frame.lendable { state.accumulator.recordBuffers(lendable.lender.bufferCount) }
            let firstSince: UInt64? = state.firstFramePending ? state.runBegan : nil
            state.firstFramePending = false
            return (state.consumer, state.converting, state.queues, firstSince)
        }
        if let firstSince {
            let milliseconds = (MonotonicClock.now() &- firstSince) / 1_000_000
            log(.info, "first frame", ["format": "\(frame.format)", "milliseconds": "\(milliseconds)"])
        }
        let decode = decodeOnce(frame, converting: converting, queues: queues)
        if case .shared(let picture) = decode {
            // Counted before any consumer sees the frame, so that statistics read by one that
            // has it include its decode.
            state.withLock { $0.accumulator.recordDecode(at: picture.scale.fraction, reduced: !picture.scale.isFull, shared: true) }
        }
        if let converting, case .shared(let picture) = decode {
            converting.consumeFrame(frame, decoded: picture)
        } else if let converting, case .failed(let error) = decode {
            converting.drop(frame, because: error)
        } else {
            consumer?.consumeFrame(frame)
        }
        var drops = 0
        var corrupt: MediaDevicesError?
        var ownScale: JPEGScale?
        // An index loop: in unoptimized builds `for in` goes through the stdlib's generic
        // iterator, whose coroutine frame is heap-allocated per call.
        var index = 0
        while index < queues.count {
            let entry = queues[index]
            if let converter = entry.converter {
                do {
                    switch decode {
                    case .own:
                        drops += try entry.queue.push(frame, converter: converter)
                        ownScale = converter.lastDecodeScale
                    case .shared(let picture): drops += try entry.queue.push(frame, converter: converter, decoded: picture)
                    case .failed(let error): throw error
                    }
                } catch let error as MediaDevicesError where error.code == .corruptFrame {
                    corrupt = error
                } catch {
                    // The sequence cannot be served at all (a format it cannot read): end it.
                    entry.queue.finish(error: error as? MediaDevicesError)
                }
            } else {
                drops += entry.queue.push(frame)
            }
            index += 1
        }
        if case .own = decode, let converting, let scale = converting.converter.lastDecodeScale { ownScale = scale }
        // A reduced decode each consumer made for itself is known only once it converted.
        let scale = ownScale.flatMap { $0.isFull ? nil : $0 }
        if drops > 0 || corrupt != nil || scale != nil {
            state.withLock { state in
                state.accumulator.recordQueueDrops(drops)
                if let corrupt { state.accumulator.recordCorruptFrame(corrupt) }
                if let scale { state.accumulator.recordDecode(at: scale.fraction, reduced: true, shared: false) }
            }
        }
    }

    /// The error that drops an MJPEG frame without its start or end (see `JPEGFraming`) before
    /// any consumer sees it; nil for a whole one, a frame of another format, or one with no
    /// bytes mapped (a DMA-buf frame). Allocates nothing for a whole frame.
    private static func framingDefect(of frame: VideoFrame, device: @autoclosure () -> String?) -> MediaDevicesError? {
        let code = frame.format.pixelFormat.v4l2Code
        guard code == jpegCodes.0 || code == jpegCodes.1, frame.planeCount > 0 else { return nil }
        let whole = frame.plane(0).bytes
        guard whole.count > 0 else { return nil }
        let data = UnsafeRawBufferPointer(rebasing: whole[0..<min(max(frame.bytesUsed, 0), whole.count)])
        guard let defect = JPEGFraming.defect(in: data) else { return nil }
        return MediaDevicesError(.corruptFrame, device: device(), operation: "capture",
                                 detail: defect + " and counted; if it happens often, give the camera a USB port of its own (other devices on its bus take bandwidth) or ask for a smaller size or rate")
    }

    /// When `frame` is MJPEG and more than one consumer converts it, all asking for the same
    /// IDCT, decodes it once at the largest DCT scale any of them needs; otherwise leaves each
    /// converter to decode for itself (so each gets exactly the IDCT it asked for).
    private func decodeOnce(_ frame: VideoFrame, converting: ConvertingConsumer?, queues: [Feed]) -> Decode {
        let code = frame.format.pixelFormat.v4l2Code
        guard code == Self.jpegCodes.0 || code == Self.jpegCodes.1 else { return .own }
        var first = converting?.converter
        var count = first == nil ? 0 : 1
        var index = 0
        while index < queues.count {
            if let converter = queues[index].converter {
                count += 1
                if first == nil { first = converter }
                if converter.output.jpegDecoding != first!.output.jpegDecoding { return .own }
            }
            index += 1
        }
        guard count > 1, let first else { return .own }
        do {
            let (data, header) = try sharedDecoder.header(of: frame, device: first.device)
            let source = Size(width: header.width, height: header.height)
            let reductions = JPEGScale.reductions
            var scale = reductions.isEmpty ? JPEGScale.full : reductions[0]
            // Every converter's need, the consumer's first (index -1).
            index = converting == nil ? 0 : -1
            while index < queues.count {
                if let converter = index < 0 ? converting?.converter : queues[index].converter {
                    let needed = converter.decodeScale(source: source, layout: header.layout, orientation: frame.orientation)
                    if scale.isSmaller(than: needed) { scale = needed }
                }
                index += 1
            }
            return .shared(try sharedDecoder.decode(data, header: header, scale: scale, decoding: first.output.jpegDecoding,
                                                    device: first.device))
        } catch {
            return .failed(error)
        }
    }

    /// Logs the end of a run: an error (it ended by itself), or a stop with its figures, and a
    /// warning when frames were dropped.
    private func logEnd(error: MediaDevicesError?) {
        guard logger != nil else { return }
        let figures = statistics
        let counts: Logger.Metadata = ["delivered": "\(figures.deliveredFrames)", "dropped": "\(figures.droppedFrames)"]
        if let error {
            log(.error, "capture ended: \(error)", counts.merging(["code": "\(error.code)"]) { $1 })
        } else {
            log(.info, "capture stopped", counts)
        }
        if figures.droppedFrames > 0 {
            log(.warning, "frames were dropped", counts)
        }
    }

    /// Whether a delivery run is open: begun and not yet finished (a run that ended by itself,
    /// unplugged say, has finished it, and a restart must begin a new one).
    var isRunActive: Bool { state.withLock { $0.runActive } }

    /// Capturing ended (or never started): ends every sequence (throwing `error`, if any) and,
    /// once per run, tells the consumer.
    func finish(error: MediaDevicesError?) {
        let (consumer, queues, endedRun) = state.withLock { state in
            let queues = state.queues
            state.queues.removeAll()
            let consumer = state.runActive ? state.consumer : nil
            let endedRun = state.runActive
            state.runActive = false
            return (consumer, queues, endedRun)
        }
        if endedRun { logEnd(error: error) }
        for entry in queues { entry.queue.finish(error: error) }
        consumer?.captureDidStop(error: error)
    }
}
