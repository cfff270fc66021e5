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
        let devices = CaptureDevice.scan(backends: [.pipewire]).devices
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

    /// Frames from vimc through libcamera and PipeWire, in the size libcamera configured (it
    /// aligns widths: 640 may become 636) with a stride that holds a row.
    func testVimcFramesArriveThroughLibcamera() throws {
        let udevd = try UdevDaemon()
        defer { udevd.stop(); Rig.shell("\(Rig.script("vimc")) unload") }
        try Rig.run("\(Rig.script("vimc")) load")
        try udevd.trigger(["media", "video4linux"])
        let session = try CameraSession(name: "libcamera-frames", devices: [Self.camera])
        defer { session.stop() }
        let camera = try XCTUnwrap(CaptureDevice.scan(backends: [.pipewire]).devices.first { $0.uniqueID == "libcamera:\(Self.camera)" })
        let source = try PipeWireCameraSource(device: camera, request: FormatRequest(pixelFormat: PixelFormat(v4l2: "BGR3"), size: .vga))
        defer { source.release() }
        let recorder = FrameRecorder(target: 8)
        source.consumer = recorder
        try source.start()
        XCTAssertTrue(recorder.wait(seconds: 90), "frames: \(recorder.records.count), stop error \(String(describing: recorder.stopError))\n\(session.report)")
        source.stop()
        let format = try XCTUnwrap(recorder.keptFormat)
        XCTAssertEqual(format.pixelFormat.fourCC, "BGR3")
        XCTAssertEqual(format.height, 480)
        XCTAssertTrue((630...640).contains(format.width), "\(format.width)")
        XCTAssertEqual(format.bytesPerRow.first, recorder.kept.first?.bytesPerRow)
        XCTAssertGreaterThanOrEqual(recorder.kept.first?.bytesPerRow ?? 0, format.width * 3)
        XCTAssertGreaterThanOrEqual(recorder.kept.first?.bytes.count ?? 0, (recorder.kept.first?.bytesPerRow ?? 0) * 479 + format.width * 3)
        print("figure: vimc through libcamera and PipeWire: \(recorder.records.count) frames of \(format.width)x\(format.height) BGR3, stride \(recorder.kept.first?.bytesPerRow ?? 0)")
    }
}
