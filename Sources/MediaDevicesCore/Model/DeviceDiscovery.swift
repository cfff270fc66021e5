/// What looking for devices found: the devices, and why a backend or a device contributed
/// nothing (no permission on a node, no sound server, no X server). Discovery never throws
/// and never crashes on a device it cannot read: what it could not read is in ``DeviceDiscovery/problems``.
///
/// Made by `CaptureDevice.discover(backends:pipeWireTimeout:logger:)`,
/// `AudioDevice.discover(pulseTimeout:)` and `ScreenSource.discover(backend:)`. It is a
/// snapshot: look again (or watch a `DeviceMonitor`) to see devices that come and go.
public struct DeviceDiscovery<Device: Sendable>: Sendable {
    /// The devices found, in the backend's order (node number, card order, server order).
    public var devices: [Device]
    /// One error per backend or device that could not be read, naming it and the remedy.
    public var problems: [MediaDevicesError]

    /// A discovery result of `devices` and `problems`.
    package init(devices: [Device] = [], problems: [MediaDevicesError] = []) {
        self.devices = devices
        self.problems = problems
    }

    /// Adds `other`'s devices and problems after these.
    mutating func append(_ other: DeviceDiscovery<Device>) {
        devices += other.devices
        problems += other.problems
    }
}

/// Runs a discovery `scan` on a thread of its own, so that its waits on servers hold no thread
/// of the cooperative pool and end when the calling task is cancelled (the result then has a
/// `.cancelled` problem and what was found before).
package func discovering<Device: Sendable>(_ what: String,
                                    _ scan: @escaping @Sendable () -> DeviceDiscovery<Device>) async -> DeviceDiscovery<Device> {
    do {
        return try await runBlocking(name: "md-discover", device: nil, operation: "discover \(what)", scan)
    } catch {
        return DeviceDiscovery(problems: [error])
    }
}
