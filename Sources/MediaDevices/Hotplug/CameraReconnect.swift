import MediaDevicesCore
import MediaDevicesVideo
import Foundation
import Logging

extension DeviceMonitor {
    /// Waits until the camera with `uniqueID` is present through `backends` (now, or when it is
    /// plugged in again, or its PipeWire node is made again) and returns it as enumeration
    /// describes it (``/MediaDevicesVideo/CaptureDevice/discover(backends:pipeWireTimeout:logger:)``); `nil`
    /// after `timeout`. The monitor it watches with logs to `logger` (`nil`: nothing is logged).
    /// Throws what ``DeviceMonitor/init(kinds:source:cameraBackends:logger:)`` throws.
    public static func waitForCamera(uniqueID: String, backends: Set<CaptureBackend> = [.v4l2], timeout: Duration,
                                     logger: Logger? = nil) async throws(MediaDevicesError) -> CaptureDevice? {
        // Listen first, then look: a camera that comes back in between is not missed.
        let monitor = try DeviceMonitor(kinds: [.camera], cameraBackends: backends, logger: logger)
        defer { monitor.stop() }
        if let camera = CaptureDevice.scan(backends: backends).devices.first(where: { $0.uniqueID == uniqueID }) { return camera }
        let timer = Task {
            try? await Task.sleep(for: timeout)
            monitor.stop()  // ends the sequence below
        }
        defer { timer.cancel() }
        for await event in monitor.events where event.action == .added && event.uniqueID == uniqueID {
            if let camera = event.camera { return camera }
        }
        return nil
    }
}

extension CameraSource {
    /// After the camera was unplugged (capture ended with `.disconnected`), waits up to
    /// `timeout` for the same physical camera (same `uniqueID`) to come back, opens it with the
    /// current request and starts capturing again. The callback consumer keeps receiving
    /// frames; `frames` sequences ended with the disconnect, so make new ones. Returns `false`
    /// if the camera did not come back in time. Does nothing (returns `true`) while capturing.
    /// GStreamer, libcamera, FFmpeg and SDL leave this to the application. Logs the wait and
    /// its outcome to the source's ``/MediaDevicesVideo/VideoSource/logger``.
    @discardableResult
    public func resumeWhenReconnected(timeout: Duration = .seconds(30)) async throws(MediaDevicesError) -> Bool {
        if isCapturing { return true }
        let waiting = ReconnectLog(logger: logger, uniqueID: device.uniqueID, timeout: timeout)
        guard let camera = try await DeviceMonitor.waitForCamera(uniqueID: device.uniqueID, timeout: timeout, logger: logger) else {
            waiting.gaveUp()
            return false
        }
        try selectCaptureDevice(camera)
        try start()
        waiting.resumed(on: camera.path)
        return true
    }
}

#if PipeWire
extension PipeWireCameraSource {
    /// After the camera's node went away (capture ended with `.disconnected`: the camera was
    /// unplugged, or its session manager stopped), waits up to `timeout` for a PipeWire node of
    /// the same camera (same `uniqueID`) to appear, and starts capturing from it with the
    /// current request, as `CameraSource.resumeWhenReconnected` does for V4L2. Returns `false`
    /// if none came in time. Does nothing (returns `true`) while capturing. Logs the wait and its
    /// outcome to the source's ``/MediaDevicesVideo/VideoSource/logger``.
    @discardableResult
    public func resumeWhenReconnected(timeout: Duration = .seconds(30)) async throws(MediaDevicesError) -> Bool {
        if isCapturing { return true }
        let waiting = ReconnectLog(logger: logger, uniqueID: uniqueID, timeout: timeout)
        guard let camera = try await DeviceMonitor.waitForCamera(uniqueID: uniqueID, backends: [.pipewire], timeout: timeout, logger: logger),
              let node = camera.pipeWireNodes.first else {
            waiting.gaveUp()
            return false
        }
        select(node)
        try start()
        waiting.resumed(on: "pipewire:\(node.serial)")
        return true
    }
}
#endif

/// The log lines of one wait for a camera to come back: the wait (info), then where it resumed
/// (info, with how long it took) or that it did not come back in time (warning), with the
/// camera's unique ID as metadata.
private struct ReconnectLog {
    let logger: Logger?
    let uniqueID: String
    let timeout: Duration
    let started = ContinuousClock.now

    init(logger: Logger?, uniqueID: String, timeout: Duration) {
        self.logger = logger
        self.uniqueID = uniqueID
        self.timeout = timeout
        logger?.info("waiting for the camera to come back", metadata: ["camera": "\(uniqueID)", "timeout": "\(timeout)"])
    }

    func resumed(on device: String) {
        logger?.info("camera came back; capturing again", metadata: [
            "camera": "\(uniqueID)", "device": "\(device)", "after": "\(ContinuousClock.now - started)"])
    }

    func gaveUp() {
        logger?.warning("camera did not come back in time", metadata: ["camera": "\(uniqueID)", "timeout": "\(timeout)"])
    }
}
