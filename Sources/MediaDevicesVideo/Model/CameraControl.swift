import MediaDevicesCore
/// One control a camera's driver exposes (brightness, exposure, focus, ...), as
/// `VIDIOC_QUERY_EXT_CTRL` and `VIDIOC_QUERYMENU` describe it, with its value when it was read.
/// The equivalent of a row of `v4l2-ctl --list-ctrls-menus`.
public struct CameraControl: Sendable, Hashable, Identifiable, Codable {
    /// The kernel's control id (`V4L2_CID_BRIGHTNESS` is 0x00980900).
    public let id: UInt32
    /// The driver's name for it ("Brightness", "Exposure Time, Absolute").
    public let name: String
    /// The name as `v4l2-ctl` prints and takes it: lower case, other characters as `_`
    /// ("exposure_time_absolute"). The CLI and ``ControlSetting`` accept it.
    public let key: String
    /// What kind of value it holds.
    public let type: ControlType
    /// The control class it belongs to, as the driver groups them (user, camera, ...).
    package let controlClass: ControlClass
    /// The smallest value (integer and menu types) or the shortest length (strings); 0 for
    /// `.float` controls, whose range is `floatRange`.
    public let minimum: Int64
    /// The largest value, the longest string, or for bitmasks the mask of usable bits.
    public let maximum: Int64
    /// The distance between valid values (integer types).
    public let step: UInt64
    /// The value after a reset.
    public let defaultValue: Int64
    /// Flags: read-only, inactive, volatile and the others.
    package let flags: ControlFlags
    /// The entries of a menu or integer menu, without the gaps drivers leave.
    public let menu: [MenuEntry]
    /// Bytes per element, for arrays and other compound types.
    package let elementSize: UInt32
    /// The array's dimensions (`[8, 16]`); empty for a single value.
    package let dimensions: [UInt32]
    /// A `.float` control's range and default (`nil` for every other type).
    public let floatRange: FloatRange?
    /// The value when the control was read; `.none` for buttons, class headers and controls
    /// that cannot be read (write-only).
    public let value: ControlValue

    /// A menu entry: its index (the value to set) and its name, or for integer menus its number.
    public struct MenuEntry: Sendable, Hashable, Codable {
        /// The value that selects this entry.
        public let index: Int64
        /// The entry's name (menus), or its number as text (integer menus).
        public let name: String
        /// The entry's number (integer menus only).
        public let value: Int64?

        /// An entry.
        package init(index: Int64, name: String, value: Int64? = nil) {
            self.index = index
            self.name = name
            self.value = value
        }
    }

    /// A floating-point control's range and default (libcamera's controls through PipeWire:
    /// brightness from -1 to 1, contrast from 0 up, and so on).
    public struct FloatRange: Sendable, Hashable, Codable {
        /// The smallest value.
        public let minimum: Double
        /// The largest value.
        public let maximum: Double
        /// The value after a reset.
        public let defaultValue: Double

        /// A range.
        package init(minimum: Double, maximum: Double, defaultValue: Double) {
            self.minimum = minimum
            self.maximum = maximum
            self.defaultValue = defaultValue
        }
    }

    /// A control description.
    package init(id: UInt32, name: String, type: ControlType, minimum: Int64, maximum: Int64, step: UInt64,
                defaultValue: Int64, flags: ControlFlags, menu: [MenuEntry] = [], elementSize: UInt32 = 0,
                dimensions: [UInt32] = [], floatRange: FloatRange? = nil, value: ControlValue) {
        self.id = id
        self.name = name
        self.key = CameraControl.key(for: name)
        self.type = type
        self.controlClass = ControlClass(rawValue: id & 0x0fff_0000)
        self.minimum = minimum
        self.maximum = maximum
        self.step = step
        self.defaultValue = defaultValue
        self.flags = flags
        self.menu = menu
        self.elementSize = elementSize
        self.dimensions = dimensions
        self.floatRange = floatRange
        self.value = value
    }

    /// `v4l2-ctl`'s variable name for a control name: letters and digits in lower case, every
    /// run of other characters one `_`, none at the ends ("White Balance, Automatic" gives
    /// "white_balance_automatic").
    package static func key(for name: String) -> String {
        var key = "", pendingUnderscore = false
        for character in name.unicodeScalars {
            if character.properties.isAlphabetic || ("0"..."9").contains(character) {
                if pendingUnderscore { key += "_" }
                pendingUnderscore = false
                key += String(character).lowercased()
            } else if !key.isEmpty {
                pendingUnderscore = true
            }
        }
        return key
    }

    /// Whether a value can be set now: not read-only, inactive, disabled, grabbed or a class header.
    public var isWritable: Bool {
        flags.isDisjoint(with: [.readOnly, .inactive, .disabled, .grabbed]) && type != .controlClass
    }

    /// Whether an automatic mode governs the control now (`V4L2_CTRL_FLAG_INACTIVE`: exposure
    /// time while automatic exposure is on): show it greyed out; ``ControlChange`` says when
    /// that changes.
    public var isInactive: Bool { flags.contains(.inactive) }

    /// Whether the device changes the value by itself (`V4L2_CTRL_FLAG_VOLATILE`: a gain an
    /// automatic mode sets): read it again rather than keep the last one.
    public var isVolatile: Bool { flags.contains(.volatile) }

    /// The menu entry with this name (case-insensitive) or index.
    public func menuEntry(_ text: String) -> MenuEntry? {
        if let index = Int64(text), let entry = menu.first(where: { $0.index == index }) { return entry }
        return menu.first { $0.name.lowercased() == text.lowercased() }
    }
}

/// A control's value.
public enum ControlValue: Sendable, Hashable, Codable, CustomStringConvertible {
    /// Integer, boolean (0/1), menu index, bitmask, 64-bit integer.
    case integer(Int64)
    /// A string control.
    case string(String)
    /// An array or other compound control's elements (U8, U16, U32), in order.
    case array([Int64])
    /// A floating-point control's value (``ControlType/float``).
    case float(Double)
    /// No value to read (buttons, class headers, write-only controls).
    case none

    /// The integer, if it is one.
    public var integer: Int64? { if case .integer(let v) = self { v } else { nil } }

    /// The floating-point number, if it is one.
    public var float: Double? { if case .float(let v) = self { v } else { nil } }

    /// Reads a JSON number (whole: `.integer`, else `.float`), string, array of numbers or null.
    public init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() { self = .none }
        else if let number = try? container.decode(Int64.self) { self = .integer(number) }
        else if let number = try? container.decode(Double.self) { self = .float(number) }
        else if let text = try? container.decode(String.self) { self = .string(text) }
        else { self = .array(try container.decode([Int64].self)) }
    }

    /// Writes a JSON number, string, array of numbers or null (what a person editing a profile
    /// file expects).
    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .integer(let number): try container.encode(number)
        case .string(let text): try container.encode(text)
        case .array(let elements): try container.encode(elements)
        case .float(let number): try container.encode(number)
        case .none: try container.encodeNil()
        }
    }

    /// `42`, `"text"`, `[1, 2, 3]`, `0.5`, `-`.
    public var description: String {
        switch self {
        case .integer(let v): "\(v)"
        case .string(let s): "\"\(s)\""
        case .array(let a): "[" + a.map(String.init).joined(separator: ", ") + "]"
        case .float(let v): "\(v)"
        case .none: "-"
        }
    }
}

/// A control's type (`V4L2_CTRL_TYPE_*`), named as `v4l2-ctl` names it.
public struct ControlType: RawRepresentable, Sendable, Hashable, Codable, CustomStringConvertible {
    /// The kernel's `V4L2_CTRL_TYPE_*` value.
    public let rawValue: UInt32
    /// The type with this kernel value.
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// `V4L2_CTRL_TYPE_INTEGER`: a 32-bit integer in a range with a step.
    public static let integer = ControlType(rawValue: 1)
    /// `V4L2_CTRL_TYPE_BOOLEAN`: 0 or 1.
    public static let boolean = ControlType(rawValue: 2)
    /// `V4L2_CTRL_TYPE_MENU`: an index into named entries.
    public static let menu = ControlType(rawValue: 3)
    /// `V4L2_CTRL_TYPE_BUTTON`: an action; setting any value triggers it.
    public static let button = ControlType(rawValue: 4)
    /// `V4L2_CTRL_TYPE_INTEGER64`: a 64-bit integer.
    public static let integer64 = ControlType(rawValue: 5)
    /// `V4L2_CTRL_TYPE_CTRL_CLASS`: a class header, not a control.
    public static let controlClass = ControlType(rawValue: 6)
    /// `V4L2_CTRL_TYPE_STRING`.
    public static let string = ControlType(rawValue: 7)
    /// `V4L2_CTRL_TYPE_BITMASK`: up to 32 bits within `maximum`.
    public static let bitmask = ControlType(rawValue: 8)
    /// `V4L2_CTRL_TYPE_INTEGER_MENU`: an index into a list of numbers.
    public static let integerMenu = ControlType(rawValue: 9)
    /// `V4L2_CTRL_TYPE_U8`: an array of bytes.
    public static let u8 = ControlType(rawValue: 0x0100)
    /// `V4L2_CTRL_TYPE_U16`: an array of 16-bit numbers.
    public static let u16 = ControlType(rawValue: 0x0101)
    /// `V4L2_CTRL_TYPE_U32`: an array of 32-bit numbers.
    public static let u32 = ControlType(rawValue: 0x0102)
    /// `V4L2_CTRL_TYPE_AREA`: a width and a height.
    public static let area = ControlType(rawValue: 0x0106)
    /// A floating-point number in ``CameraControl/floatRange``: libcamera's controls through
    /// PipeWire (brightness, contrast, saturation). Not a V4L2 type (V4L2 has none); its raw
    /// value is one V4L2 does not use.
    public static let float = ControlType(rawValue: 0x00f0)

    /// Whether its value is one integer (integer, boolean, menu, integer menu, bitmask, int64).
    public var isInteger: Bool { [.integer, .boolean, .menu, .integerMenu, .bitmask, .integer64].contains(self) }
    /// Whether it is a menu or an integer menu.
    public var isMenu: Bool { self == .menu || self == .integerMenu }
    /// Whether it is an array or another compound type (values through a payload).
    public var isCompound: Bool { rawValue >= 0x0100 }

    /// `v4l2-ctl`'s name: int, bool, menu, button, int64, ctrl_class, str, bitmask, intmenu, u8,
    /// u16, u32, area; float (not V4L2's); or the number.
    public var description: String {
        switch self {
        case .integer: "int"
        case .boolean: "bool"
        case .menu: "menu"
        case .button: "button"
        case .integer64: "int64"
        case .controlClass: "ctrl_class"
        case .string: "str"
        case .bitmask: "bitmask"
        case .integerMenu: "intmenu"
        case .u8: "u8"
        case .u16: "u16"
        case .u32: "u32"
        case .area: "area"
        case .float: "float"
        default: "type \(rawValue)"
        }
    }
}

/// A control class (`V4L2_CTRL_CLASS_*`): how drivers group their controls.
package struct ControlClass: RawRepresentable, Sendable, Hashable, Codable, CustomStringConvertible {
    /// The class bits of a control id (`V4L2_CTRL_ID2WHICH`).
    package let rawValue: UInt32
    /// The class with these bits.
    package init(rawValue: UInt32) { self.rawValue = rawValue }

    /// `V4L2_CTRL_CLASS_USER`: brightness, contrast, gain, white balance, ...
    package static let user = ControlClass(rawValue: 0x0098_0000)
    /// `V4L2_CTRL_CLASS_CODEC`.
    package static let codec = ControlClass(rawValue: 0x0099_0000)
    /// `V4L2_CTRL_CLASS_CAMERA`: exposure, focus, zoom, pan, tilt, ...
    package static let camera = ControlClass(rawValue: 0x009a_0000)
    /// `V4L2_CTRL_CLASS_FLASH`.
    package static let flash = ControlClass(rawValue: 0x009c_0000)
    /// `V4L2_CTRL_CLASS_JPEG`.
    package static let jpeg = ControlClass(rawValue: 0x009d_0000)
    /// `V4L2_CTRL_CLASS_IMAGE_SOURCE` (sensors).
    package static let imageSource = ControlClass(rawValue: 0x009e_0000)
    /// `V4L2_CTRL_CLASS_IMAGE_PROC`.
    package static let imageProcessing = ControlClass(rawValue: 0x009f_0000)
    /// `V4L2_CTRL_CLASS_DETECT`.
    package static let detection = ControlClass(rawValue: 0x00a3_0000)

    /// "User Controls", "Camera Controls", ... (the kernel's class names).
    package var description: String {
        switch self {
        case .user: "User Controls"
        case .codec: "Codec Controls"
        case .camera: "Camera Controls"
        case .flash: "Flash Controls"
        case .jpeg: "JPEG Compression Controls"
        case .imageSource: "Image Source Controls"
        case .imageProcessing: "Image Processing Controls"
        case .detection: "Detection Controls"
        default: "Controls 0x" + String(rawValue, radix: 16)
        }
    }
}

/// A control's flags (`V4L2_CTRL_FLAG_*`).
package struct ControlFlags: OptionSet, Sendable, Hashable, Codable, CustomStringConvertible {
    /// The kernel's flag bits.
    package let rawValue: UInt32
    /// Flags from the kernel's bits.
    package init(rawValue: UInt32) { self.rawValue = rawValue }

    /// The driver does not offer it (now).
    package static let disabled = ControlFlags(rawValue: 0x0001)
    /// It cannot change now (for example while streaming).
    package static let grabbed = ControlFlags(rawValue: 0x0002)
    /// It can be read, not set.
    package static let readOnly = ControlFlags(rawValue: 0x0004)
    /// Setting this control may change others (an auto mode and the values it governs).
    package static let update = ControlFlags(rawValue: 0x0008)
    /// It has no effect now (an automatic mode governs it).
    package static let inactive = ControlFlags(rawValue: 0x0010)
    /// Best shown as a slider.
    package static let slider = ControlFlags(rawValue: 0x0020)
    /// It can be set, not read (buttons, relative moves).
    package static let writeOnly = ControlFlags(rawValue: 0x0040)
    /// The device changes its value by itself (gain under automatic gain).
    package static let volatile = ControlFlags(rawValue: 0x0080)
    /// Its value is a payload (strings, arrays, compound types).
    package static let hasPayload = ControlFlags(rawValue: 0x0100)
    /// Setting it acts even when the value is the same.
    package static let executeOnWrite = ControlFlags(rawValue: 0x0200)
    /// Setting it may change the buffer layout.
    package static let modifyLayout = ControlFlags(rawValue: 0x0400)
    /// An array whose length varies.
    package static let dynamicArray = ControlFlags(rawValue: 0x0800)

    /// The flags as `v4l2-ctl` names them, comma-separated ("inactive,volatile").
    package var description: String { names.joined(separator: ",") }

    /// The flags' names, in v4l2-ctl's order.
    package var names: [String] {
        let table: [(ControlFlags, String)] = [
            (.disabled, "disabled"), (.grabbed, "grabbed"), (.readOnly, "read-only"), (.update, "update"),
            (.inactive, "inactive"), (.slider, "slider"), (.writeOnly, "write-only"), (.volatile, "volatile"),
            (.hasPayload, "has-payload"), (.executeOnWrite, "execute-on-write"), (.modifyLayout, "modify-layout"),
            (.dynamicArray, "dynamic-array"),
        ]
        return table.filter { contains($0.0) }.map(\.1)
    }
}
