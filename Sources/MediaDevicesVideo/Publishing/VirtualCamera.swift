import Logging
import MediaDevicesCore
import Synchronization
import Glibc

/// Publishes a ``VideoSource`` as a camera other processes open: a v4l2loopback device
/// (`/dev/videoN`) that Chromium, Firefox, Zoom, FFmpeg and GStreamer read as a webcam.
///
/// ```swift
/// let pattern = TestPatternSource()
/// let camera = VirtualCamera(source: pattern, outputs: [.v4l2Loopback(path: "/dev/video10")],
///                            format: FormatRequest(pixelFormat: .yu12, size: Size(width: 1280, height: 720)))
/// try camera.start()          // the device is capture-ready; the source starts when someone reads
/// for await event in camera.events { print(event) }   // until camera.stop()
/// ```
///
/// **Frames.** The source's frames reach the device through a ``VideoSource/frames(bufferSize:output:)``
/// sequence read on the source's ``VideoSource/captureExecutor``: converted by the pixel pipeline
/// (crop to the aspect ratio, scale, I420 or NV12) on the capture thread and written there, one
/// `write()` per frame, with no allocation per frame. The source's own consumer and sequences
/// are left to the application.
///
/// **On demand.** v4l2loopback tells a producer nothing of its readers: no event when one
/// opens, starts streaming or closes, and no open count in sysfs (only `format`, `buffers` and
/// `max_openers`); a reader's `VIDIOC_STREAMON` fails with `EIO` until a producer has written
/// once, and the control `keep_format` keeps the device capture-ready after that with nobody
/// writing. So ``start()`` sets the format and `keep_format`, which makes the device a camera
/// at once (with `exclusive_caps=1` it then announces capture only, as Chromium needs to list
/// it), and a thread looks in `/proc/*/fd` for other processes holding the node, as `fuser`
/// does, four times a second. A process that holds it in two scans in a row is a consumer (a
/// browser listing cameras or `v4l2-ctl --all` only looks, for milliseconds, and starts
/// nothing); with `onDemand`, the first one starts the source and the scan after the last has
/// gone stops it, so the camera (and its LED) is off within half a second of the last reader
/// leaving. A consumer is a process that has the node open, whether it streams or not; only
/// processes this one may inspect are seen (the same user's; all, as root).
///
/// **Thread safety.** Every member may be called from any thread. ``start()`` and ``stop()``
/// call the source's `start()` and `stop()` (which join its capture thread), so don't call
/// them from the source's own consumer callback.
public final class VirtualCamera: Sendable {
    /// Where a ``VirtualCamera`` is published.
    public enum Output: Sendable, Hashable, CustomStringConvertible {
        /// A v4l2loopback device node (`/dev/video10`; a link to one is resolved). Load the module
        /// with `exclusive_caps=1` for Chromium to list it:
        /// `modprobe v4l2loopback video_nr=10 exclusive_caps=1 card_label="Virtual Camera"`.
        case v4l2Loopback(path: String)

        /// The device's path.
        public var description: String {
            switch self {
            case .v4l2Loopback(let path): path
            }
        }
    }

    /// The source published.
    public let source: VideoSource
    /// Where it is published.
    public let outputs: [Output]
    /// The format asked for on the outputs (`nil`: I420 at the source's size, at its rate).
    public let format: FormatRequest?
    /// Whether the source runs only while a process reads an output.
    public let onDemand: Bool
    /// Where starts, stops, consumers and failures are logged (never per frame).
    private let logger: Logger?
    private let events_ = VirtualCameraEvents()
    /// Frames written and writes that failed, counted on the capture thread.
    private let figures = WriteFigures()

    /// How often the outputs' openers are scanned.
    static let scanInterval: Duration = .milliseconds(250)

    private enum Phase { case idle, starting, running, stopping }

    private struct State {
        var phase = Phase.idle
        /// `stop()` came while `start()` was still starting: it stops when done.
        var stopRequested = false
        var writers: [LoopbackWriter] = []
        var chosen: LoopbackFormat?
        /// Whether we started the source (and it has not been stopped).
        var running = false
        /// The source failed or could not start with these consumers: wait for a new one.
        var failed = false
        var pump: Task<Void, Never>?
        var watcher: CaptureThread?
        var wake: WakeUpEvent?
        var consumers: [VirtualCameraConsumer] = []
    }

    private let state = Mutex(State())

    /// A virtual camera publishing `source` on `outputs` in `format` (`nil`: I420 at the
    /// source's size and rate; see ``format``). Nothing opens until ``start()``.
    /// - Parameters:
    ///   - source: what is published; the virtual camera starts and stops it (see `onDemand`).
    ///   - outputs: where it is published (a v4l2loopback node).
    ///   - format: the published pixel format, size and rate (`nil`: I420 at the source's).
    ///   - onDemand: `true` (the default): the source runs only while a process reads; `false`:
    ///     from ``start()`` to ``stop()``.
    ///   - logger: where starts, stops, consumers and failures are logged; `nil`: nowhere.
    public init(source: VideoSource, outputs: [Output], format: FormatRequest? = nil, onDemand: Bool = true,
                logger: Logger? = nil) {
        self.source = source
        self.outputs = outputs
        self.format = format
        self.onDemand = onDemand
        self.logger = logger
    }

    deinit { stop() }

    /// Opens the outputs and sets their format, so that they are cameras from now on; starts
    /// the source now (`onDemand` false) or when the first reader opens an output.
    /// Initializes the source (``VideoSource/initialize()``: it opens, it does not stream) to learn
    /// its format. Does nothing when started.
    /// - Throws: what ``VideoSource/initialize()`` throws; for a loopback output
    ///   ``/MediaDevicesCore/MediaDevicesError/Code/notFound`` (no such node, module not loaded:
    ///   the remedy says how to load it), ``/MediaDevicesCore/MediaDevicesError/Code/invalidValue``
    ///   (not a v4l2loopback node), ``/MediaDevicesCore/MediaDevicesError/Code/permissionDenied``,
    ///   ``/MediaDevicesCore/MediaDevicesError/Code/busy`` (its `max_openers` reached, or readers
    ///   hold another format), ``/MediaDevicesCore/MediaDevicesError/Code/unsupportedFormat``;
    ///   with `onDemand` false, what the source's ``VideoSource/start()`` throws.
    ///   ``/MediaDevicesCore/MediaDevicesError/Code/invalidState`` while another thread starts
    ///   or stops it, and with no outputs. Nothing is left open.
    public func start() throws(MediaDevicesError) {
        let proceed = try state.withLock { (state) throws(MediaDevicesError) -> Bool in
            switch state.phase {
            case .running: return false
            case .starting, .stopping:
                throw MediaDevicesError(.invalidState, device: label, operation: "VirtualCamera.start",
                                        detail: "Another thread is starting or stopping this virtual camera")
            case .idle:
                state.phase = .starting
                state.stopRequested = false
                return true
            }
        }
        guard proceed else { return }
        do {
            try open()
        } catch {
            teardown(finishEvents: false)
            throw error
        }
        logger?.info("virtual camera published", metadata: metadata)
        if !onDemand, let error = startSource() {
            teardown(finishEvents: false)
            throw error
        }
        let wake: WakeUpEvent
        let watcher: CaptureThread
        do {
            wake = try WakeUpEvent()
            let nodes = outputs.map { output -> (String, Output) in
                switch output {
                case .v4l2Loopback(let path): (NodeOpeners.canonical(path), output)
                }
            }
            // Weak: a camera the application lets go of without `stop()` stops in its deinit.
            watcher = try CaptureThread(name: "md-vcam-watch") { [weak self] in
                var tracker = ConsumerTracker()
                let interval = Int32(VirtualCamera.scanInterval.nanosecondCount / 1_000_000)
                while true {
                    var descriptor = pollfd(fd: wake.descriptor, events: Int16(POLLIN), revents: 0)
                    if poll(&descriptor, 1, interval) > 0 { return }
                    guard let self, self.scan(nodes: nodes, tracker: &tracker) else { return }
                }
            }
        } catch {
            teardown(finishEvents: false)
            throw error
        }
        let stopNow = state.withLock { state in
            state.wake = wake
            state.watcher = watcher
            state.phase = .running
            return state.stopRequested
        }
        if stopNow { stop() }
    }

    /// Stops the source and closes the outputs (they stay listed and capture-ready: v4l2loopback
    /// keeps the format), and ends the ``events`` sequences. Does nothing when stopped; while
    /// another thread starts it, that start stops when done.
    public func stop() {
        let threads = state.withLock { state -> (CaptureThread?, WakeUpEvent?)? in
            switch state.phase {
            case .idle, .stopping: return nil
            case .starting:
                state.stopRequested = true
                return nil
            case .running:
                state.phase = .stopping
                return (state.watcher.take(), state.wake.take())
            }
        }
        guard let (watcher, wake) = threads else { return }
        wake?.signal()
        watcher?.join()
        teardown(finishEvents: true)
    }

    /// Stops the source, closes the writers, forgets the consumers; back to idle.
    private func teardown(finishEvents: Bool) {
        stopSource()
        let (writers, left) = state.withLock { state in
            defer {
                state.writers.removeAll()
                state.consumers.removeAll()
                state.chosen = nil
                state.failed = false
                state.phase = .idle
            }
            return (state.writers, state.consumers)
        }
        for writer in writers { writer.close() }
        for consumer in left { events_.send(.consumerLeft(consumer)) }
        if !writers.isEmpty { logger?.info("virtual camera closed", metadata: metadata) }
        if finishEvents { events_.finish() }
    }

    /// The processes reading an output now (see "On demand" above for what counts).
    public var consumers: [VirtualCameraConsumer] { state.withLock { $0.consumers } }

    /// A new sequence of what happens from now on: consumers connecting and leaving, the source
    /// starting, stopping and failing. It ends at ``stop()``; a reader that falls 64 events
    /// behind loses the oldest.
    public var events: some AsyncSequence<VirtualCameraEvent, Never> & Sendable { events_.makeStream() }

    /// Whether the source is running for this camera.
    public var isSourceRunning: Bool { state.withLock { $0.running } }

    /// The format published on the outputs, once started.
    public var publishedFormat: VideoFormat? {
        state.withLock { state in
            state.chosen.map { VideoFormat(pixelFormat: $0.pixelFormat, width: $0.size.width, height: $0.size.height) }
        }
    }

    /// Frames written to the outputs (each frame once, whatever the number of outputs), and
    /// writes that failed, since the camera was made.
    package var writeFigures: (written: Int, failed: Int) {
        (figures.written.load(ordering: .relaxed), figures.failed.load(ordering: .relaxed))
    }

    // MARK: Outputs

    private var label: String { outputs.map(\.description).joined(separator: ",") }

    private var metadata: Logger.Metadata { ["outputs": "\(label)"] }

    /// Chooses the format and opens every output; nothing stays open when one fails.
    private func open() throws(MediaDevicesError) {
        guard !outputs.isEmpty else {
            throw MediaDevicesError(.invalidState, device: nil, operation: "VirtualCamera.start",
                                    detail: "A virtual camera needs at least one output", remedy: "Give outputs: [.v4l2Loopback(path: \"/dev/video10\")]")
        }
        try source.initialize()
        let chosen = try LoopbackFormat.choose(format, source: source.captureSettings?.format,
                                               sourceRate: source.captureSettings?.frameRate, device: label)
        var writers: [LoopbackWriter] = []
        for output in outputs {
            switch output {
            case .v4l2Loopback(let path):
                do {
                    writers.append(try LoopbackWriter(path: path, pixelFormat: chosen.pixelFormat, size: chosen.size,
                                                      frameRate: chosen.frameRate))
                } catch {
                    for writer in writers { writer.close() }
                    throw error
                }
            }
        }
        state.withLock { state in
            state.writers = writers
            state.chosen = chosen
        }
    }

    // MARK: The source

    /// Starts the source and the task that writes its frames; returns the failure, if any (also
    /// sent as an event). Called by `start()` before the watcher runs, then only by the watcher.
    @discardableResult
    private func startSource() -> MediaDevicesError? {
        guard let (chosen, writers) = state.withLock({ state in state.chosen.map { ($0, state.writers) } }) else { return nil }
        do {
            try source.start()
            let frames: VideoFrames
            if let conversion = chosen.conversion {
                frames = try source.frameSequence(bufferSize: 2, output: conversion)
            } else {
                frames = source.frameSequence(bufferSize: 2)
            }
            let pump = VirtualCamera.pump(frames, to: writers, executor: source.captureExecutor, figures: figures,
                                          events: events_, device: label)
            state.withLock { state in
                state.pump = pump
                state.running = true
                state.failed = false
            }
            events_.send(.sourceStarted)
            logger?.info("virtual camera's source started", metadata: metadata)
            return nil
        } catch {
            source.stop()
            state.withLock { $0.failed = true }
            events_.send(.sourceFailed(error))
            logger?.error("virtual camera's source could not start: \(error)", metadata: metadata)
            return error
        }
    }

    /// The task that writes each frame of `frames` to `writers`, on `executor` (the source's
    /// capture thread: one wake-up per frame, no allocation), counting in `figures`; a failure of
    /// the source is sent to `events`.
    static func pump(_ frames: VideoFrames, to writers: [LoopbackWriter], executor: CaptureExecutor, figures: WriteFigures,
                     events: VirtualCameraEvents, device: String) -> Task<Void, Never> {
        Task(executorPreference: executor) {
            do {
                for try await buffer in frames {
                    buffer.withFrame { frame in
                        var index = 0
                        var failure: Int32 = 0
                        while index < writers.count {
                            let result = writers[index].write(frame)
                            if result != 0 { failure = result }
                            index += 1
                        }
                        if failure == 0 {
                            figures.written.add(1, ordering: .relaxed)
                        } else {
                            figures.failed.add(1, ordering: .relaxed)
                            figures.lastErrno.store(failure, ordering: .relaxed)
                        }
                    }
                }
            } catch {
                events.send(.sourceFailed(MediaDevicesError.converting(error, device: device, operation: "capture")))
            }
        }
    }

    /// Stops the source if it runs for us; whether it did.
    @discardableResult
    private func stopSource() -> Bool {
        guard let pump = state.withLock({ state -> Task<Void, Never>?? in
            guard state.running else { return nil }
            state.running = false
            return .some(state.pump.take())
        }) else { return false }
        source.stop()  // ends the frame sequence: the pump's loop ends
        pump?.cancel()
        events_.send(.sourceStopped)
        logger?.info("virtual camera's source stopped", metadata: metadata)
        return true
    }

    // MARK: On demand

    /// One scan of the watcher thread (every `scanInterval` until woken to stop): publishes the
    /// consumers and starts or stops the source. Returns false once the camera is stopping.
    private func scan(nodes: [(String, Output)], tracker: inout ConsumerTracker) -> Bool {
        if state.withLock({ $0.phase == .stopping }) { return false }
        func consumer(_ opener: NodeOpeners.Opener) -> VirtualCameraConsumer {
            VirtualCameraConsumer(pid: opener.pid, command: opener.command,
                                  output: nodes.first { $0.0 == opener.node }?.1 ?? .v4l2Loopback(path: opener.node))
        }
        let (connected, left) = tracker.update(NodeOpeners().scan(nodes.map(\.0)))
        let consumers = tracker.consumers.map(consumer)
        state.withLock { $0.consumers = consumers }
        for opener in left {
            events_.send(.consumerLeft(consumer(opener)))
            logger?.info("virtual camera consumer left: \(consumer(opener))", metadata: metadata)
        }
        for opener in connected {
            events_.send(.consumerConnected(consumer(opener)))
            logger?.info("virtual camera consumer connected: \(consumer(opener))", metadata: metadata)
        }
        reconcile(hasConsumers: !consumers.isEmpty, newConsumer: !connected.isEmpty)
        return true
    }

    /// Starts or stops the source for the consumers there are.
    private func reconcile(hasConsumers: Bool, newConsumer: Bool) {
        let want = !onDemand || hasConsumers
        let (running, failed) = state.withLock { ($0.running, $0.failed) }
        if running && !source.isCapturing {
            // It ended by itself (failed; the pump sent why): restart only for a new consumer.
            stopSource()
            state.withLock { $0.failed = true }
            if want && newConsumer { startSource() }
            return
        }
        if want && !running && (!failed || newConsumer) {
            startSource()
        } else if !want && running {
            stopSource()
        }
        if !want { state.withLock { $0.failed = false } }
    }
}

/// The pump's counters.
final class WriteFigures: Sendable {
    let written = Atomic<Int>(0)
    let failed = Atomic<Int>(0)
    let lastErrno = Atomic<Int32>(0)
}
