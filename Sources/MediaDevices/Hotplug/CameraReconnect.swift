import Foundation

extension DeviceMonitor {
    /// Waits until the camera with `uniqueID` is present (now, or when it is plugged in again)
    /// and returns it as enumeration describes it; `nil` after `timeout`.
    public static func waitForCamera(uniqueID: String, timeout: Duration) async throws -> CaptureDevice? {
        // Listen first, then look: a camera that comes back in between is not missed.
        let monitor = try DeviceMonitor(kinds: [.camera])
        defer { monitor.stop() }
        if let present = CaptureDevice.scan().devices.first(where: { $0.uniqueID == uniqueID }) { return present }
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
    public func resumeWhenReconnected(timeout: Duration = .seconds(30)) async throws -> Bool {
        if isCapturing { return true }
        guard let camera = try await DeviceMonitor.waitForCamera(uniqueID: device.uniqueID, timeout: timeout) else { return false }
        try selectCaptureDevice(camera)
        try start()
        return true
    }
}
