import MediaDevicesCore
import CDRM
import Foundation
import Glibc

/// An open DRM/KMS card (`/dev/dri/cardN`) with universal planes enabled, and the read-only
/// KMS queries MediaDevices makes through libdrm. Enumeration uses libdrm's allocating
/// helpers; the per-frame queries are in `ScreenGrabber`.
final class DRMCard: Sendable {
    /// The open node.
    let file: DeviceFile
    /// The node's path.
    var path: String { file.path }
    /// The kernel driver's name (`bochs-drm`, `virtio_gpu`).
    let driver: String

    /// Opens `path` and asks for universal planes (so primary and cursor planes are listed).
    ///
    /// Opening a card while no process is DRM master makes this one master. A process with
    /// `CAP_SYS_ADMIN` does not need that to read framebuffers, so it gives mastership up
    /// straight away and never stands in the way of a display server or another tool that
    /// sets modes; one without keeps it, because it is then its only way to map framebuffers.
    init(path: String) throws(MediaDevicesError) {
        file = try DeviceFile(path: path)
        let fd = file.rawValue
        if drmSetClientCap(fd, UInt64(DRM_CLIENT_CAP_UNIVERSAL_PLANES), 1) != 0 {
            throw MediaDevicesError(.unsupportedFormat, device: path, operation: "DRM_CLIENT_CAP_UNIVERSAL_PLANES", errno: errno,
                                    detail: "The driver has no universal planes (Linux before 3.15, or not a KMS display); screens cannot be captured from it")
        }
        // Atomic drivers show plane positions (CRTC_X, CRTC_Y: the cursor's) to atomic clients
        // only. Asking commits nothing; drivers without atomic modesetting refuse, which is fine.
        _ = drmSetClientCap(fd, UInt64(DRM_CLIENT_CAP_ATOMIC), 1)
        if let version = drmGetVersion(fd) {
            driver = version.pointee.name.map { String(cString: $0) } ?? "unknown"
            drmFreeVersion(version)
        } else {
            driver = "unknown"
        }
        if drmIsMaster(fd) != 0 && DRMCard.hasSysAdminCapability {
            drmDropMaster(fd)
        }
    }

    /// Whether this descriptor is DRM master now.
    var isMaster: Bool { drmIsMaster(file.rawValue) != 0 }

    /// Whether the process has `CAP_SYS_ADMIN` in its effective set (bit 21 of `CapEff` in
    /// /proc/self/status), which lets any client read other clients' framebuffers.
    static var hasSysAdminCapability: Bool {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("CapEff:") }),
              let mask = UInt64(line.dropFirst(7).trimmingCharacters(in: .whitespaces), radix: 16) else { return false }
        return mask & (1 << 21) != 0
    }

    /// The card nodes there are (`/dev/dri/card0`, `card1`, …), in numeric order. Render nodes
    /// (`renderD128`) have no KMS and are left out.
    static var cardPaths: [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/dev/dri")) ?? []
        return names.filter { $0.hasPrefix("card") && Int($0.dropFirst(4)) != nil }
            .sorted { Int($0.dropFirst(4))! < Int($1.dropFirst(4))! }
            .map { "/dev/dri/\($0)" }
    }

    /// The value of property `name` of KMS object `id`, and the property's id.
    func property(_ name: String, object id: UInt32, type: UInt32) -> (id: UInt32, value: UInt64)? {
        guard let properties = drmModeObjectGetProperties(file.rawValue, id, type) else { return nil }
        defer { drmModeFreeObjectProperties(properties) }
        for index in 0..<Int(properties.pointee.count_props) {
            let propertyID = properties.pointee.props[index]
            guard let property = drmModeGetProperty(file.rawValue, propertyID) else { continue }
            let matches = withUnsafeBytes(of: property.pointee.name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) } == name
            drmModeFreeProperty(property)
            if matches { return (propertyID, properties.pointee.prop_values[index]) }
        }
        return nil
    }

    /// The bytes of blob property `id`.
    func blob(_ id: UInt32) -> [UInt8]? {
        guard id != 0, let blob = drmModeGetPropertyBlob(file.rawValue, id) else { return nil }
        defer { drmModeFreePropertyBlob(blob) }
        guard let data = blob.pointee.data else { return nil }
        return Array(UnsafeRawBufferPointer(start: data, count: Int(blob.pointee.length)))
    }

    private struct Plane { let id: UInt32; let type: UInt64; let possibleCRTCs: UInt32; let crtcID: UInt32 }

    /// Every connected connector of the card, as a ``Screen``.
    func screens() throws(MediaDevicesError) -> [Screen] {
        let fd = file.rawValue
        guard let resources = drmModeGetResources(fd) else {
            throw MediaDevicesError(.unsupportedFormat, device: path, operation: "DRM_IOCTL_MODE_GETRESOURCES", errno: errno,
                                    detail: "The card has no display outputs (a render-only GPU); it has no screen to capture")
        }
        defer { drmModeFreeResources(resources) }
        let crtcs = Array(UnsafeBufferPointer(start: resources.pointee.crtcs, count: Int(resources.pointee.count_crtcs)))
        let connectors = Array(UnsafeBufferPointer(start: resources.pointee.connectors, count: Int(resources.pointee.count_connectors)))
        var planes: [Plane] = []
        if let planeResources = drmModeGetPlaneResources(fd) {
            for index in 0..<Int(planeResources.pointee.count_planes) {
                let id = planeResources.pointee.planes[index]
                guard let plane = drmModeGetPlane(fd, id) else { continue }
                let type = property("type", object: id, type: cdrm_MODE_OBJECT_PLANE)?.value ?? UInt64(DRM_PLANE_TYPE_OVERLAY)
                planes.append(Plane(id: id, type: type, possibleCRTCs: plane.pointee.possible_crtcs, crtcID: plane.pointee.crtc_id))
                drmModeFreePlane(plane)
            }
            drmModeFreePlaneResources(planeResources)
        }
        func plane(_ type: Int32, crtc: UInt32) -> UInt32? {
            guard let index = crtcs.firstIndex(of: crtc) else { return nil }
            let candidates = planes.filter { $0.type == UInt64(type) && $0.possibleCRTCs & (1 << UInt32(index)) != 0 }
            return (candidates.first { $0.crtcID == crtc } ?? candidates.first)?.id
        }
        var screens: [Screen] = []
        for connectorID in connectors {
            // The current state, without forcing a probe of the outputs (which can flicker them).
            guard let connector = drmModeGetConnectorCurrent(fd, connectorID) else { continue }
            defer { drmModeFreeConnector(connector) }
            guard connector.pointee.connection == DRM_MODE_CONNECTED else { continue }
            let typeName = drmModeGetConnectorTypeName(connector.pointee.connector_type).map { String(cString: $0) } ?? "Unknown"
            var crtcID: UInt32?
            var mode: DisplayMode?
            if connector.pointee.encoder_id != 0, let encoder = drmModeGetEncoder(fd, connector.pointee.encoder_id) {
                if encoder.pointee.crtc_id != 0 { crtcID = encoder.pointee.crtc_id }
                drmModeFreeEncoder(encoder)
            }
            if let id = crtcID, let crtc = drmModeGetCrtc(fd, id) {
                if crtc.pointee.mode_valid != 0 { mode = DisplayMode(crtc.pointee.mode) }
                drmModeFreeCrtc(crtc)
            }
            let edid = property("EDID", object: connectorID, type: cdrm_MODE_OBJECT_CONNECTOR).flatMap { blob(UInt32($0.value)) }
            let (mmWidth, mmHeight) = (Int(connector.pointee.mmWidth), Int(connector.pointee.mmHeight))
            screens.append(Screen(card: path, driver: driver, connectorID: connectorID,
                                  name: "\(typeName)-\(connector.pointee.connector_type_id)", connectorType: typeName,
                                  mode: mode, crtcID: crtcID,
                                  primaryPlaneID: crtcID.flatMap { plane(DRM_PLANE_TYPE_PRIMARY, crtc: $0) },
                                  cursorPlaneID: crtcID.flatMap { plane(DRM_PLANE_TYPE_CURSOR, crtc: $0) },
                                  physicalSize: mmWidth > 0 && mmHeight > 0 ? Size(width: mmWidth, height: mmHeight) : nil,
                                  monitorName: edid.flatMap(EDID.monitorName)))
        }
        return screens
    }
}

extension DisplayMode {
    /// The mode a kernel `drm_mode_modeinfo` describes.
    init(_ info: drmModeModeInfo) {
        var total = Int(info.htotal) * Int(info.vtotal)
        if info.flags & UInt32(DRM_MODE_FLAG_INTERLACE) != 0 { total /= 2 }
        if info.flags & UInt32(DRM_MODE_FLAG_DBLSCAN) != 0 { total *= 2 }
        let rate = total > 0 && info.clock > 0 ? FrameRate(Fraction(Int(info.clock) * 1000, total))
                                               : FrameRate(max(Int(info.vrefresh), 1))
        let name = withUnsafeBytes(of: info.name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        self.init(name: name, width: Int(info.hdisplay), height: Int(info.vdisplay), refreshRate: rate)
    }

    /// The mode of a raw `drm_mode_modeinfo` (same layout as libdrm's `drmModeModeInfo`).
    init(_ info: drm_mode_modeinfo) {
        self.init(unsafeBitCast(info, to: drmModeModeInfo.self))
    }
}
