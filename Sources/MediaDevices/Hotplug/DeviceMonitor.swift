import MediaDevicesCore
import MediaDevicesAudio
import MediaDevicesVideo
import CUdev
import Foundation
import Glibc
import Logging
import Synchronization

/// A device that came, went or changed.
public struct DeviceEvent: Sendable, CustomStringConvertible {
    /// What happened.
    public enum Action: String, Sendable {
        /// The device appeared.
        case added
        /// The device went away; streams from it end with
        /// ``/MediaDevicesCore/MediaDevicesError/Code/disconnected``.
        case removed
        /// Something about it changed (for screens: a connector was plugged or unplugged).
        case changed
    }

    /// Which kind of device.
    public enum Kind: String, Sendable, CaseIterable {
        /// A V4L2 video capture node (`video4linux`).
        case camera
        /// A DRM card (`drm`): displays.
        case screen
        /// An ALSA sound card (`sound`).
        case sound

        var subsystem: String {
            switch self {
            case .camera: return "video4linux"
            case .screen: return "drm"
            case .sound: return "sound"
            }
        }
    }

    /// What happened.
    public let action: Action
    /// Which kind of device.
    public let kind: Kind
    /// The udev facts (subsystem, sysfs path, device node, card number, `ID_PATH`); for a
    /// PipeWire camera node (a monitor watching ``/MediaDevicesVideo/CaptureBackend/pipewire``),
    /// the node's (subsystem `pipewire`). What apps use of them is ``devnode`` and ``name``.
    package let device: UdevDevice
    /// The device node (`/dev/video0`, `/dev/dri/card1`); `nil` for a sound card (its control,
    /// PCM and timer nodes are children: see ``audioDevices``); for a PipeWire camera node, the
    /// V4L2 device it wraps, if any.
    public var devnode: String? { device.devnode }
    /// A human name: for cameras the V4L2 `name` attribute, for screens the DRM driver
    /// (`bochs-drm`), for sound cards the ALSA card id (`Loopback`); for a removed device, the
    /// one it had while present.
    public var name: String? { device.name }
    /// For cameras: the same description
    /// ``/MediaDevicesVideo/CaptureDevice/discover(backends:pipeWireTimeout:logger:)`` gives (for a removed
    /// camera, the one it had while present). `nil` for other kinds, and for a camera that could not be
    /// opened (see ``problem``).
    public let camera: CaptureDevice?
    /// Why a camera that appeared could not be described (most often
    /// ``/MediaDevicesCore/MediaDevicesError/Code/permissionDenied``).
    public let problem: MediaDevicesError?
    /// For screens: the kernel said a connector changed (`HOTPLUG=1`).
    public let isConnectorHotplug: Bool
    /// For screen (DRM card) events: the card's connected screens as
    /// ``/MediaDevicesVideo/ScreenSource/discover(backend:)`` (``/MediaDevicesVideo/ScreenBackend/kms``)
    /// describes them now (for a removed card, the ones it had; for an added one, read again for up to half a
    /// second while there are none, as its screens follow its uevent by a moment).
    public var screens: [Screen] = []
    /// For sound card events: the card's ALSA PCMs as
    /// ``/MediaDevicesAudio/AudioDevice/discover(pulseTimeout:)`` describes them now (for a removed card, the
    /// ones it had).
    public var audioDevices: [AudioDevice] = []

    /// The identifier enumeration gives: ``/MediaDevicesVideo/CaptureDevice/uniqueID`` for cameras, else
    /// the udev device's (each screen and PCM of a card has its own `uniqueID` as well).
    public var uniqueID: String { camera?.uniqueID ?? device.uniqueID }

    /// `"added camera /dev/video0 (v4l2:vivid:platform:vivid-000)"`, with " through PipeWire"
    /// for a PipeWire camera node.
    public var description: String {
        let pipeWire = device.subsystem == "pipewire"
        return "\(action.rawValue) \(kind.rawValue) \(device.devnode ?? (pipeWire ? device.sysname : device.syspath)) (\(uniqueID))"
            + (pipeWire ? " through PipeWire" : "")
    }
}

/// Watches for cameras, screens and sound cards coming and going: ``events`` is an
/// `AsyncSequence` of ``DeviceEvent``s, read from libudev's netlink monitor on a dedicated thread.
///
/// With systemd-udevd running (`/run/udev/control` exists) it listens to udevd's events, which
/// come after udevd has set permissions and made the `/dev/v4l/by-*` links; without udevd
/// (containers, initramfs, the test rig) it listens to the kernel's uevents directly.
///
/// ```swift
/// let monitor = try DeviceMonitor()
/// for await event in monitor.events { print(event) }
/// ```
/// One task iterates a monitor's events; make another monitor for another consumer.
public final class DeviceMonitor: Sendable {

    /// Where events come from.
    public enum Source: String, Sendable, Encodable {
        /// ``udev`` if systemd-udevd runs, else ``kernel``.
        case automatic
        /// systemd-udevd's processed events.
        case udev
        /// The kernel's raw uevents.
        case kernel

        /// What ``automatic`` means here and now.
        package static var detected: Source {
            FileManager.default.fileExists(atPath: "/run/udev/control") ? .udev : .kernel
        }
    }

    /// The source in use (never ``DeviceMonitor/Source-swift.enum/automatic``).
    public let source: Source
    /// The kinds watched.
    public let kinds: Set<DeviceEvent.Kind>
    private let stream: AsyncStream<DeviceEvent>
    private let continuation: AsyncStream<DeviceEvent>.Continuation
    private let wake: WakeUpEvent
    private let thread: CaptureThread
    /// Where the monitor logs (a failed poll that ends the events): the application's logger
    /// given to `init`; `nil`: it does not log (the library makes no logger of its own).
    public let logger: Logger?

    /// Starts watching `kinds` from `source`, logging to `logger` (swift-log's; `nil`: no logging; the
    /// failures it would log also end the events). Cameras come from `cameraBackends`:
    /// ``/MediaDevicesVideo/CaptureBackend/v4l2``, the video capture nodes udev announces;
    /// ``/MediaDevicesVideo/CaptureBackend/pipewire``, the camera nodes of the PipeWire session
    /// (`PIPEWIRE_REMOTE`, else `$XDG_RUNTIME_DIR/pipewire-0`) appearing and going, each described as
    /// ``/MediaDevicesVideo/CaptureDevice/discover(backends:pipeWireTimeout:logger:)`` (`[.pipewire]`)
    /// describes it (a camera both offer then comes once per backend, with the same ``DeviceEvent/uniqueID``;
    /// when the PipeWire daemon goes away its cameras are removed). Throws if the netlink socket cannot be
    /// opened (``/MediaDevicesCore/MediaDevicesError/Code/permissionDenied`` in a sandbox that forbids
    /// netlink), ``/MediaDevicesCore/MediaDevicesError/Code/notFound`` when PipeWire is asked for and no
    /// session answers.
    public init(kinds: Set<DeviceEvent.Kind> = Set(DeviceEvent.Kind.allCases), source: Source = .automatic,
                cameraBackends: Set<CaptureBackend> = [.v4l2], logger: Logger? = nil) throws(MediaDevicesError) {
        self.logger = logger
        let resolved = source == .automatic ? Source.detected : source
        self.source = resolved
        self.kinds = kinds
        let udev = try UdevContext()
        guard let monitor = udev_monitor_new_from_netlink(udev.pointer, resolved.rawValue) else {
            throw MediaDevicesError(.permissionDenied, device: "netlink:\(resolved.rawValue)", operation: "udev_monitor_new_from_netlink",
                                    detail: "Could not open the \(resolved.rawValue) uevent socket; a sandbox may forbid netlink sockets")
        }
        let udevKinds = cameraBackends.contains(.v4l2) ? kinds : kinds.subtracting([.camera])
        for kind in udevKinds { udev_monitor_filter_add_match_subsystem_devtype(monitor, kind.subsystem, nil) }
        let status = udev_monitor_enable_receiving(monitor)
        guard status >= 0 else {
            udev_monitor_unref(monitor)
            throw MediaDevicesError.fromErrno(-status, device: "netlink:\(resolved.rawValue)", operation: "udev_monitor_enable_receiving")
        }
        (stream, continuation) = AsyncStream<DeviceEvent>.makeStream(bufferingPolicy: .bufferingOldest(4096))
        let wake = try WakeUpEvent()
        self.wake = wake
        // Remember what is there now, so a removal can say what went.
        let known = KnownDevices(udev: udev, kinds: udevKinds)
        let pipeWire: PipeWireCameraWatch?
        do {
            pipeWire = kinds.contains(.camera) && cameraBackends.contains(.pipewire) ? try PipeWireCameraWatch() : nil
        } catch {
            udev_monitor_unref(monitor)
            throw error
        }
        let continuation = self.continuation
        let box = MonitorBox(udev: udev, monitor: monitor)
        do {
            thread = try CaptureThread(name: "md-hotplug") {
                DeviceMonitor.run(box, wake: wake, known: known, pipeWire: pipeWire, continuation: continuation, logger: logger)
            }
        } catch {
            continuation.finish()
            throw error
        }
    }

    deinit { stop() }

    /// Stops watching and ends the sequence. Safe to call more than once.
    public func stop() {
        wake.signal()
        thread.join()
        continuation.finish()
    }

    /// The events, each one device added, removed or changed, as they happen; the sequence ends
    /// with ``stop()`` (one consumer per monitor). Iterating it keeps the monitor watching.
    public var events: some AsyncSequence<DeviceEvent, Never> & Sendable { Events(monitor: self) }

    /// The sequence ``events`` returns: the monitor's stream, with the monitor held while it is read.
    struct Events: AsyncSequence, Sendable {
        let monitor: DeviceMonitor

        func makeAsyncIterator() -> Iterator { Iterator(monitor: monitor, base: monitor.stream.makeAsyncIterator()) }

        /// The stream's iterator, holding the monitor.
        struct Iterator: AsyncIteratorProtocol {
            let monitor: DeviceMonitor
            var base: AsyncStream<DeviceEvent>.Iterator

            mutating func next() async -> DeviceEvent? { await base.next() }

            mutating func next(isolation actor: isolated (any Actor)?) async -> DeviceEvent? { await base.next(isolation: actor) }
        }
    }

    private static func run(_ box: MonitorBox, wake: WakeUpEvent, known: KnownDevices, pipeWire: PipeWireCameraWatch?,
                            continuation: AsyncStream<DeviceEvent>.Continuation, logger: Logger?) {
        // The PipeWire watch's descriptor is the third, -1 (ignored by poll) without one or
        // once its connection is lost.
        var fds = [pollfd(fd: udev_monitor_get_fd(box.monitor), events: Int16(POLLIN), revents: 0),
                   pollfd(fd: wake.descriptor, events: Int16(POLLIN), revents: 0),
                   pollfd(fd: pipeWire?.descriptor ?? -1, events: Int16(POLLIN), revents: 0)]
        while true {
            for index in fds.indices { fds[index].revents = 0 }
            let ready = fds.withUnsafeMutableBufferPointer { poll($0.baseAddress, 3, -1) }
            if ready < 0 {
                if errno == EINTR { continue }
                logger?.error("hotplug monitor: poll failed; no more events", metadata: ["errno": "\(errno)"])
                break
            }
            if fds[1].revents != 0 { break }
            if fds[2].revents != 0, let pipeWire {
                for event in pipeWire.events() { continuation.yield(event) }
                fds[2].fd = pipeWire.descriptor
            }
            guard fds[0].revents & Int16(POLLIN) != 0 else { continue }
            // Drain everything queued.
            while let device = udev_monitor_receive_device(box.monitor) {
                let event = known.event(for: device)
                udev_device_unref(device)
                if let event { continuation.yield(event) }
            }
        }
        continuation.finish()
    }
}

/// The libudev objects, freed when the monitor thread lets go of them.
// @unchecked Sendable: immutable pointers, used by the monitor thread alone and freed after it ends.
private final class MonitorBox: @unchecked Sendable {
    let udev: UdevContext
    let monitor: OpaquePointer
    init(udev: UdevContext, monitor: OpaquePointer) { self.udev = udev; self.monitor = monitor }
    deinit { udev_monitor_unref(monitor) }
}

/// Turns udev devices into events, remembering what each present device was, so that a
/// removal (when the node and sysfs are gone) still carries its description. Used only on the
/// monitor's thread after init.
// @unchecked Sendable: made before the monitor thread starts, then used by that thread alone.
private final class KnownDevices: @unchecked Sendable {
    private var cameras: [String: CaptureDevice] = [:]  // by sysname (video0)
    private var others: [String: UdevDevice] = [:]      // by syspath
    private let kinds: Set<DeviceEvent.Kind>

    init(udev: UdevContext, kinds: Set<DeviceEvent.Kind>) {
        self.kinds = kinds
        if kinds.contains(.camera) {
            for camera in CaptureDevice.scan().devices { cameras[(camera.path as NSString).lastPathComponent] = camera }
        }
        for kind in kinds where kind != .camera {
            for device in udev.devices(subsystem: kind.subsystem, sysnamePrefix: "card") where device.cardNumber != nil {
                others[device.syspath] = device
            }
        }
    }

    func event(for device: OpaquePointer) -> DeviceEvent? {
        let info = UdevDevice(device)
        guard let kind = kinds.first(where: { $0.subsystem == info.subsystem }) else { return nil }
        let action: DeviceEvent.Action
        switch udev_device_get_action(device).map({ String(cString: $0) }) {
        case "add": action = .added
        case "remove": action = .removed
        case "change": action = .changed
        default: return nil  // bind, unbind, move, online, offline
        }
        switch kind {
        case .camera:
            return cameraEvent(action, info)
        case .screen, .sound:
            // Only the cards themselves (not connectors, render nodes, PCM or control nodes).
            guard info.cardNumber != nil, info.sysname.dropFirst(4).allSatisfy(\.isNumber) else { return nil }
            let hotplug = udev_device_get_property_value(device, "HOTPLUG").map { String(cString: $0) } == "1"
            var facts = info
            switch action {
            case .added:
                if kind == .sound, facts.name == nil { facts.name = KnownDevices.soundCardID(info.syspath) }
                others[info.syspath] = facts
            case .removed: facts = others.removeValue(forKey: info.syspath) ?? info
            case .changed: facts = info.name == nil ? (others[info.syspath] ?? info) : info
            }
            var event = DeviceEvent(action: action, kind: kind, device: facts, camera: nil, problem: nil,
                                    isConnectorHotplug: kind == .screen && hotplug)
            describe(&event, card: facts)
            return event
        }
    }

    /// Screens and PCMs of each card, as enumeration described them at the last event.
    private var screensByCard: [String: [Screen]] = [:]
    private var audioByCard: [Int: [AudioDevice]] = [:]

    /// Adds to `event` what enumeration says of the card now (or, removed, what it said before).
    private func describe(_ event: inout DeviceEvent, card: UdevDevice) {
        switch event.kind {
        case .screen:
            let node = card.devnode ?? "/dev/dri/\(card.sysname)"
            if event.action == .removed {
                event.screens = screensByCard.removeValue(forKey: node) ?? []
            } else {
                event.screens = Self.settled(event.action) { ScreenSource.scan(backend: .kms).devices.filter { $0.card == node } }
                screensByCard[node] = event.screens
            }
        case .sound:
            guard let number = card.cardNumber else { return }
            if event.action == .removed {
                event.audioDevices = audioByCard.removeValue(forKey: number) ?? []
            } else {
                event.audioDevices = Self.settled(event.action) { ALSADevices.enumerate().devices.filter { $0.card == number } }
                audioByCard[number] = event.audioDevices
            }
        case .camera:
            return
        }
    }

    /// What `read` finds of a card: for an added card, read again for up to half a second while
    /// it finds nothing. A card's uevent comes a moment before what hangs off it: an ALSA card's
    /// control and PCM nodes, a DRM card's screens (a monitor hearing the kernel's uevents, as
    /// without udevd, once saw bochs's card with no screen while a scan just after found one).
    private static func settled<Item>(_ action: DeviceEvent.Action, _ read: () -> [Item]) -> [Item] {
        var found = read()
        guard action == .added else { return found }
        for _ in 0..<25 {
            if !found.isEmpty { break }
            usleep(20_000)
            found = read()
        }
        return found
    }

    /// ALSA announces a card before it gives it its id (`snd_card_register` sets a default id
    /// after `device_add`), so the id is read again for up to half a second.
    private static func soundCardID(_ syspath: String) -> String? {
        for _ in 0..<50 {
            if let id = Sysfs.attribute(syspath, "id"), !id.isEmpty { return id }
            usleep(10_000)
        }
        return nil
    }

    private func cameraEvent(_ action: DeviceEvent.Action, _ info: UdevDevice) -> DeviceEvent? {
        guard info.sysname.hasPrefix("video") else { return nil }  // not vbi, radio, swradio, v4l-touch
        switch action {
        case .removed:
            // Only capture nodes were remembered; other video nodes go silently.
            guard let camera = cameras.removeValue(forKey: info.sysname) else { return nil }
            return DeviceEvent(action: .removed, kind: .camera, device: info, camera: camera, problem: nil, isConnectorHotplug: false)
        case .added, .changed:
            guard let path = info.devnode else { return nil }
            let (camera, problem) = describe(path)
            if camera == nil, problem == nil { return nil }  // not a capture node
            if let camera { cameras[info.sysname] = camera }
            return DeviceEvent(action: action, kind: .camera, device: info, camera: camera, problem: problem, isConnectorHotplug: false)
        }
    }

    /// The camera as enumeration describes it (same `uniqueID`, including the suffix that
    /// tells apart two capture nodes on one bus). The kernel announces a node a moment before
    /// it can be opened, so ENODEV is retried for up to a second.
    private func describe(_ path: String) -> (CaptureDevice?, MediaDevicesError?) {
        var lastProblem: MediaDevicesError?
        for _ in 0..<50 {
            let (devices, problems) = { ($0.devices, $0.problems) }(CaptureDevice.enumerate())
            if let camera = devices.first(where: { $0.path == path }) { return (camera, nil) }
            lastProblem = problems.first { $0.device == path }
            guard let problem = lastProblem else { return (nil, nil) }  // opened fine: not a capture node
            guard problem.code == .disconnected || problem.code == .notFound else { return (nil, problem) }
            usleep(20_000)
        }
        return (nil, lastProblem)
    }
}
