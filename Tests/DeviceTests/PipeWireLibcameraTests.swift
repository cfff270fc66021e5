import Foundation
import MediaDevices
import XCTest

/// Issue 34: a libcamera camera through PipeWire. vimc (built by `scripts/vimc build` on the
/// host, loaded after systemd-udevd so that libcamera sees it) → libcamera's vimc pipeline →
/// WirePlumber's libcamera monitor → a PipeWire camera node, listed by its libcamera id.
final class PipeWireLibcameraTests: XCTestCase {
    override func setUpWithError() throws { try Rig.require() }

    static let camera = "platform/vimc.0 Sensor B"

    func testVimcIsListedByItsLibcameraIDWithFormatsAndNoRates() throws {
        let udevd = try UdevDaemon()
        defer { udevd.stop(); Rig.shell("\(Rig.script("vimc")) unload") }
        try Rig.run("\(Rig.script("vimc")) load")
        try udevd.trigger(["media", "video4linux"])
        let session = try CameraSession(name: "libcamera", devices: [Self.camera])
        defer { session.stop() }
        let node = try XCTUnwrap(session.nodes[Self.camera])
        let devices = try CaptureDevice.devices(backends: [.pipewire])
        let camera = try XCTUnwrap(devices.first { $0.uniqueID == "libcamera:\(Self.camera)" }, "\(devices.map(\.uniqueID))")
        XCTAssertEqual(camera.driver, "libcamera")
        XCTAssertEqual(camera.backends, [.pipewire])
        let listed = try XCTUnwrap(camera.pipeWireNodes.first)
        XCTAssertEqual(listed.id, node.id)
        XCTAssertEqual(listed.libcameraPath, Self.camera)
        XCTAssertFalse(listed.givesFrameRates, "libcamera nodes in PipeWire 0.3.65 give no rates")
        let reference = PipeWireEnumFormat.lines(try session.run("pw-cli enum-params \(node.id) EnumFormat"))
        let unmapped = Set(listed.unmappedFormats)
        XCTAssertEqual(PipeWireEnumFormat.lines(listed), reference.filter { !unmapped.contains(String($0.prefix { $0 != " " })) })
        XCTAssertTrue(listed.formats.contains { $0.pixelFormat.fourCC == "BGR3" }, "\(listed.formats.map(\.pixelFormat))")
        XCTAssertEqual(try camera.supportedFormats(), listed.formats)
        print("figure: vimc through libcamera: node \(node.id), \(listed.formats.count) pixel formats, \(listed.formats.first?.frameSizes.count ?? 0) sizes, no rates; \(devices.count) PipeWire cameras (vimc's V4L2 capture nodes too)")
    }
}
