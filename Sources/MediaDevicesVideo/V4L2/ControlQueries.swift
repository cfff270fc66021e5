import MediaDevicesCore
import CV4L2
import Glibc

/// Reading controls on an open node: `VIDIOC_QUERY_EXT_CTRL` (with `V4L2_CTRL_FLAG_NEXT_CTRL |
/// V4L2_CTRL_FLAG_NEXT_COMPOUND`, so compound controls too), `VIDIOC_QUERYMENU` and
/// `VIDIOC_G_EXT_CTRLS`.
extension V4L2Device {
    /// Every control in the driver's order, with its menu and current value.
    func queryControls() throws(MediaDevicesError) -> [CameraControl] {
        var controls: [CameraControl] = []
        var query = v4l2_query_ext_ctrl()
        query.id = cv4l2_CTRL_FLAG_NEXT_CTRL | cv4l2_CTRL_FLAG_NEXT_COMPOUND
        while true {
            let error = file.ioctlErrno(cv4l2_VIDIOC_QUERY_EXT_CTRL, &query)
            if error == EINVAL { break }  // past the last control
            if error == ENOTTY { return try queryLegacyControls() }
            if error != 0 { throw MediaDevicesError.fromErrno(error, device: path, operation: "VIDIOC_QUERY_EXT_CTRL") }
            controls.append(control(from: query))
            query.id |= cv4l2_CTRL_FLAG_NEXT_CTRL | cv4l2_CTRL_FLAG_NEXT_COMPOUND
        }
        return controls
    }

    /// Drivers older than VIDIOC_QUERY_EXT_CTRL have none of the compound types either.
    private func queryLegacyControls() throws(MediaDevicesError) -> [CameraControl] {
        throw MediaDevicesError(.io, device: path, operation: "VIDIOC_QUERY_EXT_CTRL", errno: ENOTTY,
                                detail: "The driver does not answer VIDIOC_QUERY_EXT_CTRL (kernels before 3.17); its controls cannot be listed")
    }

    private func control(from query: v4l2_query_ext_ctrl) -> CameraControl {
        let type = ControlType(rawValue: query.type)
        let flags = ControlFlags(rawValue: query.flags)
        let dimensions = withUnsafeBytes(of: query.dims) { Array($0.bindMemory(to: UInt32.self).prefix(Int(query.nr_of_dims))) }
        let menu = type.isMenu ? menuEntries(id: query.id, type: type, minimum: query.minimum, maximum: query.maximum) : []
        var control = CameraControl(id: query.id, name: cString(query.name), type: type, minimum: query.minimum,
                                    maximum: query.maximum, step: query.step, defaultValue: query.default_value,
                                    flags: flags, menu: menu, elementSize: query.elem_size, dimensions: dimensions,
                                    value: .none)
        control = control.with(value: readValue(of: control, elements: query.elems))
        return control
    }

    /// The menu's entries from `minimum` to `maximum`, skipping the indexes the driver refuses.
    private func menuEntries(id: UInt32, type: ControlType, minimum: Int64, maximum: Int64) -> [CameraControl.MenuEntry] {
        guard minimum >= 0, maximum >= minimum, maximum - minimum < 4096 else { return [] }
        var entries: [CameraControl.MenuEntry] = []
        var name = [CChar](repeating: 0, count: 32)
        var value: Int64 = 0
        for index in minimum...maximum {
            guard cv4l2_query_menu(file.rawValue, id, UInt32(index), &name, &value) == 0 else { continue }
            if type == .integerMenu {
                entries.append(.init(index: index, name: String(value), value: value))
            } else {
                entries.append(.init(index: index, name: String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)))
            }
        }
        return entries
    }

    /// The current value; `.none` when there is nothing to read.
    func readValue(of control: CameraControl, elements: UInt32) -> ControlValue {
        if control.type == .button || control.type == .controlClass || control.flags.contains(.writeOnly) { return .none }
        var error: UInt32 = 0
        var id = control.id
        if !control.flags.contains(.hasPayload) {
            var value: Int64 = 0
            guard cv4l2_ext_controls(file.rawValue, cv4l2_VIDIOC_G_EXT_CTRLS, cv4l2_CTRL_WHICH_CUR_VAL, 1, &id, &value, nil, nil, &error) == 0
            else { return .none }
            return .integer(control.type.integerValue(value))
        }
        let size = control.type == .string ? Int(control.maximum) + 1 : Int(control.elementSize) * Int(max(elements, 1))
        var bytes = [UInt8](repeating: 0, count: max(size, 1))
        var value: Int64 = 0
        var payloadSize = UInt32(bytes.count)
        let status = bytes.withUnsafeMutableBytes { buffer -> Int32 in
            var payloads: [UnsafeMutableRawPointer?] = [buffer.baseAddress]
            return cv4l2_ext_controls(file.rawValue, cv4l2_VIDIOC_G_EXT_CTRLS, cv4l2_CTRL_WHICH_CUR_VAL, 1, &id, &value,
                                      &payloads, &payloadSize, &error)
        }
        guard status == 0 else { return .none }
        return ControlValue(payload: bytes, type: control.type, elementSize: control.valueElementSize)
    }
}

extension ControlType {
    /// A value the kernel returned in a 64-bit field for a control of this type: the 32-bit
    /// types fill only the low half (`value`, not `value64`), signed, except bitmasks, which
    /// are masks of up to 32 bits.
    func integerValue(_ raw: Int64) -> Int64 {
        switch self {
        case .integer64: raw
        case .bitmask: Int64(UInt32(truncatingIfNeeded: raw))
        default: Int64(Int32(truncatingIfNeeded: raw))
        }
    }
}

extension ControlValue {
    /// A string or array value from a control's payload bytes.
    init(payload bytes: [UInt8], type: ControlType, elementSize: Int) {
        if type == .string {
            self = .string(String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self))
            return
        }
        let size = max(elementSize, 1)
        var elements: [Int64] = []
        elements.reserveCapacity(bytes.count / size)
        for start in stride(from: 0, to: bytes.count - size + 1, by: size) {
            var element: UInt64 = 0
            for byte in 0..<min(size, 8) { element |= UInt64(bytes[start + byte]) << (8 * byte) }
            elements.append(Int64(bitPattern: element))
        }
        self = .array(elements)
    }

    /// The payload bytes of a string or array value for a control with `elementSize`-byte elements.
    func payload(elementSize: Int) -> [UInt8] {
        switch self {
        case .string(let text): return Array(text.utf8) + [0]
        case .array(let elements):
            let size = max(elementSize, 1)
            var bytes: [UInt8] = []
            for element in elements {
                for byte in 0..<size { bytes.append(UInt8(truncatingIfNeeded: UInt64(bitPattern: element) >> (8 * byte))) }
            }
            return bytes
        default: return []
        }
    }
}

extension CameraControl {
    /// This control with another value.
    func with(value: ControlValue) -> CameraControl {
        CameraControl(id: id, name: name, type: type, minimum: minimum, maximum: maximum, step: step,
                      defaultValue: defaultValue, flags: flags, menu: menu, elementSize: elementSize,
                      dimensions: dimensions, value: value)
    }

    /// The number of elements of an array control (1 for a single value).
    var elementCount: Int { dimensions.reduce(1) { $0 * Int($1) } }

    /// Bytes per element of its value: an area (`struct v4l2_area`) is two 32-bit numbers,
    /// width and height.
    var valueElementSize: Int { type == .area ? 4 : Int(elementSize) }
}
