import Foundation
import XCTest

/// `mediadevices controls` and `--control` against vivid, checked with v4l2-ctl: the listing,
/// setting (all or none), profiles, watching, and controls applied before capture.
final class ControlsCLITests: XCTestCase {
    override func setUpWithError() throws { try Rig.require() }

    private func json(_ text: String, file: StaticString = #filePath, line: UInt = #line) throws -> [String: Any] {
        try XCTUnwrap(JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], text, file: file, line: line)
    }

    /// `v4l2-ctl -d NODE -C a,b` as [key: value] (menus as their index, without the name).
    private func current(_ node: String, _ keys: [String]) throws -> [String: String] {
        let output = try Rig.run("v4l2-ctl -d \(node) -C \(keys.joined(separator: ","))")
        var values: [String: String] = [:]
        for line in output.split(separator: "\n") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            values[String(line[..<colon])] = String(value.prefix { $0 != " " })
        }
        return values
    }

    /// The control lines of `v4l2-ctl -l`/`-L` by key, and the class headers in order.
    private func listing(_ text: String) -> (lines: [String: String], keys: [String], headers: [String]) {
        var lines: [String: String] = [:], keys: [String] = [], headers: [String] = []
        for line in text.split(separator: "\n").map(String.init) {
            if line.hasPrefix(" ") {
                let key = String(line.drop { $0 == " " }.prefix { $0 != " " })
                lines[key] = line
                keys.append(key)
            } else if !line.hasPrefix("\t") {
                headers.append(line)
            }
        }
        return (lines, keys, headers)
    }

    /// `controls 0 --json` names, numbers and reads the controls as v4l2-ctl does, and the text
    /// listing prints them in v4l2-ctl's layout, grouped under the same class headers.
    func testListingAgreesWithV4L2Ctl() throws {
        let node = try Rig.loadVivid("n_devs=1")[0]
        try Rig.run("v4l2-ctl -d \(node) -c brightness=99,contrast=111,hue=-7,menu=4,boolean=0")
        let result = try json(Rig.run("\(Rig.tool) controls 0 --json"))
        XCTAssertEqual(result["device"] as? String, node)
        XCTAssertEqual(result["uniqueID"] as? String, "v4l2:vivid:platform:vivid-000")
        let controls = try XCTUnwrap(result["controls"] as? [[String: Any]], "\(result)")
        let reference = listing(try Rig.run("v4l2-ctl -d \(node) -l"))
        XCTAssertEqual(controls.compactMap { $0["key"] as? String }, reference.keys, "the same controls in the same order, no class headers")
        let byKey = Dictionary(controls.map { ($0["key"] as? String ?? "", $0) }, uniquingKeysWith: { first, _ in first })
        let expected: [(key: String, id: Int, type: String, value: Int, className: String)] = [
            ("brightness", 0x0098_0900, "int", 99, "User Controls"), ("contrast", 0x0098_0901, "int", 111, "User Controls"),
            ("hue", 0x0098_0903, "int", -7, "User Controls"), ("menu", 0x0098_f904, "menu", 4, "User Controls"),
            ("boolean", 0x0098_f901, "bool", 0, "User Controls"), ("test_pattern", 0x00f0_f000, "menu", 0, "Vivid Controls"),
        ]
        for control in expected {
            let listed = try XCTUnwrap(byKey[control.key], "controls --json lists \(control.key)")
            let line = try XCTUnwrap(reference.lines[control.key], "v4l2-ctl -l lists \(control.key)")
            XCTAssertEqual(listed["id"] as? Int, control.id, line)
            XCTAssertTrue(line.contains(String(format: " 0x%08x (%@)", control.id, control.type)), line)
            XCTAssertEqual(listed["type"] as? String, control.type, line)
            XCTAssertEqual(listed["value"] as? Int, control.value, line)
            XCTAssertTrue(line.contains(" value=\(control.value)"), line)
            XCTAssertEqual(listed["class"] as? String, control.className)
        }
        let menu = try XCTUnwrap(byKey["menu"]?["menu"] as? [[String: Any]])
        XCTAssertEqual(menu.map { $0["index"] as? Int }, [1, 3, 4], "vivid's menu has a gap at 2")
        XCTAssertEqual(menu.map { $0["name"] as? String }, ["Menu Item 1", "Menu Item 3", "Menu Item 4"])
        XCTAssertEqual(byKey["gain"]?["flags"] as? [String], ["inactive", "volatile"])

        // The table: v4l2-ctl -L's lines, headers and menu entries.
        let table = try Rig.run("\(Rig.tool) controls \(node)")
        let ours = listing(table), theirs = listing(try Rig.run("v4l2-ctl -d \(node) -L"))
        XCTAssertEqual(ours.headers.filter { !$0.isEmpty }, ["User Controls", "Digital Video Controls", "Vivid Controls"], table)
        XCTAssertEqual(ours.headers, theirs.headers)
        XCTAssertEqual(ours.keys, theirs.keys)
        for key in ["brightness", "hue", "boolean", "integer_64_bits", "menu", "integer_menu", "string", "area",
                    "u16_8x16_matrix", "read_only_integer_32_bits", "test_pattern", "dv_timings"] {
            XCTAssertEqual(ours.lines[key], theirs.lines[key], "\(key) as v4l2-ctl -L prints it")
        }
        XCTAssertTrue(table.contains("(menu)   : min=1 max=4 default=3 value=4 (Menu Item 4)\n\t\t\t\t1: Menu Item 1\n\t\t\t\t3: Menu Item 3\n\t\t\t\t4: Menu Item 4\n"), table)
        print("figure: controls --json: \(controls.count) controls on vivid, keys and order as v4l2-ctl -l; \(expected.count) ids/types/values checked")
    }

    /// Several `--set` values go as one request, by number and by menu entry name.
    func testSetAppliesEveryValueAndReadsBackThroughV4L2Ctl() throws {
        let node = try Rig.loadVivid("n_devs=1")[0]
        let printed = try Rig.run("\(Rig.tool) controls \(node) --set brightness=200 --set contrast=100 --set 'menu=Menu Item 1' --set boolean=false")
        XCTAssertTrue(printed.contains("set brightness=200, contrast=100, menu=Menu Item 1, boolean=false"), printed)
        XCTAssertEqual(try current(node, ["brightness", "contrast", "menu", "boolean"]),
                       ["brightness": "200", "contrast": "100", "menu": "1", "boolean": "0"])
        let after = try json(Rig.run("\(Rig.tool) controls 0 --set hue=-20 --json"))
        let hue = (after["controls"] as? [[String: Any]])?.first { $0["key"] as? String == "hue" }
        XCTAssertEqual(hue?["value"] as? Int, -20, "--set --json prints the controls after the change")
        XCTAssertEqual(try current(node, ["hue", "brightness"]), ["hue": "-20", "brightness": "200"])
    }

    /// An out-of-range value (or an unknown name) fails with a clear error and changes none of
    /// the other values in the same request.
    func testBadSetIsAnErrorAndChangesNothing() throws {
        let node = try Rig.loadVivid("n_devs=1")[0]
        try Rig.run("v4l2-ctl -d \(node) -c brightness=50,contrast=60")
        // The four refused requests at once (each CLI start costs seconds in the rig); none
        // changes anything, checked after all of them.
        let results = Rig.shells(["\(Rig.tool) controls \(node) --set contrast=90 --set brightness=300 --json",
                                  "\(Rig.tool) controls \(node) --set contrast=70 --set no_such_control=1",
                                  "\(Rig.tool) controls \(node) --set read_only_integer_32_bits=1 --json",
                                  "\(Rig.tool) controls \(node) --set brightness"])
        let (outOfRange, unknown, readOnly, usage) = (results[0], results[1], results[2], results[3])
        XCTAssertEqual(outOfRange.status, 1, outOfRange.output + outOfRange.errors)
        let error = try XCTUnwrap(try json(outOfRange.output)["error"] as? [String: Any], outOfRange.output)
        XCTAssertEqual(error["code"] as? String, "invalidValue")
        let message = error["message"] as? String ?? ""
        XCTAssertTrue(message.contains("brightness") && message.contains("300") && message.contains("0 to 255"), message)

        XCTAssertEqual(unknown.status, 1)
        XCTAssertTrue(unknown.errors.contains("no_such_control"), unknown.errors)
        XCTAssertEqual(readOnly.status, 1)
        XCTAssertEqual((try json(readOnly.output)["error"] as? [String: Any])?["code"] as? String, "invalidState", readOnly.output)
        XCTAssertEqual(usage.status, 64, "NAME without =VALUE is a usage error: \(usage.errors)")
        XCTAssertEqual(try current(node, ["brightness", "contrast"]), ["brightness": "50", "contrast": "60"], "nothing was applied")
    }

    /// `--save` merges each camera's profile into one file; `--reset` gives the defaults;
    /// `--load` brings this camera's values back (and says what it skipped), and fails clearly
    /// for a file that has no profile for it.
    func testSaveResetLoadRoundTrip() throws {
        let nodes = try Rig.loadVivid("n_devs=2")
        XCTAssertGreaterThanOrEqual(nodes.count, 2, "\(nodes)")
        let (first, second) = (nodes[0], nodes[1])
        let file = "\(Rig.scratch)/controls-profiles.json", other = "\(Rig.scratch)/controls-other.json"
        try? FileManager.default.removeItem(atPath: file)
        try? FileManager.default.removeItem(atPath: other)
        let values = ["brightness": "10", "contrast": "20", "menu": "4", "boolean": "0", "test_pattern": "5", "integer_64_bits": "-5000000000"]
        try Rig.run("v4l2-ctl -d \(first) -c " + values.map { "\($0.key)=\($0.value)" }.sorted().joined(separator: ","))
        try Rig.run("v4l2-ctl -d \(second) -c brightness=222")

        let saved = try Rig.run("\(Rig.tool) controls \(first) --save \(file)")
        XCTAssertTrue(saved.contains("to \(file)"), saved)
        try Rig.run("\(Rig.tool) controls \(second) --save \(file)")
        let profiles = try json(String(contentsOfFile: file, encoding: .utf8))["profiles"] as? [String: Any]
        XCTAssertEqual(profiles?.keys.sorted(), ["v4l2:vivid:platform:vivid-000", "v4l2:vivid:platform:vivid-001"], "both cameras in one file")

        try Rig.run("\(Rig.tool) controls \(first) --reset")
        XCTAssertEqual(try current(first, Array(values.keys)),
                       ["brightness": "128", "contrast": "128", "menu": "3", "boolean": "1", "test_pattern": "0", "integer_64_bits": "0"])
        XCTAssertEqual(try current(second, ["brightness"]), ["brightness": "222"], "the other camera is untouched")
        try Rig.run("v4l2-ctl -d \(second) -c brightness=1")

        let loaded = try json(Rig.run("\(Rig.tool) controls \(first) --load \(file) --json"))
        XCTAssertEqual(try current(first, Array(values.keys)), values)
        XCTAssertEqual(try current(second, ["brightness"]), ["brightness": "1"], "only this camera's profile was loaded")
        let skipped = try XCTUnwrap(loaded["skipped"] as? [String], "\(loaded)")
        XCTAssertTrue(skipped.contains("gain"), "gain is inactive while gain_automatic is on: \(skipped)")
        let text = try Rig.run("\(Rig.tool) controls \(first) --load \(file)")
        XCTAssertTrue(text.contains("skipped") && text.contains("gain"), text)

        try Rig.run("\(Rig.tool) controls \(second) --save \(other)")
        let missing = Rig.shell("\(Rig.tool) controls \(first) --load \(other) --json")
        XCTAssertEqual(missing.status, 1)
        let error = try XCTUnwrap(try json(missing.output)["error"] as? [String: Any], missing.output)
        XCTAssertEqual(error["code"] as? String, "notFound")
        XCTAssertTrue((error["message"] as? String ?? "").contains("vivid-000"), "names the camera it has no profile for: \(error)")
    }

    /// `--watch --json --count 1` prints the change another process makes, then exits.
    func testWatchPrintsAChangeMadeByV4L2Ctl() throws {
        let node = try Rig.loadVivid("n_devs=1")[0]
        try Rig.run("v4l2-ctl -d \(node) -c brightness=128")
        let out = "\(Rig.scratch)/controls-watch.json", err = "\(Rig.scratch)/controls-watch.err"
        let watcher = try Rig.spawn([Rig.tool, "controls", node, "--watch", "--json", "--count", "1", "--timeout", "120"], output: out, errors: err)
        defer { if watcher.isRunning { watcher.terminate() } }
        for _ in 0..<1200 {
            guard watcher.isRunning && !((try? String(contentsOfFile: err, encoding: .utf8))?.contains("watching") ?? false) else { break }
            usleep(50_000)
        }
        XCTAssertTrue(watcher.isRunning, "watching: \(Rig.shell("cat \(err)").output)")
        try Rig.run("v4l2-ctl -d \(node) -c brightness=33")
        XCTAssertTrue(Rig.wait(for: watcher, seconds: 30), "--count 1 ends after one change")
        XCTAssertEqual(watcher.terminationStatus, 0)
        let lines = try String(contentsOfFile: out, encoding: .utf8).split(separator: "\n")
        XCTAssertEqual(lines.count, 1, "\(lines)")
        let change = try json(String(lines.first ?? ""))
        XCTAssertEqual(change["key"] as? String, "brightness")
        XCTAssertEqual(change["id"] as? Int, 0x0098_0900)
        XCTAssertEqual(change["value"] as? Int, 33)
        XCTAssertEqual(change["changes"] as? [String], ["value"])
        XCTAssertEqual(change["flags"] as? [String], ["slider"])
    }

    /// `capture --control` and `snapshot --control` set the controls before streaming: the
    /// first frames already show the brightness, and the value stays set.
    func testCaptureAndSnapshotApplyControlsBeforeStreaming() throws {
        let node = try Rig.loadVivid("n_devs=1")[0]
        try Rig.colourBars(node)
        func meanLuma(_ brightness: Int) throws -> Double {
            let output = "\(Rig.scratch)/controls-\(brightness).yuyv"
            try Rig.run("\(Rig.tool) capture 0 --control brightness=\(brightness) --control contrast=128 --format YUYV --size 320x240 --frames 2 --output \(output)")
            XCTAssertEqual(try current(node, ["brightness"]), ["brightness": "\(brightness)"])
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: output)).prefix(320 * 240 * 2))
            XCTAssertEqual(bytes.count, 320 * 240 * 2)
            var sum = 0
            for index in stride(from: 0, to: bytes.count, by: 2) { sum += Int(bytes[index]) }
            return Double(sum) / Double(bytes.count / 2)
        }
        let dark = try meanLuma(40), bright = try meanLuma(220)
        XCTAssertGreaterThan(bright - dark, 60, "the first frame shows the brightness set before streaming (mean Y \(dark) vs \(bright))")

        try Rig.run("\(Rig.tool) snapshot \(node) --control contrast=77 --control 'test_pattern=100% White' --skip 0 --output \(Rig.scratch)/controls.png")
        XCTAssertEqual(try current(node, ["contrast", "test_pattern"]), ["contrast": "77", "test_pattern": "6"])

        let bad = Rig.shell("\(Rig.tool) capture 0 --control brightness=999 --frames 1 --output \(Rig.scratch)/x.y4m --json")
        XCTAssertEqual(bad.status, 1)
        XCTAssertEqual((try json(bad.output)["error"] as? [String: Any])?["code"] as? String, "invalidValue", bad.output)
        let pattern = Rig.shell("\(Rig.tool) capture testpattern --control brightness=1 --frames 1 --output \(Rig.scratch)/x.y4m --json")
        XCTAssertEqual(pattern.status, 1, "the test pattern has no controls: \(pattern.output)")
        print("figure: capture --control brightness: mean Y \(String(format: "%.1f", dark)) at 40, \(String(format: "%.1f", bright)) at 220")
    }
}
