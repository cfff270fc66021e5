import MediaDevicesCore
import MediaDevicesVideo
import Foundation

extension DeviceMonitor {
    /// Waits until the camera with `uniqueID` is present through `backends` (now, or when it is
    /// plugged in again, or its PipeWire node is made again) and returns it as enumeration
    /// describes it (`CaptureDevice.discover(backends:)`); `nil`
    /// after `timeout`. Throws what `DeviceMonitor.init` throws.
    public static func waitForCamera(uniqueID: String, backends: Set<CaptureBackend> = [.v4l2], timeout: Duration) async throws(MediaDevicesError) -> CaptureDevice? {
        // Listen first, then look: a camera that comes back in between is not missed.
        let monitor = try DeviceMonitor(kinds: [.camera], cameraBackends: backends)
        defer { monitor.stop() }
        if let camera = CaptureDevice.scan(backends: backends).devices.first(where: { $0.uniqueID == uniqueID }) { return camera }
        let timer = Task {
            try? await Task.sleep(for: timeout)
            monitor.stop()  // ends the sequence below
        }
        defer { timer.cancel() }
        for await event in monitor where event.action == .added && event.uniqueID == uniqueID {
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
    /// GStreamer, libcamera, FFmpeg and SDL leave this to the application.
    @discardableResult
    public func resumeWhenReconnected(timeout: Duration = .seconds(30)) async throws(MediaDevicesError) -> Bool {
        if isCapturing { return true }
        guard let camera = try await DeviceMonitor.waitForCamera(uniqueID: device.uniqueID, timeout: timeout) else { return false }
        try selectCaptureDevice(camera)
        try start()
        return true
    }
}

#if PipeWire
extension PipeWireCameraSource {
    /// After the camera's node went away (capture ended with `.disconnected`: the camera was
    /// unplugged, or its session manager stopped), waits up to `timeout` for a PipeWire node of
    /// the same camera (same `uniqueID`) to appear, and starts capturing from it with the
    /// current request, as `CameraSource.resumeWhenReconnected` does for V4L2. Returns `false`
    /// if none came in time. Does nothing (returns `true`) while capturing.
    @discardableResult
    public func resumeWhenReconnected(timeout: Duration = .seconds(30)) async throws(MediaDevicesError) -> Bool {
        if isCapturing { return true }
        guard let camera = try await DeviceMonitor.waitForCamera(uniqueID: uniqueID, backends: [.pipewire], timeout: timeout),
              let node = camera.pipeWireNodes.first else { return false }
        select(node)
        try start()
        return true
    }
}
#endif
