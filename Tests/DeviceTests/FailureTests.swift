import Foundation
import MediaDevices
import XCTest

/// Bad luck from the driver: dropped buffers, a stream that stops delivering, unplugging,
/// injected errors, a busy device, no
/// permission. Each gives a clear error, loses nothing and leaks nothing.
final class FailureTests: XCTestCase {
    override func setUpWithError() throws { try Rig.require() }

    func testDroppedBuffersAreCountedFromSequenceGapsAndAStallEndsWithTimeout() throws {
        let node = try Rig.loadVivid("n_devs=1")[0]
        try Rig.setControl(node, "percentage_of_dropped_buffers=50")
        let source = CameraSource(device: try CaptureDevice(path: node),
                                  request: FormatRequest(pixelFormat: .yuyv, size: Size(width: 320, height: 180), frameRate: FrameRate(25)))
        let recorder = FrameRecorder(target: 60)
        source.consumer = recorder
        try source.start()
        let finished = recorder.wait(seconds: 40)
        XCTAssertTrue(finished, "60 frames did not arrive (got \(recorder.count))")
        // Then vivid drops every buffer, streaming on: with a frameTimeout the run ends with
        // .timeout once that long passed without a frame.
        source.frameTimeout = .seconds(1)
        try Rig.setControl(node, "percentage_of_dropped_buffers=100")
        defer { try? Rig.setControl(node, "percentage_of_dropped_buffers=0") }
        let stalled = Date()
        let ended = recorder.waitForStop(seconds: 15)
        let seconds = Date().timeIntervalSince(stalled)
        XCTAssertTrue(ended, "capture ended within 15 s of the stall")
        XCTAssertFalse(source.isCapturing)
        XCTAssertEqual(recorder.stopError?.code, .timeout, "\(String(describing: recorder.stopError))")
        XCTAssertTrue("\(recorder.stopError.map { "\($0)" } ?? "")".contains("frameTimeout"), "\(String(describing: recorder.stopError))")
        print(String(format: "figure: stall (percentage_of_dropped_buffers=100), frameTimeout 1 s: .timeout %.1f s after the stall began", seconds))
        source.stop()
        let stats = source.statistics
        // What the consumer saw: the frames missing between consecutive sequence numbers
        // (serial-number arithmetic; a number that does not move on is no gap).
        let records = recorder.snapshot
        var gaps = 0, stalls = 0
        for (earlier, later) in zip(records, records.dropFirst()) {
            let step = later.sequence &- earlier.sequence
            if step == 0 || step >= 1 << 31 { stalls += 1 } else { gaps += Int(step - 1) }
        }
        XCTAssertEqual(gaps, stats.droppedFrames, "drops are the sequence gaps the consumer saw")
        XCTAssertEqual(stalls, 0, "vivid's sequence numbers only go up")
        // The fraction is vivid's coin (p = 0.5 a frame) plus its own lateness: its thread
        // numbers frames from jiffies, so a late tick skips numbers. Fourteen logged runs gave
        // 0.42–0.56; one beside two busy loops gave 0.30 (26 of 86), unexplained. The band
        // asserts that drops were counted and frames delivered, not the emulator's timing.
        let fraction = Double(stats.droppedFrames) / Double(stats.droppedFrames + stats.deliveredFrames)
        XCTAssertEqual(fraction, 0.5, accuracy: 0.35, "drops counted, and not every frame: \(stats)")
        print(String(format: "figure: percentage_of_dropped_buffers=50: %d delivered, %d dropped (%.0f%%)",
                     stats.deliveredFrames, stats.droppedFrames, fraction * 100))
    }

    func testDisconnectWhileStreamingEndsWithDisconnectedAndLeaksNothing() async throws {
        let node = try Rig.loadVivid("n_devs=1")[0]
        let before = ProcessFigures.settled()
        let source = CameraSource(device: try CaptureDevice(path: node), request: FormatRequest(pixelFormat: .yuyv, size: .vga, frameRate: FrameRate(25)))
        let recorder = FrameRecorder(target: 10)
        source.consumer = recorder
        let frames = source.frameSequence(bufferSize: 2)
        try source.start()
        let framesArrived = await recorder.wait(seconds: 20)
        XCTAssertTrue(framesArrived, "frames before the disconnect")
        try Rig.setControl(node, "disconnect=1")

        var thrown: Error?
        var afterDisconnect = 0
        do {
            for try await _ in frames { afterDisconnect += 1 }
        } catch {
            thrown = error
        }
        let error = try XCTUnwrap(thrown as? MediaDevicesError, "the frames sequence must throw, got \(String(describing: thrown))")
        XCTAssertEqual(error.code, .disconnected)
        XCTAssertEqual(error.device, node)
        XCTAssertTrue(error.description.contains("gone"), error.description)
        let heardStop = await recorder.waitForStop(seconds: 5)
        XCTAssertTrue(heardStop, "the consumer hears of it too")
        XCTAssertEqual(recorder.stopError?.code, .disconnected, "the consumer hears of it too")
        for _ in 0..<50 { guard source.isCapturing else { break }; usleep(20_000) }
        XCTAssertFalse(source.isCapturing)
        source.release()
        ProcessFigures.assertDescriptorsBack(to: before, "every descriptor released")
        let maps = try String(contentsOfFile: "/proc/self/maps", encoding: .utf8)
        XCTAssertFalse(maps.contains("/dev/video"), "no buffer of the device is still mapped")
        // The process goes on, and a new device works.
        try Rig.loadVivid("n_devs=1")
        XCTAssertFalse(CaptureDevice.scan().devices.isEmpty)
    }

    func testInjectedStreamOnErrorIsClearAndTheDeviceWorksAfterwards() throws {
        let node = try Rig.loadVivid("n_devs=1")[0]
        let before = ProcessFigures.settled()
        let source = CameraSource(device: try CaptureDevice(path: node), request: FormatRequest(pixelFormat: .yuyv, size: .vga, frameRate: FrameRate(25)))
        try source.initialize()
        try Rig.setControl(node, "inject_vidioc_streamon_error=1")
        XCTAssertThrowsError(try source.start()) { error in
            let error = error as? MediaDevicesError
            XCTAssertEqual(error?.operation, "VIDIOC_STREAMON", "the error names the ioctl: \(String(describing: error))")
            XCTAssertEqual(error?.device, node)
        }
        XCTAssertFalse(source.isCapturing)
        let recorder = FrameRecorder(target: 10)
        source.consumer = recorder
        try source.start()
        XCTAssertTrue(recorder.wait(seconds: 20), "the device streams normally after the injected error (got \(recorder.count))")
        source.release()
        ProcessFigures.assertDescriptorsBack(to: before, "descriptors after release")
    }

    func testFatalStreamingErrorEndsTheStreamWithAnIOError() throws {
        let node = try Rig.loadVivid("n_devs=1")[0]
        let before = ProcessFigures.settled()
        let source = CameraSource(device: try CaptureDevice(path: node), request: FormatRequest(pixelFormat: .yuyv, size: .vga, frameRate: FrameRate(25)))
        let recorder = FrameRecorder(target: 1_000_000)
        source.consumer = recorder
        try source.start()
        for _ in 0..<200 { guard recorder.count < 5 else { break }; usleep(50_000) }
        try Rig.setControl(node, "inject_fatal_streaming_error=1")
        XCTAssertTrue(recorder.wait(seconds: 20), "the stream must end")
        XCTAssertEqual(recorder.stopError?.code, .io, String(describing: recorder.stopError))
        source.release()
        ProcessFigures.assertDescriptorsBack(to: before, "descriptors after release")
    }

    func testBusyDeviceGivesBusy() throws {
        let node = try Rig.loadVivid("n_devs=1")[0]
        let streamer = Process()
        streamer.executableURL = URL(fileURLWithPath: "/usr/bin/v4l2-ctl")
        streamer.arguments = ["-d", node, "--stream-mmap", "--stream-count=100000", "--stream-to=/dev/null"]
        let progress = Pipe()
        streamer.standardError = progress
        try streamer.run()
        defer { streamer.terminate(); streamer.waitUntilExit() }
        // v4l2-ctl prints '<' for each dequeued buffer: once one shows, it holds the buffers.
        let first = progress.fileHandleForReading.readData(ofLength: 1)
        XCTAssertEqual(first, Data("<".utf8), "v4l2-ctl is streaming")
        let before = ProcessFigures.settled()
        let source = CameraSource(device: try CaptureDevice(path: node), request: FormatRequest(pixelFormat: .yuyv, size: .vga))
        XCTAssertThrowsError(try source.start()) { error in
            let error = error as? MediaDevicesError
            XCTAssertEqual(error?.code, .busy, String(describing: error))
            XCTAssertEqual(error?.device, node)
            XCTAssertTrue(error?.description.contains("Another process") == true, String(describing: error))
        }
        XCTAssertFalse(source.isCapturing)
        source.release()
        ProcessFigures.assertDescriptorsBack(to: before, "nothing left open after the failure")
    }

    func testNoPermissionGivesPermissionDeniedWithTheRemedy() throws {
        let node = try Rig.loadVivid("n_devs=1")[0]
        try Rig.run("chmod 0660 \(node)")
        let output = "\(Rig.scratch)/nobody.yuv"
        let (status, text, _) = Rig.shell("setpriv --reuid=65534 --regid=65534 --clear-groups \(Rig.tool) capture \(node) --frames 1 --output \(output) --json")
        XCTAssertEqual(status, 1, text)
        let object = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
        let error = try XCTUnwrap(object?["error"] as? [String: Any], text)
        XCTAssertEqual(error["code"] as? String, "permissionDenied")
        XCTAssertEqual(error["device"] as? String, node)
        let message = error["message"] as? String ?? ""
        XCTAssertTrue(message.contains("video") && message.contains("udev"), message)
        // `list` says why it shows nothing, instead of claiming there is no camera.
        let list = Rig.shell("setpriv --reuid=65534 --regid=65534 --clear-groups \(Rig.tool) list --json")
        XCTAssertEqual(list.status, 0, list.errors)
        let listed = try JSONSerialization.jsonObject(with: Data(list.output.utf8)) as? [String: Any]
        XCTAssertEqual((listed?["cameras"] as? [Any])?.count, 0)
        let skipped = try XCTUnwrap(listed?["skipped"] as? [[String: Any]], list.output)
        XCTAssertTrue(skipped.contains { $0["device"] as? String == node && $0["code"] as? String == "permissionDenied" }, list.output)
    }
}
