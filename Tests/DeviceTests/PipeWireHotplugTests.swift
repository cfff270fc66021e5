import Foundation
import MediaDevices
import XCTest

/// Issue 34: PipeWire camera nodes coming and going as `DeviceMonitor` events (watching
/// `.pipewire`), and `PipeWireCameraSource.resumeWhenReconnected`. WirePlumber made vivid's
/// node: killing it removes the node while the daemon stays, starting it again makes a new one.
final class PipeWireHotplugTests: XCTestCase {
    override func setUpWithError() throws { try Rig.require() }

    func testNodeGoneAndBackAreEventsAndCaptureResumesOnTheNewNode() async throws {
        let path = try Rig.loadVivid("node_types=1")[0]
        let session = try CameraSession(name: "hotplug", devices: [path])
        defer { session.stop() }
        let camera = try XCTUnwrap(CaptureDevice.scan(backends: [.pipewire]).devices.first { $0.path == path })
        let first = try XCTUnwrap(camera.pipeWireNodes.first)
        let source = try PipeWireCameraSource(device: camera, request: FormatRequest(pixelFormat: .yuyv, size: .vga))
        let recorder = FrameRecorder(target: 3)
        source.consumer = recorder
        try source.start()
        defer { source.release() }
        let framesArrived = await recorder.wait(seconds: 60)
        XCTAssertTrue(framesArrived, "frames before the node goes")

        let monitor = try DeviceMonitor(kinds: [.camera], cameraBackends: [.pipewire])
        let collected = Task {
            var events: [DeviceEvent] = []
            for await event in monitor.events { events.append(event) }
            return events
        }
        try session.kill("wireplumber")
        let ended = await recorder.waitForStop(seconds: 10)
        XCTAssertTrue(ended, "capture ended within 10 s")
        XCTAssertFalse(source.isCapturing)
        XCTAssertEqual(recorder.stopError?.code, .disconnected, "\(String(describing: recorder.stopError))")
        let framesBefore = recorder.records.count

        let resumed = Task { try await source.resumeWhenReconnected(timeout: .seconds(90)) }
        let again = try XCTUnwrap(try session.startWireplumber(waitingFor: [path])[path], "wireplumber made the node again\n\(session.report)")
        let didResume = try await resumed.value
        XCTAssertTrue(didResume, "resumed on the new node")
        XCTAssertNotEqual(again.serial, first.serial, "a new node")
        XCTAssertEqual(source.node.serial, again.serial, "the source reads the new node")
        for _ in 0..<600 { guard recorder.records.count < framesBefore + 5 else { break }; usleep(50_000) }
        XCTAssertGreaterThanOrEqual(recorder.records.count, framesBefore + 5, "frames arrive again from the new node")
        XCTAssertTrue(source.isCapturing)

        monitor.stop()
        let events = await collected.value.filter { $0.uniqueID == camera.uniqueID }
        XCTAssertEqual(events.map(\.action), [.removed, .added], "\(events)")
        XCTAssertEqual(events.first?.camera?.pipeWireNodes.first?.serial, first.serial)
        XCTAssertEqual(events.last?.camera?.pipeWireNodes.first?.serial, again.serial)
        XCTAssertEqual(events.last?.device.subsystem, "pipewire")
        XCTAssertEqual(events.last?.camera?.path, path)
        print("figure: PipeWire hotplug: \(events.map(\.description)); resumed on node \(again.id) (serial \(again.serial)) after \(framesBefore) frames")
    }
}
