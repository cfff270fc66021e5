import MediaDevicesCore
/// A camera node of a PipeWire session (a registry global of type Node with `media.class`
/// "Video/Source" and `media.role` "Camera"), as WirePlumber's V4L2 or libcamera monitor made
/// it: who it is, what it wraps and what formats its `EnumFormat` params list.
public struct PipeWireCameraNode: Sendable, Hashable, CustomStringConvertible {
    /// The property that marks the nodes a ``VirtualCamera`` publishes, with the value "true".
    package static let virtualMarkerKey = "mediadevices.virtual"

    /// The node's global id in this session (what `pw-cli` and a stream connect to); it changes
    /// when the node is made again.
    public let id: UInt32
    /// `object.serial`: never reused within one PipeWire daemon's life.
    package let serial: UInt64
    /// `node.name` (`v4l2_input.platform-vivid.0-video-index0`), stable while the camera stays.
    public let name: String
    /// `node.description`, the name desktops show (`"Integrated Camera (V4L2)"`).
    public let nodeDescription: String
    /// `api.v4l2.path` when the node wraps a V4L2 device (`/dev/video0`).
    public let v4l2Path: String?
    /// `api.v4l2.cap.bus_info`, `api.v4l2.cap.card` and `api.v4l2.cap.driver` of a V4L2 node.
    package let v4l2BusInfo: String?, v4l2Card: String?, v4l2Driver: String?
    /// `api.libcamera.path` when the node is a libcamera camera (`"platform/vimc.0 Sensor B"`).
    package let libcameraPath: String?
    /// `device.vendor.id` and `device.product.id` where the monitor knew them (`"0x046d"`).
    package let vendorID: String?, productID: String?
    /// The formats its `EnumFormat` params list, grouped by pixel format in the node's order.
    public let formats: [CaptureFormat]
    /// Whether the node gives frame rates with its formats. libcamera nodes in Debian 12's
    /// PipeWire (0.3.65) give none: their sizes then carry no `frameRateRanges`, which means
    /// "not said", not "no rate".
    public let givesFrameRates: Bool
    /// SPA formats the node offers that MediaDevices has no pixel format for (their names).
    package let unmappedFormats: [String]
    /// The controls its `PropInfo` params describe, with the values its `Props` gave when the
    /// node was read: `id` is the Props key (SPA's `SPA_PROP_brightness`…, or the SPA's own
    /// id space: V4L2 nodes put unnamed V4L2 controls at `SPA_PROP_START_CUSTOM` + CID,
    /// libcamera nodes use libcamera's ids). Integer, boolean, enumerated (menu) and, from
    /// libcamera nodes, floating-point (`.float`) controls. A value the node's Props do not give is
    /// `.none` (V4L2 nodes in PipeWire 0.3.65 report ranges and defaults, not current values).
    public let controls: [CameraControl]
    /// Every property of the node, as PipeWire gives them.
    package let properties: [String: String]
    /// The connection that reaches it: the session's default remote, or the Camera portal's.
    var remote: PipeWireRemote = .session
    /// Whether its RGB formats' SPA names have the bytes in reverse order (a libcamera node of
    /// a PipeWire server before 1.1.81; see `PipeWireFormats.libcameraLabelsRGBReversed`):
    /// `formats` then name the bytes as they are, and a stream asks for the reversed SPA name.
    var labelsRGBReversed = false

    /// A node description, as read from a session.
    package init(id: UInt32, serial: UInt64, properties: [String: String], formats: [CaptureFormat],
                givesFrameRates: Bool, unmappedFormats: [String], controls: [CameraControl] = []) {
        self.controls = controls
        self.id = id
        self.serial = serial
        self.properties = properties
        name = properties["node.name"] ?? "node-\(id)"
        nodeDescription = properties["node.description"] ?? properties["node.nick"] ?? name
        v4l2Path = properties["api.v4l2.path"]
        v4l2BusInfo = properties["api.v4l2.cap.bus_info"]
        v4l2Card = properties["api.v4l2.cap.card"]
        v4l2Driver = properties["api.v4l2.cap.driver"]
        libcameraPath = properties["api.libcamera.path"]
        vendorID = properties["device.vendor.id"]
        productID = properties["device.product.id"]
        self.formats = formats
        self.givesFrameRates = givesFrameRates
        self.unmappedFormats = unmappedFormats
    }

    /// The name people recognise: the V4L2 card name, else the libcamera model or the node's
    /// description without the monitor's "(V4L2)" suffix.
    public var displayName: String {
        if let card = v4l2Card, !card.isEmpty { return card }
        if let model = properties["api.libcamera.model"] ?? properties["device.product.name"], !model.isEmpty { return model }
        return nodeDescription
    }

    /// `"pipewire:42 v4l2_input.… (/dev/video0)"`.
    public var description: String {
        "pipewire:\(serial) \(name) (\(v4l2Path ?? libcameraPath ?? "no device path"))"
    }
}
