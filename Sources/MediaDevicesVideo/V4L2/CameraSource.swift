import Logging
import MediaDevicesCore
import Foundation
import Synchronization

/// Captures video from a V4L2 device: the ``VideoCapturer`` for cameras (Twilio's `CameraSource`).
///
/// ```swift
/// let camera = CameraSource(device: (await CaptureDevice.discover()).devices[0],
///                           request: FormatRequest(pixelFormat: .yuyv, size: .vga, frameRate: FrameRate(30)))
/// try camera.initialize()
/// try camera.start()
/// for try await frame in camera.frames(bufferSize: 4) { … }
/// ```
///
/// The format can change and the device can be switched while capturing; consumers and
/// `frames` sequences stay subscribed across both.
public final class CameraSource: VideoCapturer, Sendable {
    /// What readers (and the capture thread) see; never held while waiting for anything.
    private struct Snapshot {
        var device: CaptureDevice
        var request: FormatRequest
        var negotiation: FormatNegotiation?
        var orientation: VideoOrientation = .up
        var tracker: (any OrientationTracker)?
    }

    /// The device part: the open V4L2 session and its capture runs.
    private struct Camera: SourceDevice {
        let snapshot: PublishedState<Snapshot>
        let plan: CameraStream.BufferPlan
        var session: CameraSession?

        mutating func open() throws(MediaDevicesError) {
            if let session, !session.device.file.isClosed { return }
            session = nil  // closed after a failure: open again
            let (device, request) = snapshot.withLock { ($0.device, $0.request) }
            let opened = try CameraSession(info: device, request: request)
            session = opened
            publish()
        }

        func startRun(delivery: FrameDelivery) throws(MediaDevicesError) -> CaptureRun {
            guard let session else {
                throw MediaDevicesError(.invalidState, device: snapshot.withLock { $0.device.path }, operation: "start",
                                        detail: "The device is not open; initialize the source first")
            }
            return try CameraStream.start(session: session, buffers: plan, delivery: delivery,
                                          tracker: snapshot.withLock { $0.tracker })
        }

        mutating func close() {
            session = nil
            publish()
        }

        /// Publishes the session's negotiation, orientation and device to readers.
        func publish() {
            let session = self.session
            snapshot.withLock {
                $0.negotiation = session?.negotiation
                $0.orientation = session?.orientation ?? .up
                if let session { $0.device = session.info }
            }
        }
    }

    /// Buffers requested from the driver (at least 3).
    public let bufferCount: Int
    /// Buffers kept queued to the driver however many frames the `frames()` sequences hold on
    /// lease (at least 1): a frame whose lease would leave fewer is copied instead.
    public let minimumQueuedBuffers: Int
    /// Whether every buffer is exported as DMA-BUF (`VIDIOC_EXPBUF`), so frames carry
    /// ``VideoFrame/dmaBuf`` for zero-copy hand-off to encoders, EGL, Vulkan or GStreamer. Costs one
    /// descriptor per buffer and plane while capturing.
    public let exportsDMABuf: Bool
    private let snapshot: PublishedState<Snapshot>
    private let core: SourceCore<Camera>

    /// A source for `device`, to be configured as `request` asks when initialized, with
    /// `bufferCount` driver buffers of which `minimumQueuedBuffers` stay queued whatever the
    /// sequences hold, exporting them as DMA-BUF if `exportsDMABuf`.
    public init(device: CaptureDevice, request: FormatRequest = FormatRequest(), bufferCount: Int = 4,
                minimumQueuedBuffers: Int = 2, exportsDMABuf: Bool = false) {
        self.bufferCount = max(3, bufferCount)
        self.minimumQueuedBuffers = max(1, minimumQueuedBuffers)
        self.exportsDMABuf = exportsDMABuf
        let snapshot = PublishedState(Snapshot(device: device, request: request))
        self.snapshot = snapshot
        let plan = CameraStream.BufferPlan(count: self.bufferCount, minimumQueued: self.minimumQueuedBuffers, exportsDMABuf: exportsDMABuf)
        core = SourceCore(device: Camera(snapshot: snapshot, plan: plan), label: device.path)
    }

    deinit { core.release() }

    /// The device captured from.
    public var device: CaptureDevice { snapshot.withLock { $0.device } }

    /// The outcome of the last negotiation: format and rate in force and what was adjusted.
    public var negotiation: FormatNegotiation? { snapshot.withLock { $0.negotiation } }

    /// Opens the device and negotiates the requested format. Not from this source's own
    /// callback (``/MediaDevicesCore/MediaDevicesError/Code/invalidState``).
    public func initialize() throws(MediaDevicesError) { try core.initialize() }

    /// Starts capturing (initializing first if needed). The corresponding ioctls are
    /// `VIDIOC_REQBUFS`, `VIDIOC_QBUF` and `VIDIOC_STREAMON`. If it fails, the `frames`
    /// sequences end with the error.
    public func start() throws(MediaDevicesError) { try core.start() }

    /// Stops capturing and waits until the buffers are released; the device stays open and
    /// configured. Ends every `frames` sequence and tells the consumer, once. Called from this
    /// source's own callback, it returns at once and capture ends when the callback returns.
    public func stop() { core.stop() }

    /// Stops and closes the device (once the capture thread has let go of it). From this
    /// source's own callback it only stops: the device closes at the next ``release()`` or when
    /// the source is freed (the thread's own reference keeps it open until its buffers are gone).
    public func release() { core.release() }

    /// Whether frames are being delivered.
    public var isCapturing: Bool { core.isCapturing }

    /// The negotiated format and rate.
    public var captureSettings: CaptureSettings? {
        snapshot.withLock { $0.negotiation.map { CaptureSettings(format: $0.format, frameRate: $0.frameRate) } }
    }

    /// The orientation frames carry now: the sensor's mounting rotation (``VideoOrientation/up`` when the
    /// driver does not say) plus the ``orientationTracker``'s orientation (mirrored for a front camera).
    public var orientation: VideoOrientation {
        snapshot.withLock { FrameOrientation(mount: $0.orientation, tracker: $0.tracker, facesUser: $0.device.position == .front).current }
    }

    /// Tells which way up the device is (Twilio's `orientationTracker`); every frame carries
    /// the sensor's mounting rotation plus the tracker's orientation at capture time. `nil`
    /// (the default): the mounting alone. Set it with ``setOrientationTracker(_:)``.
    public var orientationTracker: (any OrientationTracker)? { snapshot.withLock { $0.tracker } }

    /// Sets (or with `nil` removes) the ``orientationTracker``. While capturing, the stream
    /// restarts with it (consumers stay subscribed). Not from this source's own callback.
    public func setOrientationTracker(_ tracker: (any OrientationTracker)?) throws(MediaDevicesError) {
        try core.withControl("setOrientationTracker") { camera, control in
            snapshot.withLock { $0.tracker = tracker }
            guard camera.session != nil, control.isRunning else { return }
            if control.pauseRun() { try control.resumeRun(camera) }
        }
    }

    /// The callback consumer.
    public var consumer: (any VideoFrameConsumer)? {
        get { core.delivery.consumer }
        set { core.delivery.consumer = newValue }
    }

    /// Runs the tasks that prefer it on this source's capture thread:
    /// `Task(executorPreference: camera.captureExecutor) { for try await frame in camera.frames() { … } }`
    /// reads frames with one wake-up per frame, no allocation and no task switch (the reader
    /// steps the capture loop itself while its sequence is empty; see ``CaptureExecutor``). Make
    /// the task after ``start()``: from then on its jobs run on the capture thread; before, they
    /// go to Swift's global executor.
    public var captureExecutor: CaptureExecutor { core.delivery.executor }

    /// A new asynchronous sequence of frames (see ``VideoFrames``).
    public func frames(bufferSize: Int = 4) -> VideoFrames { core.frames(bufferSize: bufferSize) }

    /// A new asynchronous sequence of frames converted to `output`; see ``VideoCapturer``.
    public func frames(bufferSize: Int = 4, output: OutputFormat) throws(MediaDevicesError) -> VideoFrames {
        try core.frames(bufferSize: bufferSize, output: output)
    }

    /// Counters of the current or last run.
    public var statistics: CaptureStatistics { core.delivery.statistics }

    /// Where the source logs what an operator needs, with the device as metadata: capture
    /// started (or could not), its first frame with the format and how long it took, stopped
    /// with its delivered and dropped counts (a warning when frames were dropped), or ended by
    /// an error. `nil` (the default): nothing is logged. Never per frame.
    public var logger: Logger? {
        get { core.delivery.logger }
        set { core.delivery.logger = newValue }
    }

    /// How long capture may go without a frame while the device keeps streaming (a stalled sensor pipeline or
    /// driver) before it ends with ``/MediaDevicesCore/MediaDevicesError/Code/timeout``: the frame sequences
    /// end with that error and the consumer hears `captureDidStop`. `nil` (the default): no limit (a camera
    /// may legitimately wait long, e.g. in the dark at long exposures). Takes effect at once, also while
    /// capturing. The same option as ``PipeWireCameraSource/frameTimeout``.
    public var frameTimeout: Duration? {
        get { core.delivery.frameTimeout }
        set { core.delivery.frameTimeout = newValue }
    }

    /// Changes the format, also while capturing: the stream stops, the new format is negotiated
    /// and the stream starts again; consumers stay subscribed. If the new format cannot be set,
    /// the old one is restored and the error is thrown. Not from this source's own callback.
    @discardableResult
    public func setFormat(_ request: FormatRequest) throws(MediaDevicesError) -> FormatNegotiation {
        try core.withControl("setFormat") { camera, control in
            let old = snapshot.withLock { $0.request }
            snapshot.withLock { $0.request = request }
            guard let session = camera.session, !session.device.file.isClosed else {
                do {
                    try camera.open()
                } catch {
                    snapshot.withLock { $0.request = old }
                    throw error
                }
                return camera.session!.negotiation
            }
            let wasRunning = control.pauseRun()
            do {
                try session.renegotiate(request)
            } catch {
                snapshot.withLock { $0.request = old }
                try? session.renegotiate(old)
                if wasRunning { try control.resumeRun(camera) }
                throw error
            }
            camera.publish()
            if wasRunning { try control.resumeRun(camera) }
            return session.negotiation
        }
    }

    /// Switches to another device, also while capturing (Twilio's
    /// `selectCaptureDevice(_:format:)`). The new device is opened and configured before the
    /// old one stops, so a failure to open or configure it leaves the old one running; a
    /// failure to start it ends capture with that error. The same device (by path) takes the
    /// ``setFormat(_:)`` path. `request` defaults to the current request. Not from this source's own
    /// callback.
    @discardableResult
    public func selectCaptureDevice(_ device: CaptureDevice, format request: FormatRequest? = nil) throws(MediaDevicesError) -> FormatNegotiation {
        if device.path == self.device.path {
            return try setFormat(request ?? snapshot.withLock { $0.request })
        }
        return try core.withControl("selectCaptureDevice") { camera, control in
            let request = request ?? snapshot.withLock { $0.request }
            let newSession = try CameraSession(info: device, request: request)
            let wasRunning = control.pauseRun()
            camera.session = newSession
            snapshot.withLock { $0.request = request }
            camera.publish()
            core.setLabel(device.path)
            if wasRunning { try control.resumeRun(camera) }
            return newSession.negotiation
        }
    }
}
