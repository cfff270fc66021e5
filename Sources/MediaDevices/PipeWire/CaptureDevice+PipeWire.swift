import Glibc

extension CaptureDevice {
    /// The cameras `backends` offer, each physical camera once with every route to it: a camera
    /// WirePlumber's V4L2 monitor wraps is the V4L2 device (same `uniqueID`) with its PipeWire
    /// node among `routes`; a camera only PipeWire offers (libcamera) is listed with `uniqueID`
    /// `libcamera:ID` (libcamera's camera id, stable across replug) or, for a V4L2 node this
    /// process may not open, the identifier V4L2 would give it. With `.pipewire` alone only
    /// cameras PipeWire offers are listed, with only their PipeWire routes. The PipeWire
    /// session is the default remote (`PIPEWIRE_REMOTE`, else `$XDG_RUNTIME_DIR/pipewire-0`).
    /// Throws what reading the PipeWire session throws (`.notFound` without one). `.portal`
    /// lists only the cameras the Camera portal's remote sees (as a sandboxed application
    /// does), each with its portal route (backend `.portal`): ask for access first
    /// (`CameraPortal.requestAccess()`), else `.permissionDenied`; `.notFound` without a
    /// Camera portal.
    public static func devices(backends: Set<CaptureBackend>, pipeWireTimeout: Duration = .seconds(5)) throws -> [CaptureDevice] {
        if backends.contains(.portal) { return try portalDevices(timeout: pipeWireTimeout) }
        let direct = enumerate().devices
        guard backends.contains(.pipewire) else { return backends.contains(.v4l2) ? direct : [] }
        let merged = merging(direct, try PipeWireCameraList.read(timeout: pipeWireTimeout), stableLink: stableLink(for:))
        guard !backends.contains(.v4l2) else { return merged }
        return merged.compactMap { device in
            let routes = device.routes.filter { $0.backend == .pipewire }
            return routes.isEmpty ? nil : device.with(uniqueID: device.uniqueID, routes: routes)
        }
    }

    /// The cameras the Camera portal's remote sees. The session manager grants the portal's
    /// connection its camera nodes a moment after it connects (WirePlumber's access-portal), so
    /// an empty listing is read again, for up to a second.
    private static func portalDevices(timeout: Duration) throws -> [CaptureDevice] {
        let remote = PipeWireRemote.cameraPortal(busAddress: nil)
        var nodes = try PipeWireCameraList.read(remote: remote, timeout: timeout)
        for _ in 0..<10 where nodes.isEmpty {
            usleep(100_000)
            nodes = try PipeWireCameraList.read(remote: remote, timeout: timeout)
        }
        return merging([], nodes, stableLink: stableLink(for:))
    }

    /// `devices` with each PipeWire node added to the device it wraps (same device path, or the
    /// same identifier: the udev link `stableLink` names for the node's `api.v4l2.path`, else
    /// `v4l2:DRIVER:BUS_INFO`), and a new device for each camera no V4L2 device matches (nodes
    /// with one identifier share it).
    static func merging(_ devices: [CaptureDevice], _ nodes: [PipeWireCameraNode],
                        stableLink: (String) -> String?) -> [CaptureDevice] {
        var merged = devices
        for node in nodes {
            let key = identifier(of: node, stableLink: stableLink)
            let path = node.v4l2Path.map(resolved)
            if let index = merged.firstIndex(where: { device in
                (path != nil && device.backends.contains(.v4l2) && resolved(device.path) == path) || device.uniqueID == key
            }) {
                merged[index] = merged[index].with(uniqueID: merged[index].uniqueID, routes: merged[index].routes + [.pipewire(node)])
            } else {
                merged.append(CaptureDevice(path: node.v4l2Path ?? "pipewire:\(node.name)", name: node.displayName,
                                            driver: node.v4l2Driver ?? (node.libcameraPath != nil ? "libcamera" : "pipewire"),
                                            busInfo: node.v4l2BusInfo ?? node.libcameraPath ?? "", capabilities: 0,
                                            uniqueID: key, position: position(of: node), isMultiplanar: false,
                                            routes: [.pipewire(node)]))
            }
        }
        return merged
    }

    /// What identifies `node`'s camera across replug and across backends.
    static func identifier(of node: PipeWireCameraNode, stableLink: (String) -> String?) -> String {
        if let path = node.v4l2Path {
            if let link = stableLink(path) { return link }
            if let driver = node.v4l2Driver, let bus = node.v4l2BusInfo { return "v4l2:\(driver):\(bus)" }
        }
        if let camera = node.libcameraPath { return "libcamera:\(camera)" }
        return "pipewire:\(node.name)"
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
