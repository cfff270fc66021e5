import MediaDevicesCore
import CDRM
import Foundation
import Glibc
import Synchronization

/// A display's orientation from DRM/KMS: the connector property "panel orientation" (how the
/// panel is mounted in the device, from firmware quirks) and the "rotation" property of the
/// primary plane that scans out to it (how the compositor rotates the framebuffer).
///
/// `orientation` is the clockwise rotation that turns the framebuffer, as a KMS screen grab
/// reads it, into what the viewer sees. It changes only on a mode set or a hotplug: call
/// `refresh()` then (the `DeviceMonitor` reports both as `.changed` DRM events).
public final class DisplayOrientationTracker: OrientationTracker, Sendable {
    /// What was read from the card.
    package struct Properties: Sendable, Hashable, Codable {
        /// The connector (`Virtual-1`, `eDP-1`).
        package var connector: String
        /// The "panel orientation" enum name (`Normal`, `Upside Down`, `Left Side Up`,
        /// `Right Side Up`), `nil` if the connector lacks the property.
        package var panelOrientation: String?
        /// The primary plane's "rotation" bits (`DRM_MODE_ROTATE_*`, `DRM_MODE_REFLECT_*`),
        /// `nil` if the plane lacks the property or no plane scans out to the connector.
        package var planeRotation: UInt64?
    }

    /// The card node (`/dev/dri/card0`).
    public let card: String
    /// The connector asked for, `nil`: the first connected one.
    public let connectorName: String?
    private let cell: OrientationCell
    private let current: Mutex<Properties>

    /// Reads the orientation of `connector` (first connected one if `nil`) on `card`.
    public init(card: String = "/dev/dri/card0", connector: String? = nil) throws(MediaDevicesError) {
        self.card = card
        connectorName = connector
        let properties = try DisplayOrientationTracker.read(card: card, connector: connector)
        current = Mutex(properties)
        cell = OrientationCell(DisplayOrientationTracker.orientation(properties))
    }

    /// The rotation from framebuffer to what the viewer sees.
    public var orientation: VideoOrientation { cell.orientation }

    /// The orientation now, then each change `refresh()` found.
    public func orientationChanges() -> AsyncStream<VideoOrientation> { cell.changes() }

    /// What the last read found.
    package var properties: Properties { current.withLock { $0 } }

    /// Reads the properties again (after a mode set or hotplug).
    @discardableResult
    public func refresh() throws(MediaDevicesError) -> VideoOrientation {
        let properties = try DisplayOrientationTracker.read(card: card, connector: connectorName)
        current.withLock { $0 = properties }
        let orientation = DisplayOrientationTracker.orientation(properties)
        cell.set(orientation)
        return orientation
    }

    /// The rotation for a panel mounted as `panelOrientation` showing a plane rotated by
    /// `planeRotation`: the kernel's `DRM_MODE_ROTATE_90` turns the framebuffer 90°
    /// counter-clockwise on the way out, and a panel mounted "Left Side Up" turns what it
    /// shows 90° clockwise for the viewer.
    package static func orientation(_ properties: Properties) -> VideoOrientation {
        let panel: VideoOrientation
        switch properties.panelOrientation {
        case "Upside Down": panel = .down
        case "Left Side Up": panel = .left
        case "Right Side Up": panel = .right
        default: panel = .up
        }
        var plane = VideoOrientation.up
        if let bits = properties.planeRotation {
            if bits & UInt64(DRM_MODE_ROTATE_90) != 0 { plane = .right }
            else if bits & UInt64(DRM_MODE_ROTATE_180) != 0 { plane = .down }
            else if bits & UInt64(DRM_MODE_ROTATE_270) != 0 { plane = .left }
        }
        return plane.adding(panel)
    }

    static func read(card: String, connector wanted: String?) throws(MediaDevicesError) -> Properties {
        let fd = open(card, O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { throw MediaDevicesError.fromErrno(errno, device: card, operation: "open") }
        defer { close(fd) }
        _ = drmSetClientCap(fd, UInt64(DRM_CLIENT_CAP_UNIVERSAL_PLANES), 1)
        guard let resources = drmModeGetResources(fd) else {
            throw MediaDevicesError(.unsupportedFormat, device: card, operation: "drmModeGetResources",
                                    detail: "This DRM node has no KMS resources (a render-only GPU?); name a card with a display")
        }
        defer { drmModeFreeResources(resources) }
        var names: [String] = []
        for index in 0..<Int(resources.pointee.count_connectors) {
            guard let connector = drmModeGetConnector(fd, resources.pointee.connectors[index]) else { continue }
            defer { drmModeFreeConnector(connector) }
            let name = connectorName(connector.pointee)
            names.append(name)
            if let wanted, wanted != name { continue }
            if wanted == nil, connector.pointee.connection != DRM_MODE_CONNECTED { continue }
            var result = Properties(connector: name)
            result.panelOrientation = enumProperty(fd, object: connector.pointee.connector_id,
                                                   type: UInt32(DRM_MODE_OBJECT_CONNECTOR), name: "panel orientation")
            if connector.pointee.encoder_id != 0, let encoder = drmModeGetEncoder(fd, connector.pointee.encoder_id) {
                let crtc = encoder.pointee.crtc_id
                drmModeFreeEncoder(encoder)
                result.planeRotation = primaryPlaneRotation(fd, crtc: crtc)
            }
            return result
        }
        throw MediaDevicesError(.notFound, device: card, operation: "find connector \(wanted ?? "(connected)")",
                                detail: "The card's connectors are \(names.joined(separator: ", ")); name one of them\(wanted == nil ? " (none is connected)" : "")")
    }

    private static func connectorName(_ connector: drmModeConnector) -> String {
        let type = drmModeGetConnectorTypeName(connector.connector_type).map { String(cString: $0) } ?? "Unknown"
        return "\(type)-\(connector.connector_type_id)"
    }

    /// The value of property `name` on an object: the enum name for enums, else the number.
    private static func property(_ fd: Int32, object: UInt32, type: UInt32, name: String) -> (value: UInt64, enumName: String?)? {
        guard let properties = drmModeObjectGetProperties(fd, object, type) else { return nil }
        defer { drmModeFreeObjectProperties(properties) }
        for index in 0..<Int(properties.pointee.count_props) {
            guard let property = drmModeGetProperty(fd, properties.pointee.props[index]) else { continue }
            defer { drmModeFreeProperty(property) }
            let propertyName = withUnsafeBytes(of: property.pointee.name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard propertyName == name else { continue }
            let value = properties.pointee.prop_values[index]
            var enumName: String?
            for e in 0..<Int(property.pointee.count_enums) where property.pointee.enums[e].value == value {
                enumName = withUnsafeBytes(of: property.pointee.enums[e].name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            }
            return (value, enumName)
        }
        return nil
    }

    private static func enumProperty(_ fd: Int32, object: UInt32, type: UInt32, name: String) -> String? {
        property(fd, object: object, type: type, name: name)?.enumName
    }

    /// The "rotation" of the primary plane whose CRTC is `crtc`.
    private static func primaryPlaneRotation(_ fd: Int32, crtc: UInt32) -> UInt64? {
        guard crtc != 0, let planes = drmModeGetPlaneResources(fd) else { return nil }
        defer { drmModeFreePlaneResources(planes) }
        for index in 0..<Int(planes.pointee.count_planes) {
            guard let plane = drmModeGetPlane(fd, planes.pointee.planes[index]) else { continue }
            defer { drmModeFreePlane(plane) }
            guard plane.pointee.crtc_id == crtc,
                  property(fd, object: plane.pointee.plane_id, type: UInt32(DRM_MODE_OBJECT_PLANE), name: "type")?.enumName == "Primary"
            else { continue }
            return property(fd, object: plane.pointee.plane_id, type: UInt32(DRM_MODE_OBJECT_PLANE), name: "rotation")?.value
        }
        return nil
    }
}
