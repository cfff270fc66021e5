import Foundation
import MediaDevices
import XCTest

/// Pulling the USB camera's cable mid-stream (a real USB disconnect through vhci-hcd): the
/// callback and the frames sequence end with `.disconnected` within a second, nothing of the
/// stream stays open, and when the same camera comes back the hotplug monitor says so and the
/// source resumes.
final class USBCameraHotplugTests: XCTestCase {
    override func setUpWithError() throws { try Rig.require() }

    /// Threads of this process with the given name (`/proc/self/task/*/comm`).
    static func threads(named name: String) -> Int {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.filter {
            (try? String(contentsOfFile: "/proc/self/task/\($0)/comm", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) == name
        }.count
    }

    func testUnplugWhileStreamingEndsWithinASecondAndLeaksNothing() async throws {
        let camera = try Rig.usbCamera()
        defer { camera.close() }
        let device = try camera.device()
        // Settled (what earlier tests left closes first), without libdispatch's timer descriptor.
        let before = ProcessFigures.settled()
        let descriptors = before.accountable.count, captureThreads = Self.threads(named: "md-capture")
        let source = CameraSource(device: device, request: FormatRequest(pixelFormat: .mjpeg, size: .hd720, frameRate: FrameRate(30)))
        let log = USBFrameLog(camera: camera)
        source.consumer = log
        let frames = source.frameSequence(bufferSize: 4)
        try source.start()
        XCTAssertTrue(log.wait(for: 5, seconds: 60), "frames before the unplug")
        XCTAssertEqual(Self.threads(named: "md-capture"), captureThreads + 1, "one capture thread while streaming")
        camera.unplug(afterFrames: 5)  // the cable comes out mid-stream, between two frames' URBs

        var thrown: Error?
        do {
            for try await _ in frames {}
        } catch {
            thrown = error
        }
        let error = try XCTUnwrap(thrown as? MediaDevicesError, "the frames sequence must throw, got \(String(describing: thrown))")
        XCTAssertEqual(error.code, .disconnected, "\(error)")
        XCTAssertEqual(error.device, device.path)
        XCTAssertTrue(log.waitForStop(seconds: 5))
        XCTAssertEqual(log.stopErrors.count, 1, "the consumer hears it once")
        XCTAssertEqual(log.stopErrors.first??.code, .disconnected)
        XCTAssertFalse(camera.isPlugged)
        let latency = Double(Int64(log.stoppedAt) - Int64(camera.unplugTime)) / 1e9
        XCTAssertLessThan(latency, 1.0, "unplug to .disconnected")
        XCTAssertFalse(source.isCapturing)
        source.release()
        let after = ProcessFigures.settled()
        ProcessFigures.assertDescriptorsFlat(before, after, "every descriptor released")
        let mapped = try String(contentsOfFile: "/proc/self/maps", encoding: .utf8).split(separator: "\n").filter { $0.contains("/dev/video") }
        XCTAssertEqual(mapped, [], "no buffer still mapped (the sequence leased \(frames.leasedFrames), copied \(frames.copiedFrames), dropped \(frames.droppedFrames))")
        XCTAssertEqual(Self.threads(named: "md-capture"), captureThreads, "the capture thread is gone")
        print(String(format: "figure: USB camera unplugged mid-stream (MJPEG 1280x720): .disconnected %.0f ms after the unplug, after %d frames; fds %d before, %d after; md-capture threads %d after",
                     latency * 1000, log.count, descriptors, after.accountable.count, Self.threads(named: "md-capture")))
    }

    func testReplugIsSeenByTheMonitorAndCaptureResumes() async throws {
        let camera = try Rig.usbCamera()
        defer { camera.close() }
        let device = try camera.device()
        let monitor = try DeviceMonitor(kinds: [.camera])
        XCTAssertEqual(monitor.source, .udev, "udevd runs for the USB camera")
        let events = HotplugDeviceTests.Collector(monitor)
        let source = CameraSource(device: device, request: FormatRequest(pixelFormat: .yuyv, size: Size(width: 320, height: 240)))
        let first = FrameRecorder(target: 3)
        source.consumer = first
        try source.start()
        let firstFrames = await first.wait(seconds: 60)
        XCTAssertTrue(firstFrames)
        camera.unplug()
        let heardStop = await first.waitForStop(seconds: 10)
        XCTAssertTrue(heardStop, "the consumer hears the unplug within 10 s")
        XCTAssertEqual(first.stopError?.code, .disconnected)
        let removedEvent = await events.wait(seconds: 30, "camera removed") { $0.action == .removed }
        let removed = try XCTUnwrap(removedEvent)
        XCTAssertEqual(removed.uniqueID, device.uniqueID)

        let again = FrameRecorder(target: 3)
        source.consumer = again
        let resumer = Task { try await source.resumeWhenReconnected(timeout: .seconds(90)) }
        try camera.replug()
        let resumed = try await resumer.value
        XCTAssertTrue(resumed, "resumed on the same camera")
        let framesAgain = await again.wait(seconds: 60)
        XCTAssertTrue(framesAgain, "frames again after the replug")
        let addedEvent = await events.wait(seconds: 30, "camera added") { $0.action == .added }
        let added = try XCTUnwrap(addedEvent)
        XCTAssertEqual(added.uniqueID, device.uniqueID, "the same uniqueID comes back")
        XCTAssertEqual(source.device.uniqueID, device.uniqueID)
        print("figure: USB camera replug: monitor saw removed and added \(device.uniqueID); resumed on \(source.device.path) (was \(device.path))")
        source.stop()
        XCTAssertEqual(again.stopCount, 1, "the resumed run's consumer hears the stop, once")
        XCTAssertEqual(first.stopCount, 1)
        source.release()
        monitor.stop()
    }
}
