#if PipeWire
import MediaDevicesCore
import MediaDevicesVideo
import CPipeWire
import Glibc

/// A PipeWire session's camera nodes coming and going (the registry's `global` and
/// `global_remove`, through the CPipeWire shim's `cpw_watch`), as the `DeviceEvent`s
/// `DeviceMonitor` delivers: each camera described as
/// ``/MediaDevicesVideo/CaptureDevice/discover(backends:pipeWireTimeout:logger:)`` (`[.pipewire]`) describes it (same `uniqueID` as its V4L2 device where it wraps one).
/// After init, used only on the monitor's thread.
// @unchecked Sendable: made before the monitor thread starts, then used by that thread alone.
final class PipeWireCameraWatch: @unchecked Sendable {
    private var watch: OpaquePointer?
    /// The cameras present, by node id: a removal says what went.
    private var cameras: [UInt32: CaptureDevice] = [:]

    /// Watches the default remote (`PIPEWIRE_REMOTE`, else `$XDG_RUNTIME_DIR/pipewire-0`); the
    /// cameras present now are known, not announced. Throws `.notFound` without a PipeWire
    /// session.
    init() throws(MediaDevicesError) {
        var message = [CChar](repeating: 0, count: 256)
        guard let watch = cpw_watch_open(&message, message.count) else {
            let why = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw MediaDevicesError(.notFound, device: "pipewire", operation: "pw_context_connect",
                                    detail: "No PipeWire session to watch cameras in (\(why)); start pipewire and wireplumber, or set PIPEWIRE_REMOTE")
        }
        self.watch = watch
        do {
            for node in try PipeWireCameraList.read() { cameras[node.id] = Self.camera(node) }
        } catch {
            cpw_watch_close(watch)
            throw error
        }
    }

    deinit { if let watch { cpw_watch_close(watch) } }

    /// The descriptor to poll, or -1 once the connection was lost.
    var descriptor: Int32 { watch.map { cpw_watch_fd($0) } ?? -1 }

    /// Handles what the session sent and returns the events it makes: a camera node that
    /// appeared is read (its full properties say whether it is a camera, and its formats);
    /// one that went is the camera it was. When the connection breaks (the daemon went away)
    /// every camera is removed and the watch ends (`descriptor` is then -1).
    func events() -> [DeviceEvent] {
        guard let watch else { return [] }
        var events: [DeviceEvent] = []
        var lost = cpw_watch_iterate(watch) < 0
        var event = cpw_watch_event()
        var added: [UInt32] = []
        while cpw_watch_next(watch, &event) == 1 {
            switch event.action {
            case CPW_WATCH_ADDED.rawValue where cameras[event.id] == nil: added.append(event.id)
            case CPW_WATCH_REMOVED.rawValue:
                added.removeAll { $0 == event.id }
                if let camera = cameras.removeValue(forKey: event.id) { events.append(Self.event(.removed, camera)) }
            case CPW_WATCH_LOST.rawValue: lost = true
            default: break
            }
        }
        if !added.isEmpty, !lost, let nodes = try? PipeWireCameraList.read(timeout: .seconds(2)) {
            for node in nodes where added.contains(node.id) {
                let camera = Self.camera(node)
                cameras[node.id] = camera
                events.append(Self.event(.added, camera))
            }
        }
        if lost {
            events += cameras.values.map { Self.event(.removed, $0) }
            cameras = [:]
            cpw_watch_close(watch)
            self.watch = nil
        }
        return events
    }

    /// `node` as the device `CaptureDevice.discover(backends: [.pipewire])` lists.
    private static func camera(_ node: PipeWireCameraNode) -> CaptureDevice {
        CaptureDevice.merging([], [node], stableLink: CaptureDevice.stableLink(for:))[0]
    }

    private static func event(_ action: DeviceEvent.Action, _ camera: CaptureDevice) -> DeviceEvent {
        DeviceEvent(action: action, kind: .camera, device: UdevDevice(pipeWireCamera: camera), camera: camera, problem: nil,
                    isConnectorHotplug: false)
    }
}
#else
import MediaDevicesCore
import MediaDevicesVideo

/// Without the package trait `PipeWire` there is no PipeWire session to watch: asking a
/// `DeviceMonitor` for PipeWire cameras is `.notFound`, naming the trait.
final class PipeWireCameraWatch: Sendable {
    init() throws(MediaDevicesError) { throw BuildTraits.missingPipeWire(device: "pipewire", operation: "watch cameras") }
    /// No descriptor to poll.
    var descriptor: Int32 { -1 }
    /// No events.
    func events() -> [DeviceEvent] { [] }
}
#endif
