import Logging
import MediaDevicesCore
import Synchronization
import Glibc

/// Publishes a ``VideoSource`` as a camera other processes open: a v4l2loopback device
/// (`/dev/videoN`) that Chromium, Firefox, Zoom, FFmpeg and GStreamer read as a webcam, and a
/// PipeWire camera node that `pw-cli`, `gst-launch-1.0 pipewiresrc`, OBS and browsers (through
/// the Camera portal) list, with no kernel module. Both may be given at once: one capture feeds
/// every output, and each distinct format the outputs take is converted once.
///
/// ```swift
/// let pattern = TestPatternSource()
/// let camera = VirtualCamera(source: pattern, outputs: [.v4l2Loopback(path: "/dev/video10")],
///                            format: FormatRequest(pixelFormat: .yu12, size: Size(width: 1280, height: 720)))
/// try camera.start()          // the device is capture-ready; the source starts when someone reads
/// for await event in camera.events { print(event) }   // until camera.stop()
/// ```
///
/// **Frames.** The source's frames reach the outputs through ``VideoSource/frames(bufferSize:output:)``
/// sequences read on the source's ``VideoSource/captureExecutor``, one per distinct format the
/// outputs take (the loopback devices' format; each PipeWire node's, as its consumer
/// negotiated it): converted by the pixel pipeline (crop to the aspect ratio, scale, I420 or
/// NV12) on the capture thread, MJPEG decoded once for all of them, and written there (one
/// `write()` per frame to a loopback device, one copy into a buffer of a node's stream), with no
/// allocation per frame. The source's own consumer and sequences are left to the application.
///
/// **PipeWire node.** ``Output/pipeWire(name:)`` publishes a node (`media.class`
/// `Video/Source`, `media.role` `Camera`, `node.name` and `node.description` the name given,
/// and `mediadevices.virtual` = `true`, which ``CaptureDevice/isVirtual`` reads) from
/// ``start()`` to ``stop()``, listed while idle. It offers the published format first (I420 at
/// the size asked for, by default), then the source's own raw format at its size, and NV12 and
/// I420 at that size and at the usual smaller sizes (1280x720, 640x480, 640x360, 320x240). A
/// PipeWire port has one format at a time: the first consumer's link fixes it, and a second
/// consumer reads that format or fails to link (PipeWire 0.3.65 does not renegotiate a running
/// port). Its consumers are the links from the node that the session's registry announces,
/// each named by its process (`pipewire.sec.pid`) and the reading node. On demand, the source
/// starts when the node's stream goes STREAMING (a consumer linked and started its stream) and
/// stops when it goes PAUSED (the last consumer left: PipeWire stops the graph at once), well
/// within a second. When the source fails while a node's consumers stream, the node is removed
/// rather than left showing its last picture: every link from it goes, so its consumers get no
/// more frames and see their source gone (a ``PipeWireCameraSource`` reading it ends with
/// ``/MediaDevicesCore/MediaDevicesError/Code/disconnected``; GStreamer's `pipewiresrc` of
/// PipeWire 0.3.65 does not end, it waits for a new target). The node is published again at
/// once (a new id, idle); the next consumer to link tries the source again. PipeWire 0.3.65
/// has no end-of-stream a video producer could send.
///
/// **On demand.** v4l2loopback tells a producer nothing of its readers: no event when one
/// opens, starts streaming or closes, and no open count in sysfs (only `format`, `buffers` and
/// `max_openers`); a reader's `VIDIOC_STREAMON` fails with `EIO` until a producer has written
/// once, and the control `keep_format` keeps the device capture-ready after that with nobody
/// writing. So ``start()`` sets the format and `keep_format`, which makes the device a camera
/// at once (with `exclusive_caps=1` it then announces capture only, as Chromium needs to list
/// it), and a thread looks in `/proc/*/fd` for other processes holding the node, as `fuser`
/// does, when an inotify watch on the node says it was opened or closed (and every 5 s: a
/// descriptor passed to another process opens nothing), 250 ms apart while an opener waits
/// to be confirmed. A process that holds it in two scans in a row is a consumer (a
/// browser listing cameras or `v4l2-ctl --all` only looks, for milliseconds, and starts
/// nothing); with `onDemand`, the first one starts the source and the scan after the last has
/// gone stops it, so the camera (and its LED) is off within half a second of the last reader
/// leaving. A consumer is a process that has the node open, whether it streams or not; only
/// processes this one may inspect are seen (the same user's; all, as root). A PipeWire node
/// follows its stream's state instead (see above).
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
        /// A PipeWire camera node named `name` (its `node.name` and `node.description`; unique
        /// in the session: a name another node has is refused), in the session at
        /// `PIPEWIRE_REMOTE`, else `$XDG_RUNTIME_DIR/pipewire-0`. Needs the package trait
        /// `PipeWire` (on by default).
        case pipeWire(name: String)

        /// The device's path, or `pipewire:NAME`.
        public var description: String {
            switch self {
            case .v4l2Loopback(let path): path
            case .pipeWire(let name): "pipewire:\(name)"
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
    let logger: Logger?
    let events_ = VirtualCameraEvents()
    /// Frames written and writes that failed, counted on the capture thread.
    let figures = WriteFigures()

    /// How often the watcher looks at the outputs: the loopback devices' openers (after one was
    /// opened or closed, or while an opener waits for its second scan) and the source's state.
    static let scanInterval: Duration = .milliseconds(250)
    /// How often the loopback outputs' openers are scanned with nothing opened or closed.
    static let fullScanInterval: Duration = .seconds(5)

    enum Phase { case idle, starting, running, stopping }

    struct State {
        var phase = Phase.idle
        /// `stop()` came while `start()` was still starting: it stops when done.
        var stopRequested = false
        var writers: [LoopbackWriter] = []
        #if PipeWire
        /// The PipeWire nodes published, with their outputs.
        var nodes: [(output: Output, node: PipeWireCameraOutput)] = []
        /// What each node offers, to publish it again after a failure.
        var offers: [PipeWireCameraOffer] = []
        #endif
        var chosen: LoopbackFormat?
        /// Whether we started the source (and it has not been stopped).
        var running = false
        /// The source failed or could not start with these consumers: wait for a new one.
        var failed = false
        /// One task per plan, each reading its own sequence on the capture thread.
        var pumps: [Task<Void, Never>] = []
        var plans: [PumpPlan] = []
        var watcher: CaptureThread?
        var wake: WakeUpEvent?
        /// Signalled by the PipeWire nodes' threads on each change of their status.
        var changes: WakeUpEvent?
        var consumers: [VirtualCameraConsumer] = []
    }

    let state = Mutex(State())

    /// A virtual camera publishing `source` on `outputs` in `format` (`nil`: I420 at the
    /// source's size and rate; see ``format``). Nothing opens until ``start()``.
    /// - Parameters:
    ///   - source: what is published; the virtual camera starts and stops it (see `onDemand`).
    ///   - outputs: where it is published: v4l2loopback nodes and PipeWire nodes, any mix.
    ///   - format: the published pixel format, size and rate (`nil`: I420 at the source's). A
    ///     PipeWire node offers it first, and the conversions listed above beside it.
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

    /// Opens the outputs and sets their format, so that they are cameras from now on (a
    /// PipeWire node is listed); starts the source now (`onDemand` false) or when the first
    /// reader comes. Initializes the source (``VideoSource/initialize()``: it opens, it does not
    /// stream) to learn its format. Does nothing when started.
    /// - Throws: what ``VideoSource/initialize()`` throws; for a loopback output
    ///   ``/MediaDevicesCore/MediaDevicesError/Code/notFound`` (no such node, module not loaded:
    ///   the remedy says how to load it), ``/MediaDevicesCore/MediaDevicesError/Code/invalidValue``
    ///   (not a v4l2loopback node), ``/MediaDevicesCore/MediaDevicesError/Code/permissionDenied``,
    ///   ``/MediaDevicesCore/MediaDevicesError/Code/busy`` (its `max_openers` reached, or readers
    ///   hold another format), ``/MediaDevicesCore/MediaDevicesError/Code/unsupportedFormat``;
    ///   for a PipeWire output ``/MediaDevicesCore/MediaDevicesError/Code/notFound`` (no PipeWire
    ///   session, or a build without the `PipeWire` trait),
    ///   ``/MediaDevicesCore/MediaDevicesError/Code/busy`` (another node has the name),
    ///   ``/MediaDevicesCore/MediaDevicesError/Code/invalidValue`` (an empty name),
    ///   ``/MediaDevicesCore/MediaDevicesError/Code/unsupportedFormat`` (a format PipeWire has no
    ///   name for); with `onDemand` false, what the source's ``VideoSource/start()`` throws.
    ///   ``/MediaDevicesCore/MediaDevicesError/Code/invalidState`` while another thread starts
    ///   or stops it, and with no outputs. Nothing is left open.
    public func start() throws(MediaDevicesError) {
        let proceed = try state.withLock { (state) throws(MediaDevicesError) -> Bool in
            switch state.phase {
            case .running: return false
            case .starting, .stopping:
                throw MediaDevicesError(.invalidState, device: label, operation: "VirtualCamera.start",
                                        detail: "Another thread is \(state.phase == .starting ? "starting" : "stopping") this virtual camera",
                                        remedy: "Wait for that start() or stop() to return, then call start() again; or start and stop it from one task or thread")
            case .idle:
                state.phase = .starting
                state.stopRequested = false
                return true
            }
        }
        guard proceed else { return }
        let wake: WakeUpEvent, changes: WakeUpEvent
        do {
            wake = try WakeUpEvent()
            changes = try WakeUpEvent()
            try open(changes: changes)
        } catch {
            teardown(finishEvents: false)
            throw error
        }
        logger?.info("virtual camera published", metadata: metadata)
        if !onDemand, let error = startSource() {
            teardown(finishEvents: false)
            throw error
        }
        let watcher: CaptureThread
        do {
            let loopbacks = outputs.compactMap { output -> (String, Output)? in
                if case .v4l2Loopback(let path) = output { (NodeOpeners.canonical(path), output) } else { nil }
            }
            // Weak: a camera the application lets go of without `stop()` stops in its deinit.
            watcher = try CaptureThread(name: "md-vcam-watch") { [weak self] in
                var watch = Watch(loopbacks: loopbacks)
                // The openers are scanned after a node was opened or closed (and again while one
                // waits to be confirmed), and every `fullScanInterval` for what opens nothing;
                // on every tick when inotify refused.
                let opens = loopbacks.isEmpty ? nil : NodeOpenWatch(paths: loopbacks.map(\.0))
                var descriptors = [pollfd(fd: wake.descriptor, events: Int16(POLLIN), revents: 0),
                                   pollfd(fd: changes.descriptor, events: Int16(POLLIN), revents: 0),
                                   pollfd(fd: opens?.descriptor ?? -1, events: Int16(POLLIN), revents: 0)]
                let clock = ContinuousClock()
                var lastScan = clock.now - VirtualCamera.scanInterval
                var lastOpenersScan = clock.now
                var openedOrClosed = true
                while true {
                    let left = VirtualCamera.scanInterval - (clock.now - lastScan)
                    for index in descriptors.indices { descriptors[index].revents = 0 }
                    _ = poll(&descriptors, 3, Int32(max(0, left.nanosecondCount / 1_000_000)))
                    if descriptors[0].revents != 0 { return }
                    if descriptors[1].revents != 0 { changes.reset() }
                    if descriptors[2].revents != 0, opens?.drain() == true { openedOrClosed = true }
                    let tick = clock.now - lastScan >= VirtualCamera.scanInterval
                    if tick { lastScan = clock.now }
                    let scanOpeners = tick && (opens == nil || openedOrClosed || watch.tracker.hasPending
                                               || clock.now - lastOpenersScan >= VirtualCamera.fullScanInterval)
                    if scanOpeners { openedOrClosed = false; lastOpenersScan = clock.now }
                    guard let self, self.scan(&watch, scanOpeners: scanOpeners) else { return }
                }
            }
        } catch {
            teardown(finishEvents: false)
            throw error
        }
        let stopNow = state.withLock { state in
            state.wake = wake
            state.changes = changes
            state.watcher = watcher
            state.phase = .running
            return state.stopRequested
        }
        if stopNow { stop() }
    }

    /// Stops the source and closes the outputs (a loopback device stays listed and
    /// capture-ready: v4l2loopback keeps the format; a PipeWire node is removed), and ends the
    /// ``events`` sequences. Does nothing when stopped; while another thread starts it, that
    /// start stops when done.
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

    /// Stops the source, closes the outputs, forgets the consumers; back to idle.
    private func teardown(finishEvents: Bool) {
        stopSource()
        let (writers, left) = state.withLock { state in
            defer {
                state.writers.removeAll()
                state.consumers.removeAll()
                state.chosen = nil
                state.failed = false
                state.changes = nil
                state.phase = .idle
            }
            return (state.writers, state.consumers)
        }
        #if PipeWire
        let nodes = state.withLock { state in
            defer { state.nodes.removeAll() }
            return state.nodes
        }
        for (_, node) in nodes { node.close() }
        #else
        let nodes: [Void] = []
        #endif
        for writer in writers { writer.close() }
        for consumer in left { events_.send(.consumerLeft(consumer)) }
        if !writers.isEmpty || !nodes.isEmpty { logger?.info("virtual camera closed", metadata: metadata) }
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

    /// The format published on the loopback outputs, and offered first on the PipeWire nodes,
    /// once started.
    public var publishedFormat: VideoFormat? {
        state.withLock { state in
            state.chosen.map { VideoFormat(pixelFormat: $0.pixelFormat, width: $0.size.width, height: $0.size.height) }
        }
    }

    /// The PipeWire nodes' global ids now, by output (a node published again after a failure has
    /// a new one); empty before ``start()`` and without the `PipeWire` trait.
    package var pipeWireNodeIDs: [Output: UInt32] {
        #if PipeWire
        let nodes = state.withLock { $0.nodes }
        var ids: [Output: UInt32] = [:]
        for (output, node) in nodes { ids[output] = node.status.nodeID }
        return ids
        #else
        return [:]
        #endif
    }

    /// Frames written to the outputs (each frame once per distinct format written), and writes
    /// that failed, since the camera was made.
    package var writeFigures: (written: Int, failed: Int) {
        (figures.written.load(ordering: .relaxed), figures.failed.load(ordering: .relaxed))
    }

    // MARK: Outputs

    var label: String {
        outputs.isEmpty ? "virtual camera of \(type(of: source))" : outputs.map(\.description).joined(separator: ",")
    }

    var metadata: Logger.Metadata { ["outputs": "\(label)"] }

    /// Chooses the format and opens every output; nothing stays open when one fails (the caller
    /// tears down what the state holds). `changes` is signalled on each change of a node.
    private func open(changes: WakeUpEvent) throws(MediaDevicesError) {
        guard !outputs.isEmpty else {
            throw MediaDevicesError(.invalidState, device: label, operation: "VirtualCamera.start",
                                    detail: "A virtual camera needs at least one output, and none was given",
                                    remedy: "Make it with outputs: [.pipeWire(name: \"mediadevices_camera\")] or [.v4l2Loopback(path: \"/dev/video10\")] (or both)")
        }
        try source.initialize()
        let chosen = try LoopbackFormat.choose(format, source: source.captureSettings?.format,
                                               sourceRate: source.captureSettings?.frameRate, device: label)
        state.withLock { $0.chosen = chosen }
        for output in outputs {
            switch output {
            case .v4l2Loopback(let path):
                let writer = try LoopbackWriter(path: path, pixelFormat: chosen.pixelFormat, size: chosen.size,
                                                frameRate: chosen.frameRate)
                state.withLock { $0.writers.append(writer) }
            case .pipeWire(let name):
                try openNode(output, name: name, chosen: chosen, changes: changes)
            }
        }
    }

    /// Publishes the PipeWire node of `output`.
    private func openNode(_ output: Output, name: String, chosen: LoopbackFormat, changes: WakeUpEvent) throws(MediaDevicesError) {
        guard !name.isEmpty else {
            throw MediaDevicesError(.invalidValue, device: output.description, operation: "VirtualCamera.start",
                                    detail: "A PipeWire node needs a name", remedy: "Give a name such as .pipeWire(name: \"mediadevices_camera\")")
        }
        #if PipeWire
        let source = self.source.captureSettings?.format
        var offers: [PipeWireCameraOffer] = []
        if let first = PipeWireCameraOffer(chosen.pixelFormat, size: chosen.size, frameRate: chosen.frameRate) { offers.append(first) }
        let raw = source.flatMap { $0.size == chosen.size ? $0.pixelFormat : nil }
        for offer in PipeWireCameraOffer.standard(sourceFormat: raw, size: chosen.size, frameRate: chosen.frameRate) where !offers.contains(offer) {
            offers.append(offer)
        }
        guard offers.first?.format.pixelFormat == chosen.pixelFormat else {
            throw MediaDevicesError(.unsupportedFormat, device: output.description, operation: "VirtualCamera.start",
                                    detail: "PipeWire has no raw video format for \(chosen.pixelFormat.fourCC)",
                                    remedy: "Ask for .yu12 (I420) or .nv12")
        }
        let node = try VirtualCamera.publishNode(name: name, offers: offers, changes: changes)
        state.withLock { state in
            state.nodes.append((output, node))
            state.offers = offers
        }
        #else
        throw BuildTraits.missingPipeWire(device: output.description, operation: "VirtualCamera.start")
        #endif
    }

    #if PipeWire
    /// A node named `name` offering `offers`, signalling `changes` on each change of its status.
    static func publishNode(name: String, offers: [PipeWireCameraOffer], changes: WakeUpEvent) throws(MediaDevicesError) -> PipeWireCameraOutput {
        try PipeWireCameraOutput(name: name, description: name, offers: offers) { _ in changes.signal() }
    }
    #endif
}

/// The pump's counters.
final class WriteFigures: Sendable {
    let written = Atomic<Int>(0)
    let failed = Atomic<Int>(0)
    let lastErrno = Atomic<Int32>(0)
    /// Whether a pump sent this run's failure already (the pumps share one source).
    let failureSent = Atomic<Bool>(false)
}
