import Foundation
import XCTest

/// What `v4l2-ctl` says about the devices: the reference our enumeration must agree with.
enum V4L2Reference {
    /// One device group of `v4l2-ctl --list-devices`.
    struct DeviceGroup: Equatable {
        var name: String
        var busInfo: String
        var nodes: [String]
    }

    /// One format of `v4l2-ctl --list-formats-ext`.
    struct Format: Equatable {
        var fourcc: String
        /// The driver's description, without the flags v4l2-ctl appends.
        var text: String
        var flags: [String]
        var sizes: [SizeEntry]
    }

    /// One `Size:` line with its `Interval:` lines, as printed.
    struct SizeEntry: Equatable {
        var size: String
        var intervals: [String]
    }

    /// `v4l2-ctl --list-devices`, parsed.
    static func deviceGroups() throws -> [DeviceGroup] {
        let output = try Rig.run("v4l2-ctl --list-devices")
        var groups: [DeviceGroup] = []
        for line in output.split(separator: "\n", omittingEmptySubsequences: true) {
            if line.hasPrefix("\t") || line.hasPrefix(" ") {
                groups[groups.count - 1].nodes.append(line.trimmingCharacters(in: .whitespaces))
            } else if line.hasSuffix("):"), let open = line.lastIndex(of: "(") {
                let name = line[..<open].trimmingCharacters(in: .whitespaces)
                let bus = line[line.index(after: open)..<line.index(line.endIndex, offsetBy: -2)]
                groups.append(DeviceGroup(name: name, busInfo: String(bus), nodes: []))
            }
        }
        return groups
    }

    /// The device capability bits `v4l2-ctl -D` reports for `node`.
    static func deviceCaps(_ node: String) throws -> UInt32 {
        let output = try Rig.run("v4l2-ctl -d \(node) -D")
        for line in output.split(separator: "\n") where line.contains("Device Caps") {
            if let hex = line.split(separator: ":").last?.trimmingCharacters(in: .whitespaces).dropFirst(2) {
                return UInt32(hex, radix: 16) ?? 0
            }
        }
        return 0
    }

    /// The `/dev/video*` nodes that capture video (single- or multi-planar), per v4l2-ctl.
    static func captureNodes() throws -> [String] {
        let nodes = try deviceGroups().flatMap(\.nodes).filter { $0.hasPrefix("/dev/video") }
        return try nodes.filter { try deviceCaps($0) & (0x1 | 0x1000) != 0 }
            .sorted { Int($0.dropFirst(10))! < Int($1.dropFirst(10))! }
    }

    /// v4l2-ctl's names of the `V4L2_FMT_FLAG_*` bits (videodev2.h values).
    static let flagNames: [UInt32: String] = [
        0x0001: "compressed", 0x0002: "emulated", 0x0004: "continuous-bytestream", 0x0008: "dyn-resolution",
        0x0010: "enc-cap-frame-interval", 0x0020: "csc-colorspace", 0x0040: "csc-xfer-func", 0x0080: "csc-ycbcr",
        0x0100: "csc-quantization",
    ]

    /// The names v4l2-ctl prints for `flags` of format `fourcc` (bit 0x80 reads `csc-hsv` on HSV formats).
    static func flagNames(_ flags: UInt32, fourcc: String) -> [String] {
        flagNames.filter { flags & $0.key != 0 }.map { $0.key == 0x80 && fourcc.hasPrefix("HSV") ? "csc-hsv" : $0.value }
    }

    /// `v4l2-ctl -d node --list-formats-ext`, parsed.
    static func formats(_ node: String) throws -> [Format] {
        let output = try Rig.run("v4l2-ctl -d \(node) --list-formats-ext")
        var formats: [Format] = []
        for raw in output.split(separator: "\n") {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("["), let quote = line.firstIndex(of: "'") {
                let afterQuote = line.index(after: quote)
                guard let close = line[afterQuote...].firstIndex(of: "'") else { continue }
                let fourcc = String(line[afterQuote..<close])
                var text = String(line[line.index(after: close)...]).trimmingCharacters(in: .whitespaces)
                text = String(text.dropFirst().dropLast())  // the parentheses
                // v4l2-ctl appends the format flags to the description: ", compressed, csc-ycbcr".
                var flags: [String] = []
                while let flag = (Array(flagNames.values) + ["csc-hsv"]).first(where: { text.hasSuffix(", \($0)") }) {
                    flags.append(flag)
                    text = String(text.dropLast(flag.count + 2))
                }
                formats.append(Format(fourcc: fourcc, text: text, flags: flags.sorted(), sizes: []))
            } else if line.hasPrefix("Size:") {
                formats[formats.count - 1].sizes.append(SizeEntry(size: String(line.dropFirst(5)).trimmingCharacters(in: .whitespaces), intervals: []))
            } else if line.hasPrefix("Interval:") {
                let last = formats.count - 1
                formats[last].sizes[formats[last].sizes.count - 1].intervals.append(String(line.dropFirst(9)).trimmingCharacters(in: .whitespaces))
            }
        }
        return formats
    }
}
