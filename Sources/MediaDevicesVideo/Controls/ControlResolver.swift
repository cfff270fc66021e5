import MediaDevicesCore
/// Resolving ``ControlSetting``s against a camera's control descriptions, for every backend
/// (V4L2's `ControlWriter`, PipeWire's Props): each setting is matched to its control by id or
/// name, its text read for the control's type, and checked against the control's range, menu
/// and flags, with a clear `.notFound`, `.invalidValue` or `.invalidState` that names the
/// control, the value and what it takes.
struct ControlResolver {
    /// The device, for messages (`/dev/video0`, `pipewire:42`).
    let device: String
    /// The controls the settings are resolved against.
    let controls: [CameraControl]

    /// A setting resolved to its control and a value the control takes.
    struct Resolved {
        let control: CameraControl
        let value: ControlValue
    }

    /// Resolves and checks every setting; throws for the first that cannot be applied.
    func resolve(_ settings: [ControlSetting]) throws(MediaDevicesError) -> [Resolved] {
        try settings.map { (setting) throws(MediaDevicesError) in
            let control = try find(setting.target)
            let value = try self.value(setting.value, for: control)
            try check(value, for: control)
            return Resolved(control: control, value: value)
        }
    }

    private func find(_ target: ControlSetting.Target) throws(MediaDevicesError) -> CameraControl {
        let found: CameraControl? = switch target {
        case .id(let id): controls.first { $0.id == id }
        case .name(let name): controls[named: name]
        }
        guard let control = found, control.type != .controlClass else {
            let what: String = switch target {
            case .id(let id): "0x" + String(id, radix: 16)
            case .name(let name): "'\(name)'"
            }
            throw MediaDevicesError(.notFound, device: device, operation: "set control",
                                    detail: "\(device) has no control \(what)",
                                    remedy: "CaptureDevice.controls() lists them with their names")
        }
        return control
    }

    /// The typed value of `value` for `control`.
    private func value(_ value: ControlSetting.Value, for control: CameraControl) throws(MediaDevicesError) -> ControlValue {
        guard case .text(let text) = value else {
            // A whole number for a floating-point control (a profile file writes 1.0 as 1).
            if case .value(.integer(let number)) = value, control.type == .float { return .float(Double(number)) }
            if case .value(let typed) = value { return typed }
            return .none
        }
        if control.type == .string { return .string(text) }
        if control.type == .float {
            guard let number = Double(text.trimmingSpaces), number.isFinite else { throw invalid(control, text) }
            return .float(number)
        }
        if control.type.isCompound {
            let parts = text.split(separator: ",").map { Int64(String($0).trimmingSpaces) }
            guard parts.allSatisfy({ $0 != nil }) else { throw invalid(control, text) }
            return .array(parts.map { $0! })
        }
        if control.type.isMenu, let entry = control.menuEntry(text) { return .integer(entry.index) }
        if control.type == .boolean {
            switch text.lowercased() {
            case "true", "on", "yes", "1": return .integer(1)
            case "false", "off", "no", "0": return .integer(0)
            default: throw invalid(control, text)
            }
        }
        if let number = Int64(text) { return .integer(number) }
        if text.hasPrefix("0x"), let number = Int64(text.dropFirst(2), radix: 16) { return .integer(number) }
        throw invalid(control, text)
    }

    /// Throws unless `control` can be set to `value` now.
    private func check(_ value: ControlValue, for control: CameraControl) throws(MediaDevicesError) {
        let state: String? = control.flags.contains(.readOnly) ? "is read-only"
            : control.flags.contains(.inactive) ? "is inactive now (an automatic mode governs it: turn that off first)"
            : control.flags.contains(.disabled) ? "is disabled by the driver"
            : control.flags.contains(.grabbed) ? "is grabbed: it cannot change while streaming" : nil
        if let state {
            throw MediaDevicesError(.invalidState, device: device, operation: "set control",
                                    detail: "\(control.key) (\(control.name)) \(state); it stays \(control.value)")
        }
        switch (control.type, value) {
        case (.button, _): return
        case (.string, .string(let text)):
            guard text.utf8.count >= control.minimum, text.utf8.count <= control.maximum else { throw invalid(control, value.description) }
        case (.area, .array(let elements)):
            // An area is [width, height], with no range: the driver checks it.
            guard elements.count == 2, elements.allSatisfy({ $0 >= 0 && $0 <= UInt32.max }) else { throw invalid(control, value.description) }
        case (let type, .array(let elements)) where type.isCompound:
            // A dynamic array takes 1 up to its dimensions' elements, any other array exactly those.
            let counts = control.flags.contains(.dynamicArray) ? 1...control.elementCount : control.elementCount...control.elementCount
            guard counts.contains(elements.count),
                  elements.allSatisfy({ $0 >= control.minimum && $0 <= control.maximum }) else { throw invalid(control, value.description) }
        case (let type, .integer(let number)) where type.isInteger:
            guard accepts(number, control) else { throw invalid(control, value.description) }
        case (.float, .float(let number)):
            guard let range = control.floatRange, number >= range.minimum, number <= range.maximum else {
                throw invalid(control, value.description)
            }
        default:
            throw invalid(control, value.description)
        }
    }

    private func accepts(_ value: Int64, _ control: CameraControl) -> Bool {
        switch control.type {
        case .bitmask: return value & ~control.maximum == 0
        case .menu, .integerMenu: return control.menu.contains { $0.index == value }
        default:
            guard value >= control.minimum, value <= control.maximum else { return false }
            return control.step <= 1 || UInt64(value - control.minimum) % control.step == 0
        }
    }

    /// `.invalidValue` naming the control, the value and what it takes.
    private func invalid(_ control: CameraControl, _ value: String) -> MediaDevicesError {
        MediaDevicesError(.invalidValue, device: device, operation: "set control",
                          detail: "\(control.key) (\(control.name)) does not take \(value); it takes \(Self.takes(control))")
    }

    /// What a control takes, in words.
    static func takes(_ control: CameraControl) -> String {
        switch control.type {
        case .boolean: return "0 or 1 (false/true)"
        case .menu, .integerMenu:
            return "one of " + control.menu.map { "\($0.index) (\($0.name))" }.joined(separator: ", ")
        case .bitmask: return "a bitmask within 0x" + String(control.maximum, radix: 16)
        case .string: return "a string of \(control.minimum) to \(control.maximum) bytes"
        case .area: return "a width and a height (WIDTH,HEIGHT)"
        case .button: return "any value (it is a button)"
        case .float:
            guard let range = control.floatRange else { return "a number" }
            return "a number from \(range.minimum) to \(range.maximum)"
        default:
            if control.type.isCompound {
                return "\(control.elementCount) comma-separated values from \(control.minimum) to \(control.maximum)"
            }
            return "an integer from \(control.minimum) to \(control.maximum)" + (control.step > 1 ? " in steps of \(control.step)" : "")
        }
    }
}
