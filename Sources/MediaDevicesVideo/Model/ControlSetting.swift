import MediaDevicesCore
/// One control to set: which control (its id, or its name as `v4l2-ctl` prints it or as the
/// driver names it) and the value, typed or as text to read for that control (menu entries by
/// index or name, booleans as true/false/on/off/1/0, arrays comma-separated).
public struct ControlSetting: Sendable, Hashable, CustomStringConvertible {
    /// Which control.
    package enum Target: Sendable, Hashable {
        /// The control with this kernel id.
        case id(UInt32)
        /// The control with this key (`v4l2-ctl`'s name) or driver name.
        case name(String)
    }

    /// The value to set.
    package enum Value: Sendable, Hashable {
        /// A typed value.
        case value(ControlValue)
        /// Text read for the control's type.
        case text(String)
    }

    /// Which control.
    package let target: Target
    /// The value to set.
    package let value: Value

    /// `control` to the integer `value` (integers, booleans, menu indexes, bitmasks).
    public init(_ control: CameraControlID, _ value: Int64) {
        target = .id(control.rawValue)
        self.value = .value(.integer(value))
    }

    /// The control with `id` to `value`.
    public init(id: UInt32, value: ControlValue) {
        target = .id(id)
        self.value = .value(value)
    }

    /// The control named `name` to `value`.
    public init(name: String, value: ControlValue) {
        target = .name(name)
        self.value = .value(value)
    }

    /// The control named `name` to `text`, read for the control's type.
    public init(name: String, text: String) {
        target = .name(name)
        value = .text(text)
    }

    /// `NAME=VALUE` (`brightness=10`, `power_line_frequency=50 Hz`, `auto_exposure=1`); nil
    /// without `=`.
    public init?(parsing assignment: String) {
        // By scalar, not Character: "=" followed by a combining mark is one Character (found by
        // the fuzzer: `x=\u{345}` did not parse back from its own description).
        let scalars = assignment.unicodeScalars
        guard let equals = scalars.firstIndex(of: "=") else { return nil }
        let name = String(scalars[..<equals]).trimmingSpaces
        guard !name.isEmpty else { return nil }
        self.init(name: name, text: String(scalars[scalars.index(after: equals)...]).trimmingSpaces)
    }

    /// `brightness=10`.
    public var description: String {
        let name: String = switch target {
        case .id(let id): "0x" + String(id, radix: 16)
        case .name(let name): name
        }
        let text: String = switch value {
        case .value(let value): value.description
        case .text(let text): text
        }
        return "\(name)=\(text)"
    }
}

extension String {
    /// Without leading and trailing spaces and tabs.
    var trimmingSpaces: String {
        var scalars = Substring(self)
        while scalars.first == " " || scalars.first == "\t" { scalars.removeFirst() }
        while scalars.last == " " || scalars.last == "\t" { scalars.removeLast() }
        return String(scalars)
    }
}
