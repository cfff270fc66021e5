import Foundation
import MediaDevices
import XCTest

/// Enumeration against vivid must agree with `v4l2-ctl`, field by field.
final class EnumerationTests: XCTestCase {
    override func setUpWithError() throws { try Rig.require() }

    func testTwoSinglePlanarDevicesAgreeWithV4L2Ctl() async throws {
        let nodes = try Rig.loadVivid("n_devs=2")
        XCTAssertEqual(nodes.count, 2)
        try await assertDevicesAgree(nodes)
    }

    func testMultiplanarDeviceAgreesWithV4L2Ctl() async throws {
        let nodes = try Rig.loadVivid("n_devs=1 multiplanar=2")
        XCTAssertEqual(nodes.count, 1)
        let device = try XCTUnwrap(CaptureDevice.scan().devices.first)
        XCTAssertTrue(device.isMultiplanar, "multiplanar=2 must give a multi-planar capture node")
        try await assertDevicesAgree(nodes)
    }

    /// The device list, each device's fields and every format agree with v4l2-ctl; so does the CLI.
    private func assertDevicesAgree(_ nodes: [String]) async throws {
        let discovery = await CaptureDevice.discover()
        XCTAssertEqual(discovery.problems.count, 0, "\(discovery.problems)")
        let devices = discovery.devices
        XCTAssertEqual(devices.map(\.path), nodes, "capture nodes differ from v4l2-ctl's")
        let groups = try V4L2Reference.deviceGroups()
        for device in devices {
            let group = try XCTUnwrap(groups.first { $0.nodes.contains(device.path) }, "\(device.path) not in v4l2-ctl --list-devices")
            XCTAssertEqual(device.name, group.name)
            XCTAssertEqual(device.busInfo, group.busInfo)
            XCTAssertEqual(device.driver, "vivid")
            XCTAssertEqual(device.capabilities, try V4L2Reference.deviceCaps(device.path))
            XCTAssertEqual(device.uniqueID, "v4l2:vivid:\(group.busInfo)", "no udev in the rig: uniqueID falls back to driver and bus")
            try Self.assertFormatsAgree(device)
        }
        XCTAssertEqual(Set(devices.map(\.uniqueID)).count, devices.count, "uniqueIDs must be unique")

        // The CLI prints the same.
        let list = try json(Rig.run("\(Rig.tool) list --json"))
        let cameras = try XCTUnwrap(list["cameras"] as? [[String: Any]])
        XCTAssertEqual(cameras.map { $0["path"] as? String }, nodes)
        XCTAssertEqual(cameras.map { $0["uniqueID"] as? String }, devices.map(\.uniqueID))
        XCTAssertEqual(cameras.map { $0["busInfo"] as? String }, devices.map(\.busInfo))
        for (index, node) in nodes.enumerated() {
            let printed = try json(Rig.run("\(Rig.tool) formats \(index) --json"))
            XCTAssertEqual(printed["device"] as? String, node)
            let formats = try XCTUnwrap(printed["formats"] as? [[String: Any]])
            let reference = try V4L2Reference.formats(node)
            XCTAssertEqual(formats.map { $0["fourcc"] as? String }, reference.map(\.fourcc))
            XCTAssertEqual(formats.map { $0["description"] as? String }, reference.map(\.text))
            let sizes = formats.map { (($0["sizes"] as? [[String: Any]]) ?? []).map(Self.v4l2CtlText(size:)) }
            XCTAssertEqual(sizes, reference.map { $0.sizes.map(\.size) })
        }
    }

    /// Every format, size and interval of `device` agrees with `v4l2-ctl --list-formats-ext`.
    static func assertFormatsAgree(_ device: CaptureDevice, minimumCount: Int = 11) throws {
        let ours = try device.supportedFormats()
        let reference = try V4L2Reference.formats(device.path)
        XCTAssertEqual(ours.count, reference.count, "\(device.path): format count")
        XCTAssertGreaterThanOrEqual(ours.count, minimumCount, "formats offered")
        let sizes = ours.reduce(0) { $0 + $1.frameSizes.count }
        let rates = ours.reduce(0) { $0 + $1.frameSizes.reduce(0) { $0 + $1.frameRateRanges.count } }
        print("figure: \(device.path) (\(device.isMultiplanar ? "multi-planar" : "single-planar")): \(ours.count) formats, \(sizes) sizes, \(rates) intervals compared with v4l2-ctl")
        for (mine, theirs) in zip(ours, reference) {
            let label = "\(device.path) '\(theirs.fourcc)'"
            XCTAssertEqual(mine.pixelFormat.fourCC.description, theirs.fourcc, label)
            XCTAssertEqual(mine.description, theirs.text, label)
            let flags = V4L2Reference.flagNames(mine.flags, fourcc: theirs.fourcc)
            XCTAssertEqual(Set(flags), Set(theirs.flags), "\(label) flags")
            XCTAssertEqual(mine.frameSizes.count, theirs.sizes.count, "\(label) size count")
            for (option, entry) in zip(mine.frameSizes, theirs.sizes) {
                XCTAssertEqual(Self.v4l2CtlText(option.sizes), entry.size, label)
                XCTAssertEqual(option.frameRateRanges.map(Self.v4l2CtlText(_:)), entry.intervals, "\(label) \(entry.size)")
            }
        }
    }

    /// A size entry as v4l2-ctl prints it after `Size: `.
    static func v4l2CtlText(_ sizes: FrameSizeRange) -> String {
        switch sizes {
        case .discrete(let size): return "Discrete \(size)"
        case .stepwise(let min, let max, let step): return "Stepwise \(min) - \(max) with step \(step.width)/\(step.height)"
        case .continuous: return "Continuous"
        }
    }

    /// A size entry of `formats --json`, in the same words.
    static func v4l2CtlText(size: [String: Any]) -> String {
        func sz(_ key: String) -> String {
            let s = size[key] as? [String: Int] ?? [:]
            return "\(s["width"] ?? -1)x\(s["height"] ?? -1)"
        }
        switch size["type"] as? String {
        case "discrete": return "Discrete \(size["width"] as? Int ?? -1)x\(size["height"] as? Int ?? -1)"
        case "stepwise":
            let step = size["step"] as? [String: Int] ?? [:]
            return "Stepwise \(sz("min")) - \(sz("max")) with step \(step["width"] ?? -1)/\(step["height"] ?? -1)"
        default: return "Continuous"
        }
    }

    /// An interval entry as v4l2-ctl prints it after `Interval: ` (discrete entries).
    static func v4l2CtlText(_ range: FrameRateRange) -> String {
        let seconds = String(format: "%.3f", range.minFrameInterval.doubleValue)
        let fps = String(format: "%.3f", range.maxFrameRate.framesPerSecond.doubleValue)
        switch range.kind {
        case .discrete: return "Discrete \(seconds)s (\(fps) fps)"
        case .stepwise, .continuous:
            let maxSeconds = String(format: "%.3f", range.maxFrameInterval.doubleValue)
            let minFPS = String(format: "%.3f", range.minFrameRate.framesPerSecond.doubleValue)
            let kind = range.kind == .stepwise ? "Stepwise" : "Continuous"
            let step = range.intervalStep.map { " with step " + String(format: "%.3f", $0.doubleValue) + "s" } ?? ""
            return "\(kind) \(seconds)s - \(maxSeconds)s\(step) (\(minFPS)-\(fps) fps)"
        }
    }

    private func json(_ text: String) throws -> [String: Any] {
        let object = try JSONSerialization.jsonObject(with: Data(text.utf8))
        return try XCTUnwrap(object as? [String: Any], "not a JSON object: \(text)")
    }
}
