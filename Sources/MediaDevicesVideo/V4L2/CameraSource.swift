import MediaDevicesCore
import Foundation
import Synchronization

/// Captures video from a V4L2 device: the ``VideoSource`` for cameras (Twilio's ``CameraSource``).
///
/// ```swift
/// let camera = CameraSource(device: (await CaptureDevice.discover()).devices[0],
///                           request: FormatRequest(pixelFormat: .yuyv, size: .vga, frameRate: FrameRate(30)))
/// try camera.initialize()
/// try camera.start()
/// for try await frame in camera.frames(bufferSize: 4) { … }
/// ```
///
/// The format can change (``VideoSource/setFormat(_:)``) and the device can be switched
/// (``selectCaptureDevice(_:format:)``) while capturing; consumers and `frames` sequences stay
/// subscribed across both. The members every source shares are ``VideoSource``'s.
// @unchecked Sendable, as `VideoSource` (a subclass cannot be checked): every stored property is a
// `let` of a Sendable type; what changes lives behind the published state's lock and the core's.
public final class CameraSource: VideoSource, @unchecked Sendable {
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

        /// The request in force.
        var savedFormat: FormatRequest { snapshot.withLock { $0.request } }

        /// Makes `request` the request and sets it on the open session (`VIDIOC_S_FMT`), or
        /// opens the device with it when it is not open.
        mutating func applyFormat(_ request: FormatRequest) throws(MediaDevicesError) -> FormatNegotiation {
            snapshot.withLock { $0.request = request }
            guard let session, !session.device.file.isClosed else {
                try open()
                return session!.negotiation
            }
            try session.renegotiate(request)
            publish()
            return session.negotiation
        }

        /// Puts back request `saved`, and its format on the open session.
        mutating func restoreFormat(_ saved: FormatRequest) {
            snapshot.withLock { $0.request = saved }
            guard let session, !session.device.file.isClosed else { return }
            try? session.renegotiate(saved)
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
    /// The core, for the changes only a camera makes (device, orientation tracker).
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
        let core = SourceCore(device: Camera(snapshot: snapshot, plan: plan), label: device.path)
        self.core = core
        super.init(core: core)
    }

    /// The device captured from.
    public var device: CaptureDevice { snapshot.withLock { $0.device } }

    /// The outcome of the last negotiation, published by the session.
    override var publishedNegotiation: FormatNegotiation? { snapshot.withLock { $0.negotiation } }

    /// The sensor's mounting rotation (``VideoOrientation/up`` when the driver does not say)
    /// plus the ``orientationTracker``'s orientation (mirrored for a front camera).
    override var publishedOrientation: VideoOrientation {
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
            try control.whilePaused(&camera) { _ in }
        }
    }

    /// Switches to another device, also while capturing (Twilio's
    /// `selectCaptureDevice(_:format:)`). The new device is opened and configured before the
    /// old one stops, so a failure to open or configure it leaves the old one running; a
    /// failure to start it ends capture with that error. The same device (by path) takes the
    /// ``VideoSource/setFormat(_:)`` path. `request` defaults to the current request. Not from this source's own
    /// callback.
    @discardableResult
    public func selectCaptureDevice(_ device: CaptureDevice, format request: FormatRequest? = nil) throws(MediaDevicesError) -> FormatNegotiation {
        if device.path == self.device.path {
            return try setFormat(request ?? snapshot.withLock { $0.request })
        }
        return try core.withControl("selectCaptureDevice") { camera, control in
            let request = request ?? snapshot.withLock { $0.request }
            let newSession = try CameraSession(info: device, request: request)
            return try control.whilePaused(&camera) { camera in
                camera.session = newSession
                snapshot.withLock { $0.request = request }
                camera.publish()
                core.setLabel(device.path)
                return newSession.negotiation
            }
        }
    }
}
