import Foundation
import Synchronization

/// Captures video from a V4L2 device: the `VideoCapturer` for cameras (Twilio's `CameraSource`).
///
/// ```swift
/// let camera = CameraSource(device: CaptureDevice.devices[0],
///                           request: FormatRequest(pixelFormat: .yuyv, size: .vga, frameRate: FrameRate(30)))
/// try camera.initialize()
/// try camera.start()
/// for try await frame in camera.frames(bufferSize: 4) { … }
/// ```
///
/// The format can change and the device can be switched while capturing; consumers and
/// `frames` sequences stay subscribed across both.
public final class CameraSource: VideoCapturer, @unchecked Sendable {
    private struct Snapshot {
        var device: CaptureDevice
        var request: FormatRequest
        var negotiation: FormatNegotiation?
        var orientation: VideoOrientation = .up
        var tracker: (any OrientationTracker)?
    }

    /// Buffers requested from the driver (at least 3).
    public let bufferCount: Int
    /// Buffers kept queued to the driver however many frames the `frames()` sequences hold on
    /// lease (at least 1): a frame whose lease would leave fewer is copied instead.
    public let minimumQueuedBuffers: Int
    /// Whether every buffer is exported as DMA-BUF (`VIDIOC_EXPBUF`), so frames carry
    /// `dmaBuf` for zero-copy hand-off to encoders, EGL, Vulkan or GStreamer. Costs one
    /// descriptor per buffer and plane while capturing.
    public let exportsDMABuf: Bool
    private let delivery = FrameDelivery()
    /// Serializes the control calls (initialize, start, stop, format and device changes). Held
    /// while waiting for the capture thread, so the capture thread never takes it.
    private let control = NSLock()
    /// What readers (and the capture thread) see; never held while waiting for anything.
    private let snapshot: Mutex<Snapshot>
    /// The open device; only touched with `control` held.
    private var session: CameraSession?
    private let run = RunSlot()

    /// A source for `device`, to be configured as `request` asks when initialized, with
    /// `bufferCount` driver buffers of which `minimumQueuedBuffers` stay queued whatever the
    /// sequences hold, exporting them as DMA-BUF if `exportsDMABuf`.
    public init(device: CaptureDevice, request: FormatRequest = FormatRequest(), bufferCount: Int = 4,
                minimumQueuedBuffers: Int = 2, exportsDMABuf: Bool = false) {
        self.bufferCount = max(3, bufferCount)
        self.minimumQueuedBuffers = max(1, minimumQueuedBuffers)
        self.exportsDMABuf = exportsDMABuf
        snapshot = Mutex(Snapshot(device: device, request: request))
    }

    deinit { release() }

    /// The device captured from.
    public var device: CaptureDevice { snapshot.withLock { $0.device } }

    /// The outcome of the last negotiation: format and rate in force and what was adjusted.
    public var negotiation: FormatNegotiation? { snapshot.withLock { $0.negotiation } }

    private func refuseOnCaptureThread(_ operation: String) throws {
        try run.refuseOnCaptureThread(device: device.path, operation: operation)
    }

    /// Opens the device and negotiates the requested format.
    public func initialize() throws {
        try refuseOnCaptureThread("initialize")
        control.lock(); defer { control.unlock() }
        try initializeLocked()
    }

    private func initializeLocked() throws {
        if let session, !session.device.file.isClosed { return }
        session = nil  // closed after a failure: open again
        let (device, request) = snapshot.withLock { ($0.device, $0.request) }
        let session = try CameraSession(info: device, request: request)
        self.session = session
        publish(session)
    }

    private func publish(_ session: CameraSession?) {
        snapshot.withLock {
            $0.negotiation = session?.negotiation
            $0.orientation = session?.orientation ?? .up
            if let session { $0.device = session.info }
        }
    }

    /// Starts capturing (initializing first if needed). The corresponding ioctls are
    /// `VIDIOC_REQBUFS`, `VIDIOC_QBUF` and `VIDIOC_STREAMON`. If it fails, the `frames`
    /// sequences end with the error.
    public func start() throws {
        try refuseOnCaptureThread("start")
        control.lock(); defer { control.unlock() }
        if run.isRunning { return }
        _ = run.stop(restarting: false)  // a run that ended by itself: wait until it let go
        do {
            try initializeLocked()
            delivery.beginRun()
            run.current = try CameraStream.start(session: session!, buffers: bufferPlan, delivery: delivery,
                                                 tracker: snapshot.withLock { $0.tracker })
        } catch let error as MediaDevicesError {
            delivery.finish(error: error)
            throw error
        }
    }

    /// Stops capturing and waits until the buffers are released; the device stays open and
    /// configured. Ends every `frames` sequence and tells the consumer, once. Called from this
    /// source's own callback, it returns at once and capture ends when the callback returns.
    public func stop() {
        if let current = run.current, current.isCurrentThread {
            current.stop()
            return
        }
        control.lock()
        let stopped = run.stop(restarting: false)
        control.unlock()
        if !stopped { delivery.finish(error: nil) }  // nothing ran: still end waiting sequences
    }

    /// Stops and closes the device (once the capture thread has let go of it). From this
    /// source's own callback it only stops: the device closes at the next `release()` or when
    /// the source is freed (the thread's own reference keeps it open until its buffers are gone).
    public func release() {
        stop()
        if run.isCurrentThread { return }
        control.lock(); defer { control.unlock() }
        session = nil
        publish(nil)
    }

    /// Whether frames are being delivered.
    public var isCapturing: Bool { run.isRunning }

    /// The negotiated format and rate.
    public var captureSettings: CaptureSettings? {
        snapshot.withLock { $0.negotiation.map { CaptureSettings(format: $0.format, frameRate: $0.frameRate) } }
    }

    /// The orientation frames carry now: the sensor's mounting rotation (`.up` when the driver
    /// does not say) plus the `orientationTracker`'s orientation (mirrored for a front camera).
    public var orientation: VideoOrientation {
        snapshot.withLock { FrameOrientation(mount: $0.orientation, tracker: $0.tracker, facesUser: $0.device.position == .front).current }
    }

    /// Tells which way up the device is (Twilio's `orientationTracker`); every frame carries
    /// the sensor's mounting rotation plus the tracker's orientation at capture time. `nil`
    /// (the default): the mounting alone. Set it with `setOrientationTracker(_:)`.
    public var orientationTracker: (any OrientationTracker)? { snapshot.withLock { $0.tracker } }

    /// Sets (or with `nil` removes) the `orientationTracker`. While capturing, the stream
    /// restarts with it (consumers stay subscribed). Not from this source's own callback.
    public func setOrientationTracker(_ tracker: (any OrientationTracker)?) throws {
        try refuseOnCaptureThread("setOrientationTracker")
        control.lock(); defer { control.unlock() }
        snapshot.withLock { $0.tracker = tracker }
        guard session != nil, run.isRunning else { return }
        if run.stop(restarting: true) && delivery.isRunActive { try restartLocked() }
    }

    /// The callback consumer.
    public var consumer: (any VideoFrameConsumer)? {
        get { delivery.consumer }
        set { delivery.consumer = newValue }
    }

    /// Runs the tasks that prefer it on this source's capture thread:
    /// `Task(executorPreference: camera.captureExecutor) { for try await frame in camera.frames() { … } }`
    /// reads frames with one wake-up per frame, no allocation and no task switch (the reader
    /// steps the capture loop itself while its sequence is empty; see `CaptureExecutor`). Make
    /// the task after `start()`: from then on its jobs run on the capture thread; before, they
    /// go to Swift's global executor.
    public var captureExecutor: CaptureExecutor { delivery.executor }

    /// A new asynchronous sequence of frames (see `VideoFrames`).
    public func frames(bufferSize: Int = 4) -> VideoFrames { delivery.makeFrames(bufferSize: bufferSize) }

    /// A new asynchronous sequence of frames converted to `output`; see `VideoCapturer`.
    public func frames(bufferSize: Int = 4, output: OutputFormat) throws -> VideoFrames {
        delivery.makeFrames(bufferSize: bufferSize, converter: try FrameConverter(output: output, device: device.path))
    }

    /// Counters of the current or last run.
    public var statistics: CaptureStatistics { delivery.statistics }

    /// Changes the format, also while capturing: the stream stops, the new format is negotiated
    /// and the stream starts again; consumers stay subscribed. If the new format cannot be set,
    /// the old one is restored and the error is thrown. Not from this source's own callback.
    @discardableResult
    public func setFormat(_ request: FormatRequest) throws -> FormatNegotiation {
        try refuseOnCaptureThread("setFormat")
        control.lock(); defer { control.unlock() }
        let old = snapshot.withLock { $0.request }
        snapshot.withLock { $0.request = request }
        guard let session, !session.device.file.isClosed else {
            self.session = nil
            do {
                try initializeLocked()
            } catch {
                snapshot.withLock { $0.request = old }
                throw error
            }
            return self.session!.negotiation
        }
        // A run that ended by itself (unplugged) finished its delivery run: `start()` begins a
        // new one, a restart here would deliver into the finished one.
        let wasRunning = run.stop(restarting: true) && delivery.isRunActive
        do {
            try session.renegotiate(request)
        } catch {
            snapshot.withLock { $0.request = old }
            try? session.renegotiate(old)
            if wasRunning { try restartLocked() }
            throw error
        }
        publish(session)
        if wasRunning { try restartLocked() }
        return session.negotiation
    }

    /// Switches to another device, also while capturing (Twilio's
    /// `selectCaptureDevice(_:format:)`). The new device is opened and configured before the
    /// old one stops, so a failure to open or configure it leaves the old one running; a
    /// failure to start it ends capture with that error. The same device (by path) takes the
    /// `setFormat` path. `request` defaults to the current request. Not from this source's own
    /// callback.
    @discardableResult
    public func selectCaptureDevice(_ device: CaptureDevice, format request: FormatRequest? = nil) throws -> FormatNegotiation {
        if device.path == self.device.path {
            return try setFormat(request ?? snapshot.withLock { $0.request })
        }
        try refuseOnCaptureThread("selectCaptureDevice")
        control.lock(); defer { control.unlock() }
        let request = request ?? snapshot.withLock { $0.request }
        let newSession = try CameraSession(info: device, request: request)
        let wasRunning = run.stop(restarting: true) && delivery.isRunActive  // (see setFormat)
        session = newSession
        snapshot.withLock { $0.request = request }
        publish(newSession)
        if wasRunning { try restartLocked() }
        return newSession.negotiation
    }

    private var bufferPlan: CameraStream.BufferPlan {
        CameraStream.BufferPlan(count: bufferCount, minimumQueued: minimumQueuedBuffers, exportsDMABuf: exportsDMABuf)
    }

    /// Starts a new run after a format change or device switch, within the same delivery run.
    private func restartLocked() throws {
        delivery.streamRestarted()
        do {
            run.current = try CameraStream.start(session: session!, buffers: bufferPlan, delivery: delivery,
                                                 tracker: snapshot.withLock { $0.tracker })
        } catch let error as MediaDevicesError {
            delivery.finish(error: error)
            throw error
        }
    }
}
