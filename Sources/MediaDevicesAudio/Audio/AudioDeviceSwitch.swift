import MediaDevicesCore
/// What ``AudioDriver/switchCaptureDevice(to:options:)-9125`` (or `switchRenderDevice`) did, and how long the side was between devices.
public struct AudioDeviceSwitch: Sendable, Equatable {
    /// The device the side left (nil if it had none).
    public let from: AudioDevice?
    /// The device the side runs on now.
    public let to: AudioDevice
    /// Time spent opening the new device, while the old one still ran.
    public let open: Duration
    /// Time from the old run's stop request to the new run's start.
    public let pause: Duration
    /// Time from the old device's last period to the new device's first: what the
    /// application misses (capture) or hears as silence (render), besides the new device's own
    /// latency. Nil when the side was not running or the new device moved no period within a
    /// second.
    public let gap: Duration?
}
