import Foundation
import MediaDevices
import XCTest

/// Camera controls on vivid, whose controls cover every type (integer, 64-bit, boolean, menu with
/// gaps, integer menu, bitmask, string, button, U8/U16/U32 arrays, area, read-only, an auto
/// cluster): enumeration equals `v4l2-ctl -L` field by field, values go both ways with
/// `v4l2-ctl -C/-c`, bad values change nothing, and changes from another process arrive.
final class ControlTests: XCTestCase {
    override func setUpWithError() throws { try Rig.require() }

    /// A control as `v4l2-ctl -L` would print its fields.
    private func printed(_ control: CameraControl) -> [String: String] {
        let hex = { (value: Int64) in String(format: "0x%08llx", value) }
        var fields: [String: String] = [:]
        let bitmask = control.type == .bitmask
        if control.type != .boolean && control.type != .button && control.type != .area {
            if !bitmask { fields["min"] = "\(control.minimum)" }
            fields["max"] = bitmask ? hex(control.maximum) : "\(control.maximum)"
        }
        if control.type == .integer || control.type == .integer64 || control.type == .string || control.type.isCompound && control.type != .area {
            fields["step"] = "\(control.step)"
        }
        if control.type != .string && control.type != .button && control.type != .area {
            fields["default"] = bitmask ? hex(control.defaultValue) : "\(control.defaultValue)"
        }
        if !control.dimensions.isEmpty && control.type != .area { fields["dims"] = control.dimensions.map { "[\($0)]" }.joined() }
        switch control.value {
        case .integer(let value): fields["value"] = bitmask ? "\(Int32(bitPattern: UInt32(value)))" : "\(value)"
        case .string(let text): fields["value"] = text
        default: break
        }
        return fields
    }

    func testEnumerationEqualsV4L2CtlFieldByField() throws {
        let node = try Rig.loadVivid("n_devs=1")[0]
        let all = try CaptureDevice(path: node).controls()
        let ours = all.filter { $0.type != .controlClass }
        let theirs = try V4L2ControlReference.controls(node)
        XCTAssertEqual(ours.map(\.key), theirs.map(\.key), "the same controls in the same order")
        XCTAssertGreaterThan(ours.count, 40)
        var classHeader = ""
        var compared = 0
        for control in all {
            if control.type == .controlClass { classHeader = control.name; continue }
            guard let reference = theirs.first(where: { $0.id == control.id }) else { continue }
            let label = "\(control.key) 0x\(String(control.id, radix: 16))"
            XCTAssertEqual(classHeader, reference.classHeader, "\(label): class")
            XCTAssertEqual(control.type.description, reference.type, label)
            var expected = reference.fields
            var ours = printed(control)
            if control.type == .button || control.type == .area { expected["value"] = nil }
            if control.flags.contains(.volatile) { expected["value"] = nil; ours["value"] = nil }  // changes between reads
            XCTAssertEqual(ours, expected, label)
            let flags = control.flags.names.map { $0 == "dynamic-array" ? "0x00000800" : $0 }
            XCTAssertEqual(flags, reference.flags, "\(label) flags")
            let menu = control.menu.map { $0.value.map { "\($0) (0x\(String($0, radix: 16)))" } ?? $0.name }
            XCTAssertEqual(control.menu.map(\.index), reference.menu.map(\.index), "\(label) menu indexes (gaps kept)")
            XCTAssertEqual(menu, reference.menu.map(\.text), "\(label) menu")
            compared += 1
        }
        let types = Set(ours.map(\.type.description)).sorted()
        print("figure: vivid controls: \(compared) of \(theirs.count) equal to v4l2-ctl -L field by field; types \(types.joined(separator: ", ")); classes \(all.filter { $0.type == .controlClass }.map(\.name))")
        XCTAssertEqual(compared, theirs.count)
        XCTAssertTrue(Set(["int", "int64", "bool", "menu", "intmenu", "bitmask", "str", "button", "u8", "u16", "u32"]).isSubset(of: types))
        // Typed access.
        XCTAssertEqual(all.brightness?.maximum, 255)
        XCTAssertNil(all.zoomAbsolute, "vivid has no zoom")
    }

    func testValuesGoBothWaysWithV4L2Ctl() throws {
        let node = try Rig.loadVivid("n_devs=1")[0]
        let device = try CaptureDevice(path: node)
        try device.setControls([ControlSetting(.brightness, 201), ControlSetting(name: "contrast", text: "77"),
                                ControlSetting(name: "menu", text: "Menu Item 4"), ControlSetting(name: "boolean", text: "false"),
                                ControlSetting(name: "integer_64_bits", value: .integer(-1234567890123)),
                                ControlSetting(name: "string", value: .string("xyz")),
                                ControlSetting(name: "bitmask", text: "0x00400010"),
                                ControlSetting(name: "u32_1_element_array", value: .array([4096]))])
        // v4l2-ctl -C prints "4 (Menu Item 4)" for menus: the number is the value.
        let read = { (key: String) in String(try V4L2ControlReference.value(node, key).prefix { $0 != " " }) }
        XCTAssertEqual(try read("brightness"), "201")
        XCTAssertEqual(try read("contrast"), "77")
        XCTAssertEqual(try read("menu"), "4")
        XCTAssertEqual(try read("boolean"), "0")
        XCTAssertEqual(try read("integer_64_bits"), "-1234567890123")
        XCTAssertEqual(try V4L2ControlReference.value(node, "string"), "'xyz'")
        XCTAssertEqual(try read("bitmask"), "\(0x0040_0010)")
        XCTAssertEqual(try read("u32_1_element_array").trimmingCharacters(in: .whitespaces), "4096")

        try Rig.run("v4l2-ctl -d \(node) -c brightness=17,menu=1,string=pq,gain_automatic=0")
        let controls = try device.controls()
        XCTAssertEqual(controls.brightness?.value, .integer(17))
        XCTAssertEqual(controls[named: "menu"]?.value, .integer(1))
        XCTAssertEqual(controls[named: "string"]?.value, .string("pq"))
        XCTAssertEqual(controls[named: "u32_1_element_array"]?.value, .array([4096]))
        XCTAssertFalse(controls.gain?.flags.contains(.inactive) ?? true, "gain is active with automatic gain off")
    }

    func testBadValuesGiveClearErrorsAndChangeNothing() throws {
        let node = try Rig.loadVivid("n_devs=1")[0]
        let device = try CaptureDevice(path: node)
        try device.setControls([ControlSetting(.brightness, 100), ControlSetting(.contrast, 100)])
        func assertFails(_ settings: [ControlSetting], _ code: MediaDevicesError.Code, mentions: [String], line: UInt = #line) {
            XCTAssertThrowsError(try device.setControls(settings), line: line) { error in
                let error = error as? MediaDevicesError
                XCTAssertEqual(error?.code, code, "\(String(describing: error))", line: line)
                for word in mentions { XCTAssertTrue(error?.description.contains(word) ?? false, "'\(word)' in \(String(describing: error))", line: line) }
            }
        }
        assertFails([ControlSetting(.brightness, 300)], .invalidValue, mentions: ["brightness", "300", "0 to 255"])
        assertFails([ControlSetting(name: "menu", value: .integer(2))], .invalidValue, mentions: ["menu", "1 (Menu Item 1)"])
        assertFails([ControlSetting(name: "read_only_integer_32_bits", value: .integer(1))], .invalidState, mentions: ["read-only"])
        assertFails([ControlSetting(.gain, 10)], .invalidState, mentions: ["gain", "inactive"])
        assertFails([ControlSetting(name: "string", value: .string("toolong"))], .invalidValue, mentions: ["2 to 4 bytes"])
        assertFails([ControlSetting(name: "no_such_control", text: "1")], .notFound, mentions: ["no_such_control"])
        // All or nothing: a good value beside a bad one is not applied either.
        assertFails([ControlSetting(.brightness, 10), ControlSetting(.contrast, 999)], .invalidValue, mentions: ["contrast"])
        XCTAssertEqual(try V4L2ControlReference.value(node, "brightness"), "100", "nothing half-applied")
        XCTAssertEqual(try V4L2ControlReference.value(node, "contrast"), "100")
        XCTAssertTrue(try device.controls().gain?.flags.contains(.inactive) ?? false, "gain still governed by automatic gain")
    }

    func testChangesFromAnotherProcessArrive() async throws {
        let node = try Rig.loadVivid("n_devs=1")[0]
        let changes = try CaptureDevice(path: node).controlWatch()
        let watchdog = Task { try await Task.sleep(for: .seconds(60)); changes.stop() }  // no event: the loop ends, the test fails
        defer { watchdog.cancel() }
        var iterator = changes.makeAsyncIterator()
        try Rig.run("v4l2-ctl -d \(node) -c brightness=42")
        let value = await iterator.next()
        XCTAssertEqual(value?.key, "brightness")
        XCTAssertEqual(value?.value, .integer(42))
        XCTAssertTrue(value?.changes.contains(.value) ?? false)
        // Turning automatic gain off makes gain active: a flags change on gain.
        try Rig.run("v4l2-ctl -d \(node) -c gain_automatic=0")
        var seen: [ControlChange] = []
        while let change = await iterator.next() {
            seen.append(change)
            if change.key == "gain" && change.changes.contains(.flags) { break }
        }
        let gain = try XCTUnwrap(seen.last)
        XCTAssertEqual(gain.key, "gain")
        XCTAssertFalse(gain.flags.contains(.inactive), "\(seen)")
        changes.stop()
        print("figure: control events from v4l2-ctl: \(([value].compactMap { $0 } + seen).map(\.description))")
    }
}
