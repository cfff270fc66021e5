import MediaDevicesCore
import Glibc
import Logging

extension CaptureDevice {
    /// The cameras `backends` offer, each physical camera once with every route to it, and what
    /// could not be read. `.v4l2` (the default): every video capture node in `/dev`, in
    /// node-number order; nodes that are not video capture (metadata, output, radio, VBI,
    /// touch, SDR) are skipped, nodes this process may not open are problems (most often
    /// `.permissionDenied`: the user is not in the `video` group), each also logged at debug
    /// level to `logger` (swift-log's; `nil`: no logging, the library makes no logger of its own).
    /// `.pipewire`: the cameras of the PipeWire session (`PIPEWIRE_REMOTE`, else
    /// `$XDG_RUNTIME_DIR/pipewire-0`), given `pipeWireTimeout` to answer: a camera
    /// WirePlumber's V4L2 monitor wraps is the V4L2 device (same `uniqueID`) with its PipeWire
    /// node among `routes`, and so is a UVC camera's libcamera node (WirePlumber 0.4 offers such
    /// a camera twice; it is listed once, its V4L2 node's route first); a camera only PipeWire
    /// offers (a MIPI camera through libcamera) is listed with `uniqueID` `libcamera:ID`
    /// (libcamera's camera id, stable across replug) or, for a V4L2 node this process may not
    /// open, the identifier V4L2 would give it. With `.pipewire` alone only
    /// cameras PipeWire offers are listed, with only their PipeWire routes. `.portal` adds the
    /// cameras the Camera portal's remote sees (as a sandboxed application does), each with its
    /// portal route (backend `.portal`): ask for access first (``CameraPortal/requestAccess(timeout:)``),
    /// else a `.permissionDenied` problem; `.notFound` without a Camera portal. The wait on PipeWire runs on a thread of its own
    /// and lasts at most `pipeWireTimeout`, cancelled or not (libpipewire's round trip does not
    /// look at the task).
    public static func discover(backends: Set<CaptureBackend> = [.v4l2], pipeWireTimeout: Duration = .seconds(5),
                                logger: Logger? = nil) async -> DeviceDiscovery<CaptureDevice> {
        await discovering("cameras") { scan(backends: backends, pipeWireTimeout: pipeWireTimeout, logger: logger) }
    }

    /// `discover(backends:pipeWireTimeout:logger:)` on the calling thread, for the synchronous
    /// command-line tool, the device monitor and tests.
    package static func scan(backends: Set<CaptureBackend> = [.v4l2], pipeWireTimeout: Duration = .seconds(5),
                             logger: Logger? = nil) -> DeviceDiscovery<CaptureDevice> {
        var found = scanDirectAndPipeWire(backends: backends, pipeWireTimeout: pipeWireTimeout, logger: logger)
        if backends.contains(.portal) {
            do {
                found.devices += try portalDevices(timeout: pipeWireTimeout)
            } catch {
                found.problems.append(MediaDevicesError.converting(error, device: "portal", operation: "list portal cameras"))
            }
        }
        return found
    }

    /// The V4L2 and PipeWire part of `scan`.
    private static func scanDirectAndPipeWire(backends: Set<CaptureBackend>, pipeWireTimeout: Duration,
                                              logger: Logger?) -> DeviceDiscovery<CaptureDevice> {
        var found = DeviceDiscovery<CaptureDevice>()
        let direct = enumerate(logger: logger)
        if backends.contains(.v4l2) { found.problems += direct.problems }
        guard backends.contains(.pipewire) else {
            if backends.contains(.v4l2) { found.devices = direct.devices }
            return found
        }
        let nodes: [PipeWireCameraNode]
        do {
            #if PipeWire
            nodes = try PipeWireCameraList.read(timeout: pipeWireTimeout)
            #else
            throw BuildTraits.missingPipeWire(device: "pipewire", operation: "list cameras")
            #endif
        } catch {
            found.problems.append(MediaDevicesError.converting(error, device: "pipewire", operation: "list cameras"))
            nodes = []
        }
        let merged = merging(direct.devices, nodes, stableLink: stableLink(for:))
        found.devices = backends.contains(.v4l2) ? merged : merged.compactMap { device in
            let routes = device.routes.filter { $0.backend == .pipewire }
            return routes.isEmpty ? nil : device.with(uniqueID: device.uniqueID, routes: routes)
        }
        return found
    }

    /// The cameras the Camera portal's remote sees. The session manager grants the portal's
    /// connection its camera nodes a moment after it connects (WirePlumber's access-portal), so
    /// an empty listing is read again, for up to a second.
    private static func portalDevices(timeout: Duration) throws(MediaDevicesError) -> [CaptureDevice] {
        #if !PipeWire
        throw BuildTraits.missingPipeWire(device: "portal", operation: "list portal cameras")
        #else
        let remote = PipeWireRemote.cameraPortal(busAddress: nil)
        var nodes = try PipeWireCameraList.read(remote: remote, timeout: timeout)
        for _ in 0..<10 where nodes.isEmpty {
            usleep(100_000)
            nodes = try PipeWireCameraList.read(remote: remote, timeout: timeout)
        }
        return merging([], nodes, stableLink: stableLink(for:))
        #endif
    }

    /// `devices` with each PipeWire node added to the device it wraps (same device path, or the
    /// same identifier: the udev link `stableLink` names for the node's `api.v4l2.path`, else
    /// `v4l2:DRIVER:BUS_INFO`), and a new device for each camera no V4L2 device matches (nodes
    /// with one identifier share it). A UVC camera's libcamera node joins the camera's V4L2
    /// device (listed directly or through its V4L2 node) whose libcamera id (`libcamera`) it
    /// carries, after the V4L2 node: so `PipeWireCameraSource(device:)` reads the V4L2 node,
    /// which offers the camera's MJPEG and frame rates.
    package static func merging(_ devices: [CaptureDevice], _ nodes: [PipeWireCameraNode], stableLink: (String) -> String?,
                                libcamera: LibcameraUVCNames = LibcameraUVCNames()) -> [CaptureDevice] {
        var merged = devices
        for node in nodes.filter({ $0.libcameraPath == nil }) + nodes.filter({ $0.libcameraPath != nil }) {
            let key = identifier(of: node, stableLink: stableLink, libcamera: libcamera)
            let path = node.v4l2Path.map(resolved)
            if let index = merged.firstIndex(where: { device in
                (path != nil && device.backends.contains(.v4l2) && resolved(device.path) == path) || device.uniqueID == key
                    || node.libcameraPath.map { isUVCCamera(device, named: $0, libcamera) } == true
            }) {
                merged[index] = merged[index].with(uniqueID: merged[index].uniqueID, routes: merged[index].routes + [.pipewire(node)])
            } else {
                merged.append(CaptureDevice(path: node.v4l2Path ?? "pipewire:\(node.name)", name: node.displayName,
                                            driver: node.v4l2Driver ?? (node.libcameraPath != nil ? "libcamera" : "pipewire"),
                                            busInfo: node.v4l2BusInfo ?? node.libcameraPath ?? "", capabilities: 0,
                                            uniqueID: key, position: position(of: node), isMultiplanar: false,
                                            routes: [.pipewire(node)],
                                            group: (node.v4l2Path.map { [$0] } ?? node.libcameraPath.map { libcamera.videoNodes(ofCameraID: $0) } ?? [])
                                                .lazy.compactMap { DeviceGroup.of(characterDevice: $0) }.first))
            }
        }
        return merged
    }

    /// What identifies `node`'s camera across replug and across backends: a UVC camera's
    /// libcamera node has its V4L2 device's identifier where that device can be found and
    /// opened, other libcamera cameras `libcamera:ID`.
    static func identifier(of node: PipeWireCameraNode, stableLink: (String) -> String?,
                           libcamera: LibcameraUVCNames = LibcameraUVCNames()) -> String {
        if let path = node.v4l2Path {
            if let link = stableLink(path) { return link }
            if let driver = node.v4l2Driver, let bus = node.v4l2BusInfo { return "v4l2:\(driver):\(bus)" }
        }
        if let camera = node.libcameraPath {
            for path in libcamera.videoNodes(ofCameraID: camera) {
                if let link = stableLink(path) { return link }
                if let device = try? CaptureDevice(path: path) { return device.uniqueID }
            }
            return "libcamera:\(camera)"
        }
        return "pipewire:\(node.name)"
    }

    /// Whether `device` is the UVC camera whose libcamera camera id is `cameraID`.
    private static func isUVCCamera(_ device: CaptureDevice, named cameraID: String, _ libcamera: LibcameraUVCNames) -> Bool {
        device.driver == "uvcvideo" && device.path.hasPrefix("/dev/") && libcamera.cameraID(ofVideoNode: device.path) == cameraID
    }

    private static func resolved(_ path: String) -> String {
        guard let real = realpath(path, nil) else { return path }
        defer { free(real) }
        return String(cString: real)
    }

    /// libcamera's `api.libcamera.location` (front, back, external), where the node has it.
    private static func position(of node: PipeWireCameraNode) -> Position {
        switch node.properties["api.libcamera.location"] {
        case "front": .front
        case "back": .back
        case "external": .external
        default: .unknown
        }
    }
}
