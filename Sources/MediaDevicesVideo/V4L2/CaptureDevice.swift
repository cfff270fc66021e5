import MediaDevicesCore
import CV4L2
import Foundation
import Logging

/// A V4L2 video capture device (a `/dev/video*` node that captures video, single- or
/// multi-planar): what it is and what it offers. AVFoundation's `AVCaptureDevice`.
/// Capture from it with ``CameraSource``.
public struct CaptureDevice: Sendable, Hashable, Identifiable, CustomStringConvertible {
    /// Where the camera faces, from `V4L2_CID_CAMERA_ORIENTATION` where the driver has it.
    public enum Position: String, Sendable {
        /// Faces the user.
        case front
        /// Faces away from the user.
        case back
        /// A camera that can be moved freely (USB webcams).
        case external
        /// The driver does not say.
        case unknown
    }

    /// The device node (`/dev/video0`).
    public let path: String
    /// The card name (`v4l2_capability.card`).
    public let name: String
    /// The driver name (`uvcvideo`, `vivid`).
    public let driver: String
    /// The bus the device sits on (`usb-0000:00:14.0-1`, `platform:vivid-000`).
    public let busInfo: String
    /// The node's V4L2 capability bits (`device_caps`).
    package let capabilities: UInt32
    /// An identifier that survives renumbering: the `/dev/v4l/by-id` or `by-path` link name
    /// where udev made one, else `v4l2:DRIVER:BUS_INFO`.
    public let uniqueID: String
    /// Where the camera faces.
    public let position: Position
    /// Whether the node uses the multi-planar API.
    public let isMultiplanar: Bool
    /// The ways to reach this camera: its V4L2 node, and the PipeWire nodes that offer it when the listing
    /// included PipeWire (``discover(backends:pipeWireTimeout:logger:)``). A camera only PipeWire offers (a
    /// libcamera camera) has only PipeWire routes; its ``path`` is then `pipewire:NODE_NAME`.
    public let routes: [CaptureRoute]
    /// The physical device this camera is part of, as browsers' `groupId`: an audio device
    /// (`AudioDevice.group`) with the same value is the same device, a webcam's own microphone
    /// (`microphones(among:)` in the `MediaDevices` product finds them). An opaque value to
    /// compare, not to parse (today `usb:3-1`, the USB bus and port, for a USB camera;
    /// `pci:0000:01:00` or `platform:vivid.0` for others); the same after an unplug and a replug
    /// on the same port. Read from sysfs: the USB device (else the PCI slot or the platform
    /// device) that the V4L2 node hangs on.
    ///
    /// `nil` where the node has no physical parent (v4l2loopback, under `/sys/devices/virtual`)
    /// or no V4L2 node (a libcamera camera that is not UVC, a PipeWire node not backed by a device).
    public let group: String?

    /// The backends ``routes`` use, V4L2 first.
    public var backends: [CaptureBackend] {
        CaptureBackend.allCases.filter { backend in routes.contains { $0.backend == backend } }
    }

    /// The PipeWire camera nodes among ``routes``.
    public var pipeWireNodes: [PipeWireCameraNode] {
        routes.compactMap { if case .pipewire(let node) = $0 { node } else { nil } }
    }

    /// The ``uniqueID``.
    public var id: String { uniqueID }

    /// `"/dev/video0: vivid (vivid) platform:vivid-000"`.
    public var description: String { "\(path): \(name) (\(driver)) \(busInfo)" }

    /// The V4L2 capture devices in `/dev`, and an error for each `/dev/video*` node that could
    /// not be opened or queried (most often `.permissionDenied`: the user is not in the `video`
    /// group). Each node skipped is logged at debug level to `logger`.
    package static func enumerate(logger: Logger? = nil) -> DeviceDiscovery<CaptureDevice> {
        enumerate(in: "/dev", logger: logger)
    }

    /// `enumerate(logger:)` of the nodes in `directory` (`nil` logger: no logging; the
    /// library makes no logger of its own, and the problems are returned either way).
    static func enumerate(in directory: String, logger: Logger? = nil) -> DeviceDiscovery<CaptureDevice> {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        let nodes = names.filter { $0.hasPrefix("video") && Int($0.dropFirst(5)) != nil }
            .sorted { Int($0.dropFirst(5))! < Int($1.dropFirst(5))! }
        var found: [CaptureDevice] = []
        var problems: [MediaDevicesError] = []
        for node in nodes {
            do {
                let device = try V4L2Device(path: "\(directory)/\(node)")
                if device.canCapture { found.append(CaptureDevice(device)) }
            } catch {
                logger?.debug("skipping a video node", metadata: ["node": "\(directory)/\(node)", "error": "\(error)"])
                problems.append(error)
            }
        }
        // Two capture nodes on one bus (rare) get their node order appended to stay unique.
        let counts = Dictionary(grouping: found, by: \.uniqueID).filter { $0.value.count > 1 }
        guard !counts.isEmpty else { return DeviceDiscovery(devices: found, problems: problems) }
        var seen: [String: Int] = [:]
        let unique = found.map { device in
            guard counts[device.uniqueID] != nil else { return device }
            let n = seen[device.uniqueID, default: 0]
            seen[device.uniqueID] = n + 1
            return device.with(uniqueID: "\(device.uniqueID)#\(n)")
        }
        return DeviceDiscovery(devices: unique, problems: problems)
    }

    /// The device at `path`; throws if it cannot be opened or does not capture video.
    public init(path: String) throws(MediaDevicesError) {
        let device = try V4L2Device(path: path)
        guard device.canCapture else {
            throw MediaDevicesError(.notFound, device: path, operation: "VIDIOC_QUERYCAP",
                                    detail: "This node does not capture video (it may be a metadata, output or radio node)",
                                    remedy: "CaptureDevice.discover() lists the capture devices")
        }
        self.init(device)
    }

    init(_ device: V4L2Device) {
        path = device.path
        name = cString(device.capability.card)
        driver = cString(device.capability.driver)
        busInfo = cString(device.capability.bus_info)
        capabilities = device.deviceCaps
        isMultiplanar = device.isMultiplanar
        routes = [.v4l2(path: device.path)]
        uniqueID = CaptureDevice.stableLink(for: device.path) ?? "v4l2:\(driver):\(busInfo)"
        group = DeviceGroup.of(characterDevice: device.path)
        switch device.control(cv4l2_CID_CAMERA_ORIENTATION) {
        case Int32(V4L2_CAMERA_ORIENTATION_FRONT): position = .front
        case Int32(V4L2_CAMERA_ORIENTATION_BACK): position = .back
        case Int32(V4L2_CAMERA_ORIENTATION_EXTERNAL): position = .external
        default: position = .unknown
        }
    }

    /// A device described field by field (a camera only PipeWire offers, or a copy with new
    /// routes or identifier).
    init(path: String, name: String, driver: String, busInfo: String, capabilities: UInt32, uniqueID: String,
         position: Position, isMultiplanar: Bool, routes: [CaptureRoute], group: String? = nil) {
        self.path = path; self.name = name; self.driver = driver; self.busInfo = busInfo
        self.capabilities = capabilities; self.uniqueID = uniqueID; self.position = position
        self.isMultiplanar = isMultiplanar; self.routes = routes; self.group = group
    }

    private func with(uniqueID: String) -> CaptureDevice { with(uniqueID: uniqueID, routes: routes) }

    /// This device with another identifier and routes.
    func with(uniqueID: String, routes: [CaptureRoute]) -> CaptureDevice {
        CaptureDevice(path: path, name: name, driver: driver, busInfo: busInfo, capabilities: capabilities,
                      uniqueID: uniqueID, position: position, isMultiplanar: isMultiplanar, routes: routes, group: group)
    }

    /// The name of the udev link in `/dev/v4l/by-id` (preferred) or `/dev/v4l/by-path` that
    /// points at `path`.
    package static func stableLink(for path: String) -> String? {
        let target = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
        for folder in ["/dev/v4l/by-id", "/dev/v4l/by-path"] {
            let links = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
            for link in links.sorted() {
                let resolved = URL(fileURLWithPath: "\(folder)/\(link)").resolvingSymlinksInPath().path
                if resolved == target { return link }
            }
        }
        return nil
    }

    /// Every pixel format with every frame size and frame interval, exactly as the driver
    /// reports them. The corresponding ioctls are `VIDIOC_ENUM_FMT`, `VIDIOC_ENUM_FRAMESIZES`
    /// and `VIDIOC_ENUM_FRAMEINTERVALS`.
    /// A camera only PipeWire offers lists what its node's `EnumFormat` params listed when the
    /// devices were read.
    public func supportedFormats() throws(MediaDevicesError) -> [CaptureFormat] {
        if !backends.contains(.v4l2), let node = pipeWireNodes.first { return node.formats }
        return try V4L2Device(path: path).enumerateFormats()
    }

    /// The format the device is set to now (`VIDIOC_G_FMT`).
    public func currentFormat() throws(MediaDevicesError) -> VideoFormat {
        try V4L2Device(path: path).currentFormat()
    }
}
