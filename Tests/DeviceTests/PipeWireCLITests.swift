import Foundation
import MediaDevices
import XCTest

/// Issue 34: the CLI's `--backend` on formats, controls and capture, and its automatic rule: a
/// camera whose V4L2 node is busy because PipeWire streams it is captured through its PipeWire
/// node (shared), while `--backend v4l2` stays busy. Four CLI starts in one camera session.
final class PipeWireCLITests: XCTestCase {
    override func setUpWithError() throws { try Rig.require() }

    private func json(_ text: String, file: StaticString = #filePath, line: UInt = #line) throws -> [String: Any] {
        try XCTUnwrap(JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], text, file: file, line: line)
    }

    func testBackendOptionsAndTheAutomaticRuleWhilePipeWireHoldsTheCamera() throws {
        let path = try Rig.loadVivid("node_types=1")[0]
        let session = try CameraSession(name: "cli", devices: [path])
        defer { session.stop() }
        let serial = try XCTUnwrap(session.nodes[path]).serial
        let camera = try XCTUnwrap(CaptureDevice.scan(backends: [.pipewire]).devices.first { $0.path == path })
        let node = try XCTUnwrap(camera.pipeWireNodes.first)

        // formats by the PipeWire name: the node's EnumFormat formats, in its order.
        let formats = try json(try session.run("\(Rig.tool) formats pipewire:\(serial) --json"))
        let listed = (formats["formats"] as? [[String: Any]] ?? []).compactMap { $0["fourcc"] as? String }
        XCTAssertEqual(listed, node.formats.map { $0.pixelFormat.fourCC.description })
        XCTAssertFalse(listed.isEmpty)

        // PipeWire streams the camera for us: its V4L2 node is busy for anyone else.
        let source = try PipeWireCameraSource(device: camera, request: FormatRequest(pixelFormat: .yuyv, size: .vga))
        let recorder = FrameRecorder(target: 1_000_000)
        source.consumer = recorder
        try source.start()
        defer { source.release() }
        XCTAssertTrue(recorderWait(recorder, frames: 3), "our PipeWire capture runs")

        // Automatic: the busy V4L2 node gives way to the camera's PipeWire node, shared with us.
        let output = "\(session.directory)/auto.y4m"
        let before = recorder.records.count
        let automatic = try json(try session.run("\(Rig.tool) capture \(path) --frames 5 --output \(output) --json"))
        XCTAssertEqual(automatic["device"] as? String, "pipewire:\(serial)", "\(automatic)")
        XCTAssertEqual(automatic["framesWritten"] as? Int, 5, "\(automatic)")
        XCTAssertGreaterThan(Rig.fileSize(output), 5 * 640 * 480)
        XCTAssertGreaterThan(recorder.records.count, before + 3, "our capture went on while the CLI read the same node")

        // --backend v4l2: no fallback, the node is busy and the error says PipeWire.
        let forced = Rig.shell("XDG_RUNTIME_DIR=\(session.directory) PIPEWIRE_REMOTE=\(session.remote) \(Rig.tool) capture \(path) --backend v4l2 --frames 2 --output \(session.directory)/v4l2.y4m --json")
        XCTAssertNotEqual(forced.status, 0)
        let error = try XCTUnwrap(try json(forced.output)["error"] as? [String: Any])
        XCTAssertEqual(error["code"] as? String, "busy", "\(error)")
        XCTAssertTrue((error["message"] as? String ?? "").contains("PipeWire"), "\(error)")

        // controls --backend pipewire: set through the node's Props, seen by the driver.
        try session.run("\(Rig.tool) controls \(path) --backend pipewire --set brightness=77")
        let driver = try Rig.run("v4l2-ctl -d \(path) -C brightness").split(separator: ":").last?.trimmingCharacters(in: .whitespacesAndNewlines)
        XCTAssertEqual(driver, "77")
        print("figure: CLI through PipeWire node \(node.id): formats \(listed), automatic capture while busy took pipewire:\(serial)")
    }

    /// Waits until `recorder` has `frames` frames (60 s at most).
    private func recorderWait(_ recorder: FrameRecorder, frames: Int) -> Bool {
        let deadline = Date().addingTimeInterval(60)
        while recorder.records.count < frames && Date() < deadline { usleep(20_000) }
        return recorder.records.count >= frames
    }
}
