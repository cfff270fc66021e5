import Foundation
import MediaDevices
import XCTest

/// Issue 34: a PipeWire camera node's controls (its PropInfo and Props params) as
/// `CameraControl`s, set through Props and seen by the driver.
final class PipeWireControlTests: XCTestCase {
    override func setUpWithError() throws { try Rig.require() }

    func testBrightnessListedAndSetThroughPropsReachesTheDriver() throws {
        let path = try Rig.loadVivid("node_types=1")[0]
        let session = try CameraSession(name: "controls", devices: [path])
        defer { session.stop() }
        let camera = try XCTUnwrap(CaptureDevice.scan(backends: [.pipewire]).devices.first { $0.path == path })
        let listed = try XCTUnwrap(camera.pipeWireNodes.first?.controls)
        let source = try PipeWireCameraSource(device: camera, request: FormatRequest(pixelFormat: .yuyv, size: .vga))
        let recorder = FrameRecorder(target: 3)
        source.consumer = recorder
        try source.start()
        defer { source.release() }
        XCTAssertTrue(recorder.wait(seconds: 60), "frames arrive")

        func driver(_ name: String) throws -> Int64? {
            Int64(try Rig.run("v4l2-ctl -d \(path) -C \(name)").split(separator: ":").last?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "")
        }
        let brightness = try XCTUnwrap(listed.first { $0.name == "Brightness" }, "\(listed.map(\.name))")
        XCTAssertEqual(brightness.type, .integer)
        XCTAssertEqual(brightness.minimum, 0)
        XCTAssertEqual(brightness.maximum, 255)
        XCTAssertTrue(try Rig.run("v4l2-ctl -d \(path) --list-ctrls | grep -w brightness").contains("default=\(brightness.defaultValue)"))
        // PipeWire 0.3.65's V4L2 nodes report no current values: `.none`, not a made-up one.
        let before = try driver("brightness")
        XCTAssertTrue(brightness.value == .none || brightness.value.integer == before, "\(brightness.value)")
        XCTAssertNotNil(listed.first { $0.name == "Horizontal Flip" && $0.type == .boolean }, "\(listed.map(\.name))")

        try source.setControl(brightness.id, to: 201)
        XCTAssertEqual(try driver("brightness"), 201, "the driver has the value set through PipeWire")
        let reread = try XCTUnwrap(try source.controls().first { $0.id == brightness.id })
        XCTAssertTrue(reread.value == .none || reread.value.integer == 201, "\(reread.value)")
        XCTAssertThrowsError(try source.setControl(brightness.id, to: 300)) { error in
            XCTAssertEqual((error as? MediaDevicesError)?.code, .invalidValue, "\(error)")
        }
        XCTAssertEqual(try driver("brightness"), 201)
        print("figure: vivid's PipeWire node lists \(listed.count) controls: \(listed.map(\.name).prefix(8).joined(separator: ", "))…")
    }
}
