import Foundation
import MediaDevices
import TestSupport
import XCTest

/// Issue 34: the Camera portal headless (xdg-desktop-portal 1.16 with the test Access backend
/// `scripts/portal-access.py`): no access before asking, granted → the camera through the portal's
/// PipeWire remote gives frames, the stored answer is honoured (no second dialog, a stored
/// refusal is `.permissionDenied`), a refusal in the dialog is `.permissionDenied`, and
/// cancelling a task waiting for the dialog ends the wait with `.cancelled`.
final class CameraPortalTests: XCTestCase {
    override func setUpWithError() throws { try Rig.require() }

    private let store = "gdbus call --session -d org.freedesktop.impl.portal.PermissionStore -o /org/freedesktop/impl/portal/PermissionStore -m org.freedesktop.impl.portal.PermissionStore"

    private static func code(_ body: () async throws -> Void) async -> MediaDevicesError.Code? {
        do { try await body(); return nil } catch { return (error as? MediaDevicesError)?.code ?? .io }
    }

    func testAccessGrantedStoredRefusedAndCancelled() async throws {
        let path = try Rig.loadVivid("node_types=1")[0]
        let session = try CameraSession(name: "portal", devices: [path], portal: true)
        setenv("DBUS_SESSION_BUS_ADDRESS", try XCTUnwrap(session.bus), 1)
        defer { session.stop(); unsetenv("DBUS_SESSION_BUS_ADDRESS") }
        let log = LogRecorder()
        let portal = CameraPortal(logger: log.logger(label: "app.portal"))
        XCTAssertTrue(try portal.isCameraPresent(), "the portal counts PipeWire's camera node\n\(session.report)")
        let before = await Self.code { if let problem = await CaptureDevice.discover(backends: [.portal]).problems.first { throw problem } }
        XCTAssertEqual(before, .permissionDenied, "no remote before access was granted")

        try session.answerDialogs("0")
        try await portal.requestAccess(timeout: .seconds(60))
        XCTAssertEqual(session.dialogs, 1)
        let cameras = await CaptureDevice.discover(backends: [.portal]).devices
        let camera = try XCTUnwrap(cameras.first { $0.path == path }, "\(cameras)\n\(session.report)")
        XCTAssertEqual(camera.backends, [.portal])
        XCTAssertEqual(camera.uniqueID, try CaptureDevice(path: path).uniqueID)
        let source = try PipeWireCameraSource(device: camera, request: FormatRequest(pixelFormat: .yuyv, size: .vga))
        let recorder = FrameRecorder(target: 5)
        source.consumer = recorder
        try source.start()
        let framesArrived = await recorder.wait(seconds: 60)
        XCTAssertTrue(framesArrived, "frames through the portal's remote: \(recorder.records.count)")
        source.release()
        XCTAssertEqual(recorder.records.first?.format.size, .vga)

        // The stored answer is used without asking again.
        try await portal.requestAccess(timeout: .seconds(60))
        XCTAssertEqual(session.dialogs, 1)
        // The CLI through the portal (access stored: no dialog).
        let output = "\(session.directory)/portal.y4m"
        let cli = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(try session.run(
            "\(Rig.tool) capture \(path) --backend portal --frames 3 --output \(output) --json").utf8)) as? [String: Any])
        XCTAssertEqual(cli["device"] as? String, "pipewire:\(camera.pipeWireNodes[0].serial)", "\(cli)")
        XCTAssertEqual(cli["framesWritten"] as? Int, 3, "\(cli)")
        XCTAssertEqual(session.dialogs, 1)
        // A stored refusal.
        try session.run("\(store).SetPermission devices true camera '' \"['no']\"")
        let storedNo = await Self.code { try await portal.requestAccess(timeout: .seconds(60)) }
        XCTAssertEqual(storedNo, .permissionDenied)
        XCTAssertEqual(session.dialogs, 1, "no dialog for a stored answer")
        let listedNo = await Self.code { if let problem = await CaptureDevice.discover(backends: [.portal]).problems.first { throw problem } }
        XCTAssertEqual(listedNo, .permissionDenied)
        // Refused in the dialog ("ask": the portal asks every time and stores nothing; not
        // DeletePermission: xdg-permission-store 1.16 answers lookups of an emptied entry late).
        try session.run("\(store).SetPermission devices true camera '' \"['ask']\"")
        try session.answerDialogs("1")
        let refused = await Self.code { try await portal.requestAccess(timeout: .seconds(60)) }
        XCTAssertEqual(refused, .permissionDenied)
        XCTAssertEqual(session.dialogs, 2)
        // Each request logged with its answer: granted twice, refused twice (stored, then in the dialog).
        let answers = log.lines.filter { !$0.hasPrefix("info: asking the Camera portal") }.map { $0.components(separatedBy: " after=").first ?? $0 }
        XCTAssertEqual(log.lines.filter { $0.hasPrefix("info: asking the Camera portal for camera access") }.count, 4, "\(log.lines)")
        XCTAssertEqual(answers, ["info: camera access granted", "info: camera access granted",
                                 "warning: camera access refused", "warning: camera access refused"], "\(log.lines)")
        // A user who does not answer: cancelling the waiting task ends the wait.
        try session.answerDialogs("hang")
        let waiting = Task { () -> MediaDevicesError? in
            do { try await CameraPortal().requestAccess(timeout: .seconds(120)) } catch { return error as? MediaDevicesError }
            return nil
        }
        let asked = Date()
        // Task.sleep, not usleep: blocking this thread would keep the waiting task from running
        // where the cooperative pool has one thread (one CPU).
        while session.dialogs < 3 && Date().timeIntervalSince(asked) < 60 { try await Task.sleep(for: .milliseconds(50)) }
        XCTAssertEqual(session.dialogs, 3, "the dialog is up")
        let cancelled = Date()
        waiting.cancel()
        let outcome = await waiting.value
        let waited = Date().timeIntervalSince(cancelled)
        XCTAssertEqual(outcome?.code, .cancelled, "\(String(describing: outcome)) after \(waited) s\n\(session.report)")
        XCTAssertLessThan(waited, 5, "the wait ended soon after the cancel")
        print("figure: Camera portal: \(session.dialogs) dialogs; granted camera \(camera.uniqueID) gave \(recorder.records.count) frames through the portal remote")
    }
}
