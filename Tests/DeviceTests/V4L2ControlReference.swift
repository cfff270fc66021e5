import Foundation
import XCTest

/// What `v4l2-ctl -L` (`--list-ctrls-menus`) says about a node's controls: the reference the
/// control enumeration must agree with, field by field.
enum V4L2ControlReference {
    /// One control row and its menu lines, as printed.
    struct Control: Equatable {
        var key: String
        var id: UInt32
        var type: String
        /// `min`, `max`, `step`, `default`, `value`, `dims` as printed (hex for bitmasks).
        var fields: [String: String]
        var flags: [String]
        /// Menu lines: index and text (`5 (0x5)` for integer menus).
        var menu: [(index: Int64, text: String)]
        /// The class header above it ("User Controls").
        var classHeader: String

        static func == (a: Control, b: Control) -> Bool {
            a.key == b.key && a.id == b.id && a.type == b.type && a.fields == b.fields && a.flags == b.flags
                && a.menu.map(\.index) == b.menu.map(\.index) && a.menu.map(\.text) == b.menu.map(\.text)
        }
    }

    /// `v4l2-ctl -d NODE -L`, parsed.
    static func controls(_ node: String) throws -> [Control] {
        let output = try Rig.run("v4l2-ctl -d \(node) -L")
        let row = try NSRegularExpression(pattern: #"^\s*(\S+) (0x[0-9a-f]{8}) \((\w+)\)\s*: ?(.*)$"#)
        var controls: [Control] = []
        var header = ""
        for line in output.split(separator: "\n", omittingEmptySubsequences: true).map(String.init) {
            let range = NSRange(line.startIndex..., in: line)
            if let match = row.firstMatch(in: line, range: range) {
                func group(_ i: Int) -> String { String(line[Range(match.range(at: i), in: line)!]) }
                let (fields, flags) = parseFields(group(4))
                controls.append(Control(key: group(1), id: UInt32(group(2).dropFirst(2), radix: 16)!, type: group(3),
                                        fields: fields, flags: flags, menu: [], classHeader: header))
            } else if line.hasPrefix("\t"), let colon = line.firstIndex(of: ":"), let index = Int64(line[..<colon].trimmingCharacters(in: .whitespaces)) {
                controls[controls.count - 1].menu.append((index, String(line[line.index(colon, offsetBy: 2)...])))
            } else if !line.hasPrefix(" ") {
                header = line
            }
        }
        return controls
    }

    /// `min=0 max=255 ... flags=read-only, volatile` into fields and flags; `value=4 (5 0x5)`
    /// keeps only the number.
    private static func parseFields(_ text: String) -> ([String: String], [String]) {
        var fields: [String: String] = [:]
        var flags: [String] = []
        var rest = Substring(text)
        if let flagsStart = rest.range(of: "flags=") {
            flags = rest[flagsStart.upperBound...].components(separatedBy: ", ")
            rest = rest[..<flagsStart.lowerBound]
        }
        if let valueStart = rest.range(of: "value=") {
            // Strings print as value='text' (spaces possible); menus append " (name)".
            let value = rest[valueStart.upperBound...].trimmingCharacters(in: .whitespaces)
            if value.hasPrefix("'") {
                fields["value"] = String(value.dropFirst().prefix { $0 != "'" })
            } else {
                fields["value"] = String(value.prefix { $0 != " " })
            }
            rest = rest[..<valueStart.lowerBound]
        }
        for pair in rest.split(separator: " ") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            if parts.count == 2 { fields[String(parts[0])] = String(parts[1]) }
        }
        return (fields, flags)
    }

    /// `v4l2-ctl -d NODE -C KEY`'s value.
    static func value(_ node: String, _ key: String) throws -> String {
        let output = try Rig.run("v4l2-ctl -d \(node) -C \(key)")
        guard let colon = output.firstIndex(of: ":") else { return output }
        return output[output.index(after: colon)...].trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
