#if PipeWire
import MediaDevicesCore
import CSDBus

/// A value read from a D-Bus message, whatever its signature: what the portal's `a{sv}`
/// results and `a(ua{sv})` streams are made of.
indirect enum DBusValue: Equatable {
    /// `s`, `o` or `g`.
    case string(String)
    /// `y`, `q`, `u`, `t` (and `n`, `i`, `x` when not negative) widened.
    case unsigned(UInt64)
    /// `n`, `i`, `x` when negative.
    case signed(Int64)
    /// `b`.
    case bool(Bool)
    /// `d`.
    case double(Double)
    /// `h`: a descriptor the message owns (dup it to keep it).
    case fileDescriptor(Int32)
    /// An array that is not a dictionary, or a structure.
    case array([DBusValue])
    /// `a{s…}` (keys that are not strings are written as text).
    case dictionary([String: DBusValue])
    /// One `{kv}` entry, while an array is read.
    case entry(String, DBusValue)

    /// The text of `s`, `o`, `g`.
    var string: String? { if case .string(let text) = self { text } else { nil } }
    /// An unsigned or non-negative integer.
    var uint32: UInt32? { if case .unsigned(let value) = self { UInt32(exactly: value) } else { nil } }
    /// A boolean.
    var bool: Bool? { if case .bool(let value) = self { value } else { nil } }
    /// A signed integer (`(ii)` positions may be negative).
    var int: Int? {
        switch self {
        case .unsigned(let value): Int(exactly: value)
        case .signed(let value): Int(value)
        default: nil
        }
    }
    /// The entries of an `a{sv}`; an empty array reads as an empty dictionary.
    var dictionary: [String: DBusValue]? {
        switch self {
        case .dictionary(let entries): entries
        case .array(let items) where items.isEmpty: [:]
        default: nil
        }
    }
    /// The items of an array or structure.
    var array: [DBusValue]? { if case .array(let items) = self { items } else { nil } }
}

extension DBusValue {
    private static func code(_ character: Unicode.Scalar) -> CChar { CChar(UInt8(ascii: character)) }

    /// Reads the next complete value of `message` (variants unwrapped); `nil` at the end of
    /// the current container.
    static func read(_ message: OpaquePointer) throws -> DBusValue? {
        var type: CChar = 0
        var contents: UnsafePointer<CChar>?
        let peeked = sd_bus_message_peek_type(message, &type, &contents)
        if peeked < 0 { throw DBusFailure(name: "read", message: "sd_bus_message_peek_type", errno: -peeked) }
        if peeked == 0 { return nil }
        switch type {
        case code("a"), code("v"), code("r"), code("e"):
            let inner = contents
            try check(sd_bus_message_enter_container(message, type, inner), "sd_bus_message_enter_container")
            defer { sd_bus_message_exit_container(message) }
            var items: [DBusValue] = []
            while let item = try read(message) { items.append(item) }
            switch type {
            case code("v"): return items.first ?? .array([])
            case code("e"):
                guard items.count == 2 else { return .array(items) }
                let key = items[0].string ?? items[0].int.map { String($0) } ?? "\(items[0])"
                return .entry(key, items[1])
            case code("a"):
                if let signature = inner.map({ String(cString: $0) }), signature.hasPrefix("{") {
                    var entries: [String: DBusValue] = [:]
                    for item in items { if case .entry(let key, let value) = item { entries[key] = value } }
                    return .dictionary(entries)
                }
                return .array(items)
            default: return .array(items)
            }
        case code("s"), code("o"), code("g"):
            var text: UnsafePointer<CChar>?
            try check(sd_bus_message_read_basic(message, type, &text), "sd_bus_message_read_basic")
            return .string(text.map { String(cString: $0) } ?? "")
        case code("b"):
            var value: Int32 = 0
            try check(sd_bus_message_read_basic(message, type, &value), "sd_bus_message_read_basic")
            return .bool(value != 0)
        case code("h"):
            var value: Int32 = -1
            try check(sd_bus_message_read_basic(message, type, &value), "sd_bus_message_read_basic")
            return .fileDescriptor(value)
        case code("d"):
            var value: Double = 0
            try check(sd_bus_message_read_basic(message, type, &value), "sd_bus_message_read_basic")
            return .double(value)
        case code("y"):
            var value: UInt8 = 0
            try check(sd_bus_message_read_basic(message, type, &value), "sd_bus_message_read_basic")
            return .unsigned(UInt64(value))
        case code("q"):
            var value: UInt16 = 0
            try check(sd_bus_message_read_basic(message, type, &value), "sd_bus_message_read_basic")
            return .unsigned(UInt64(value))
        case code("u"):
            var value: UInt32 = 0
            try check(sd_bus_message_read_basic(message, type, &value), "sd_bus_message_read_basic")
            return .unsigned(UInt64(value))
        case code("t"):
            var value: UInt64 = 0
            try check(sd_bus_message_read_basic(message, type, &value), "sd_bus_message_read_basic")
            return .unsigned(value)
        case code("n"):
            var value: Int16 = 0
            try check(sd_bus_message_read_basic(message, type, &value), "sd_bus_message_read_basic")
            return value < 0 ? .signed(Int64(value)) : .unsigned(UInt64(value))
        case code("i"):
            var value: Int32 = 0
            try check(sd_bus_message_read_basic(message, type, &value), "sd_bus_message_read_basic")
            return value < 0 ? .signed(Int64(value)) : .unsigned(UInt64(value))
        case code("x"):
            var value: Int64 = 0
            try check(sd_bus_message_read_basic(message, type, &value), "sd_bus_message_read_basic")
            return value < 0 ? .signed(value) : .unsigned(UInt64(value))
        default:
            try check(sd_bus_message_skip(message, nil), "sd_bus_message_skip")
            return .array([])
        }
    }

    private static func check(_ result: Int32, _ call: String) throws {
        if result < 0 { throw DBusFailure(name: "read", message: call, errno: -result) }
    }
}

/// A D-Bus call that failed: the error name the peer (or sd-bus) gave, its message, and the
/// errno sd-bus returned.
struct DBusFailure: Error {
    /// `org.freedesktop.DBus.Error.ServiceUnknown`, …; for local failures, what failed.
    let name: String
    /// The peer's explanation, or the sd-bus call that failed.
    let message: String
    /// The negated sd-bus return value.
    let errno: Int32
}
#endif
