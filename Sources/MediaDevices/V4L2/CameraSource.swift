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
    }

    /// Buffers requested from the driver (at least 3).
    public let bufferCount: Int
    private let delivery = FrameDelivery()
    /// Serializes the control calls (initialize, start, stop, format and device changes).
    private let control = NSLock()
    /// What readers see; never held while waiting for the capture thread.
    private let snapshot: Mutex<Snapshot>
    private var session: CameraSession?
    private var stream: CameraStream?

    /// A source for `device`, to be configured as `request` asks when initialized.
    public init(device: CaptureDevice, request: FormatRequest = FormatRequest(), bufferCount: Int = 4) {
        self.bufferCount = max(3, bufferCount)
        snapshot = Mutex(Snapshot(device: device, request: request))
    }

    deinit { release() }

    /// The device captured from.
    public var device: CaptureDevice { snapshot.withLock { $0.device } }

    /// The outcome of the last negotiation: format and rate in force and what was adjusted.
    public var negotiation: FormatNegotiation? { snapshot.withLock { $0.negotiation } }

    /// Opens the device and negotiates the requested format.
    public func initialize() throws {
        control.lock(); defer { control.unlock() }
        try initializeLocked()
    }

    private func initializeLocked() throws {
        if session != nil { return }
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
    /// `VIDIOC_REQBUFS`, `VIDIOC_QBUF` and `VIDIOC_STREAMON`.
    public func start() throws {
        control.lock(); defer { control.unlock() }
        if let stream, stream.isRunning { return }
        stream = nil
        if let session, session.device.file.rawValue < 0 { self.session = nil }  // closed by a failure
        try initializeLocked()
        delivery.resetStatistics()
        stream = try CameraStream(session: session!, bufferCount: bufferCount, delivery: delivery)
    }

    /// Stops capturing and waits until the buffers are released; the device stays open and
    /// configured. Ends every `frames` sequence and tells the consumer.
    public func stop() {
        control.lock()
        let stopped = stopStreamLocked()
        control.unlock()
        if stopped { delivery.finish(error: nil) }
    }

    private func stopStreamLocked() -> Bool {
        guard let stream else { return false }
        let wasRunning = stream.isRunning
        stream.stop()
        self.stream = nil
        return wasRunning
    }

    /// Stops and closes the device.
    public func release() {
        stop()
        control.lock(); defer { control.unlock() }
        session?.close()
        session = nil
        publish(nil)
    }

    /// Whether frames are being delivered.
    public var isCapturing: Bool {
        control.lock(); defer { control.unlock() }
        return stream?.isRunning ?? false
    }

    /// The negotiated format and rate.
    public var captureSettings: CaptureSettings? {
        snapshot.withLock { $0.negotiation.map { CaptureSettings(format: $0.format, frameRate: $0.frameRate) } }
    }

    /// The orientation from the sensor's mounting rotation, `.up` when the driver does not say.
    public var orientation: VideoOrientation { snapshot.withLock { $0.orientation } }

    /// The callback consumer.
    public var consumer: (any VideoFrameConsumer)? {
        get { delivery.consumer }
        set { delivery.consumer = newValue }
    }

    /// A new asynchronous sequence of frames (see `VideoFrames`).
    public func frames(bufferSize: Int = 4) -> VideoFrames { delivery.makeFrames(bufferSize: bufferSize) }

    /// Counters of the current or last run.
    public var statistics: CaptureStatistics { delivery.statistics }

    /// Changes the format, also while capturing: the stream stops, the new format is negotiated
    /// and the stream starts again; consumers stay subscribed. If the new format cannot be set,
    /// the old one is restored and the error is thrown.
    @discardableResult
    public func setFormat(_ request: FormatRequest) throws -> FormatNegotiation {
        control.lock(); defer { control.unlock() }
        let old = snapshot.withLock { $0.request }
        snapshot.withLock { $0.request = request }
        guard let session else {
            try initializeLocked()
            return self.session!.negotiation
        }
        let wasRunning = stopStreamLocked()
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
    /// old one stops, so a failure leaves the old one running. `request` defaults to the
    /// current request.
    @discardableResult
    public func selectCaptureDevice(_ device: CaptureDevice, format request: FormatRequest? = nil) throws -> FormatNegotiation {
        control.lock(); defer { control.unlock() }
        let request = request ?? snapshot.withLock { $0.request }
        let newSession = try CameraSession(info: device, request: request)
        let wasRunning = stopStreamLocked()
        session?.close()
        session = newSession
        snapshot.withLock { $0.request = request }
        publish(newSession)
        if wasRunning { try restartLocked() }
        return newSession.negotiation
    }

    private func restartLocked() throws {
        delivery.streamRestarted()
        do {
            stream = try CameraStream(session: session!, bufferCount: bufferCount, delivery: delivery)
        } catch let error as MediaDevicesError {
            delivery.finish(error: error)
            throw error
        }
    }
}
