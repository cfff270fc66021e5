#if PipeWire
import MediaDevicesCore
import CPipeWire
import Glibc

/// Reads a PipeWire session's camera nodes (`cpw_cameras_read` of the CPipeWire shim: the
/// registry's Video/Source nodes with media.role Camera, their properties and their
/// `EnumFormat` params) over a connection of its own, closed before it returns.
package enum PipeWireCameraList {
    /// The camera nodes `remote` reaches (each with `remote` as its own), over a connection
    /// of their own.
    static func read(remote: PipeWireRemote, timeout: Duration = .seconds(5)) throws(MediaDevicesError) -> [PipeWireCameraNode] {
        let fd = try remote.open()
        return try read(fd: fd < 0 ? nil : fd, timeout: timeout).map { node in
            var node = node
            node.remote = remote
            return node
        }
    }

    /// The camera nodes of the session at `fd` (taken), or of the default remote when `fd` is nil
    /// (`PIPEWIRE_REMOTE`, else `$XDG_RUNTIME_DIR/pipewire-0`). Throws `.notFound` when no
    /// PipeWire answers, `.timeout` when it does not answer within `timeout`.
    package static func read(fd: Int32? = nil, timeout: Duration = .seconds(5)) throws(MediaDevicesError) -> [PipeWireCameraNode] {
        var message = [CChar](repeating: 0, count: 256)
        let milliseconds = timeout.millisecondCount
        guard let list = cpw_cameras_read(fd ?? -1, milliseconds, &message, message.count) else {
            let why = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            let remote = fd != nil ? "the given remote" : (getenv("PIPEWIRE_REMOTE").map { String(cString: $0) } ?? "$XDG_RUNTIME_DIR/pipewire-0")
            if why.contains("did not answer") {
                throw MediaDevicesError(.timeout, device: remote, operation: "pw_core_sync", errno: ETIMEDOUT,
                                        detail: "PipeWire did not list its nodes within \(timeout) (\(why)); is the session busy or stopped?")
            }
            throw MediaDevicesError(.notFound, device: remote, operation: "pw_context_connect",
                                    detail: "No PipeWire session to list cameras from (\(why)); start pipewire and wireplumber (a desktop session does), or set PIPEWIRE_REMOTE")
        }
        defer { cpw_cameras_free(list) }
        let reversesRGB = PipeWireFormats.libcameraLabelsRGBReversed(serverVersion: String(cString: cpw_cameras_server_version(list)))
        var nodes: [PipeWireCameraNode] = []
        for index in 0..<cpw_cameras_count(list) {
            var properties: [String: String] = [:]
            for property in 0..<cpw_cameras_property_count(list, index) {
                var key: UnsafePointer<CChar>?, value: UnsafePointer<CChar>?
                cpw_cameras_property(list, index, property, &key, &value)
                if let key, let value { properties[String(cString: key)] = String(cString: value) }
            }
            var entries: [cpw_format_entry] = []
            for format in 0..<cpw_cameras_format_count(list, index) {
                entries.append(cpw_cameras_format(list, index, format).pointee)
            }
            let relabel = reversesRGB && properties["api.libcamera.path"] != nil
            let formats = PipeWireFormats(relabel ? entries.map(PipeWireFormats.byteReversed) : entries)
            var controls: [CameraControl] = []
            for control in 0..<cpw_cameras_control_count(list, index) {
                if let described = cameraControl(cpw_cameras_control(list, index, control).pointee) { controls.append(described) }
            }
            var node = PipeWireCameraNode(id: cpw_cameras_id(list, index),
                                          serial: UInt64(properties["object.serial"] ?? "") ?? 0,
                                          properties: properties, formats: formats.formats,
                                          givesFrameRates: formats.givesFrameRates, unmappedFormats: formats.unmapped,
                                          controls: controls)
            node.labelsRGBReversed = relabel
            nodes.append(node)
        }
        return nodes.sorted { $0.serial < $1.serial }
    }

    /// A PropInfo control as a ``CameraControl`` (integer, boolean, menu, or float: libcamera's).
    /// Its value is `.none` when the node's Props do not say it.
    static func cameraControl(_ control: cpw_control) -> CameraControl? {
        var control = control
        let name = withUnsafeBytes(of: &control.name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        // V4L2 nodes in PipeWire 0.3.65 give ranges and defaults but no current values.
        let value: ControlValue = control.has_value != 0 ? .integer(control.value) : .none
        switch control.type {
        case CPW_CONTROL_INT.rawValue, CPW_CONTROL_BOOL.rawValue:
            return CameraControl(id: control.id, name: name, type: control.type == CPW_CONTROL_BOOL.rawValue ? .boolean : .integer,
                                 minimum: control.minimum, maximum: control.maximum, step: UInt64(max(control.step, 1)),
                                 defaultValue: control.default_value, flags: ControlFlags(rawValue: 0), value: value)
        case CPW_CONTROL_ENUM.rawValue:
            let count = Int(min(control.label_count, UInt32(CPW_MAX_LABELS)))
            let menu: [CameraControl.MenuEntry] = withUnsafeBytes(of: &control.labels) { raw in
                let labels = raw.bindMemory(to: cpw_control_label.self)
                return (0..<count).map { i in
                    var label = labels[i]
                    let text = withUnsafeBytes(of: &label.name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
                    return CameraControl.MenuEntry(index: label.value, name: text)
                }
            }
            return CameraControl(id: control.id, name: name, type: .menu, minimum: control.minimum, maximum: control.maximum,
                                 step: 1, defaultValue: control.default_value, flags: ControlFlags(rawValue: 0), menu: menu, value: value)
        case CPW_CONTROL_FLOAT.rawValue:
            return CameraControl(id: control.id, name: name, type: .float, minimum: 0, maximum: 0, step: 0, defaultValue: 0,
                                 flags: ControlFlags(rawValue: 0),
                                 floatRange: CameraControl.FloatRange(minimum: control.fminimum, maximum: control.fmaximum,
                                                                      defaultValue: control.fdefault),
                                 value: control.has_value != 0 ? .float(control.fvalue) : .none)
        default:
            return nil
        }
    }

    /// Sets control `control` of node `nodeID` to `value` over `remote` (Props), and waits
    /// until PipeWire handled it. Throws `.io` when PipeWire refuses or is not there.
    static func setControl(_ control: CameraControl, to value: ControlValue, nodeID: UInt32, remote: PipeWireRemote, device: String) throws(MediaDevicesError) {
        var message = [CChar](repeating: 0, count: 256)
        let type = control.type == .boolean ? CPW_CONTROL_BOOL : control.type == .menu ? CPW_CONTROL_ENUM
            : control.type == .float ? CPW_CONTROL_FLOAT : CPW_CONTROL_INT
        guard cpw_node_set_control(try remote.open(), nodeID, control.id, type.rawValue, value.integer ?? 0, value.float ?? 0, 5000,
                                   &message, message.count) == 0 else {
            let why = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw MediaDevicesError(.io, device: device, operation: "pw_node_set_param(Props)",
                                    detail: "PipeWire did not set \(control.name) to \(value) (\(why)); is the camera's node still there?")
        }
    }
}
#endif
