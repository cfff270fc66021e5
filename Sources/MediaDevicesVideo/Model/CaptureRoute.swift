import MediaDevicesCore
/// How MediaDevices reaches a camera.
public enum CaptureBackend: String, Sendable, Hashable, Encodable, CaseIterable {
    /// Directly and exclusively through the V4L2 device node.
    case v4l2
    /// Through a PipeWire session's camera node (shared with other applications; libcamera
    /// cameras are reachable only this way).
    case pipewire
    /// Through the Camera portal's PipeWire remote (sandboxed applications).
    case portal
}

/// One way to reach a camera: its V4L2 device node or a PipeWire camera node. A camera that
/// both offer (WirePlumber's V4L2 monitor wraps the device) has both routes.
public enum CaptureRoute: Sendable, Hashable, CustomStringConvertible {
    /// The V4L2 device node (`/dev/video0`).
    case v4l2(path: String)
    /// A PipeWire camera node, in the session or (backend `.portal`) through the Camera portal.
    case pipewire(PipeWireCameraNode)

    /// Which backend the route uses.
    public var backend: CaptureBackend {
        switch self {
        case .v4l2: .v4l2
        case .pipewire(let node): node.remote == .session ? .pipewire : .portal
        }
    }

    /// `"v4l2 /dev/video0"`, `"pipewire:42 v4l2_input.… (/dev/video0)"`.
    public var description: String {
        switch self {
        case .v4l2(let path): "v4l2 \(path)"
        case .pipewire(let node): node.description
        }
    }
}
