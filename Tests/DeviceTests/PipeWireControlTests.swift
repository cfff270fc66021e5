import Foundation
import MediaDevices
import XCTest

/// Issue 34: a PipeWire camera node's controls (its PropInfo and Props params) as
/// `CameraControl`s, set through Props and seen by the driver, read back, and their changes by
/// any program (`v4l2-ctl`, `pw-cli set-param`, our own `setControls`) as `controlChanges()`.
final class PipeWireControlTests: XCTestCase {
    override func setUpWithError() throws { try Rig.require() }

    func testBrightnessListedAndSetThroughPropsReachesTheDriverAndChangesArrive() async throws {
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
        let framesArrived = await recorder.wait(seconds: 60)
        XCTAssertTrue(framesArrived, "frames arrive")

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
        // Read back: 0.3.65's node gives no value, so the source reads the device the node wraps.
        let reread = try XCTUnwrap(try source.controls().first { $0.id == brightness.id })
        XCTAssertEqual(reread.value, .integer(201))
        XCTAssertThrowsError(try source.setControl(brightness.id, to: 300)) { error in
            XCTAssertEqual((error as? MediaDevicesError)?.code, .invalidValue, "\(error)")
        }
        XCTAssertEqual(try driver("brightness"), 201)

        // Changes made by other programs and by us arrive with the node's ids and keys.
        let watchStart = Date()
        let changes = try source.controlWatch()
        let watchdog = Task { try await Task.sleep(for: .seconds(60)); changes.stop() }  // none: the loop ends, the test fails
        defer { watchdog.cancel(); changes.stop() }
        var iterator = changes.makeAsyncIterator()
        var seen: [ControlChange] = []
        func nextBrightness() async -> ControlChange? {
            while let change = await iterator.next() {
                seen.append(change)
                if change.id == brightness.id && change.changes.contains(.value) { return change }
            }
            return nil
        }
        try Rig.run("v4l2-ctl -d \(path) -c brightness=140")
        let byV4L2 = await nextBrightness()
        XCTAssertEqual(byV4L2?.value, .integer(140), "v4l2-ctl's change: \(seen)")
        XCTAssertEqual(byV4L2?.key, brightness.key)
        try session.run("pw-cli set-param \(source.node.id) Props '{ brightness: 60 }'")
        let byPWCLI = await nextBrightness()
        XCTAssertEqual(byPWCLI?.value, .integer(60), "pw-cli set-param's change: \(seen)")
        try source.setControl(brightness.id, to: 90)
        let byUs = await nextBrightness()
        XCTAssertEqual(byUs?.value, .integer(90), "our setControl's change: \(seen)")
        XCTAssertEqual(try source.controls().first { $0.id == brightness.id }?.value, .integer(90))
        XCTAssertEqual(try driver("brightness"), 90)
        print("figure: brightness changes through PipeWire (v4l2-ctl, pw-cli, ours) in \(Int(Date().timeIntervalSince(watchStart) * 1000)) ms: \(seen.filter { $0.id == brightness.id }.map(\.description)); \(seen.count) changes seen in all")
        print("figure: vivid's PipeWire node lists \(listed.count) controls: \(listed.map(\.name).prefix(8).joined(separator: ", "))…")
    }
}
