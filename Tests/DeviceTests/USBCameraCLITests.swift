import Foundation
import MediaDevices
import XCTest

/// `mediadevices` on the USB camera as a user runs it: list, formats, capture (MJPEG decoded to a
/// Y4M that FFmpeg reads, on the capture thread and on two threads of their own), snapshot, monitor, and a capture that ends because the camera was
/// unplugged.
final class USBCameraCLITests: XCTestCase {
    override func setUpWithError() throws { try Rig.require() }

    private func json(_ text: String) throws -> [String: Any] {
        try XCTUnwrap(JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], text)
    }

    func testListFormatsCaptureAndSnapshot() throws {
        let camera = try Rig.usbCamera()
        defer { camera.close() }
        let device = try camera.device()
        let list = try json(Rig.run("\(Rig.tool) list --json"))
        let cameras = try XCTUnwrap(list["cameras"] as? [[String: Any]])
        let listed = try XCTUnwrap(cameras.first { $0["uniqueID"] as? String == device.uniqueID }, "\(cameras)")
        XCTAssertEqual(listed["driver"] as? String, "uvcvideo")
        let formats = try json(Rig.run("\(Rig.tool) formats \(device.uniqueID) --json"))
        XCTAssertEqual((formats["formats"] as? [[String: Any]])?.map { $0["fourcc"] as? String }, ["MJPG", "YUYV"])

        let y4m = "\(Rig.scratch)/usb.y4m"
        // --timeout: the default (the frames' time plus slack, 11.3 s here) judges the emulated bus's
        // pace, not the tool: with two busy loops beside the rig only 9 of 20 720p JPEGs came in it.
        let printed = try json(Rig.run("\(Rig.tool) capture \(device.uniqueID) --format MJPG --size 1280x720 --fps 30 --output-format YU12 --frames 20 --timeout 120 --output \(y4m) --json"))
        XCTAssertEqual(printed["framesWritten"] as? Int, 20, "\(printed)")
        let probe = try Rig.run("ffprobe -v error -count_frames -select_streams v:0 -show_entries stream=width,height,pix_fmt,nb_read_frames -of csv=p=0 \(y4m)")
        XCTAssertEqual(probe.trimmingCharacters(in: .whitespacesAndNewlines), "1280,720,yuv420p,20")

        // The same decoded on two threads of their own (ParallelConvertingConsumer): every frame
        // written, in a file FFmpeg reads, and the tool says how many each way.
        let parallel = "\(Rig.scratch)/usb-parallel.y4m"
        let said = try Rig.run("\(Rig.tool) capture \(device.uniqueID) --format MJPG --size 1280x720 --fps 30 --output-format YU12 --convert-threads 2 --frames 20 --timeout 120 --output \(parallel)")
        XCTAssertTrue(said.contains("wrote 20 frames of YU12 1280x720 converted from MJPEG 1280x720"), said)
        XCTAssertNotNil(said.range(of: #"converted on 2 threads: \d+ frames, \d+ dropped while every thread was busy, 0 corrupt"#, options: .regularExpression), said)
        let parallelProbe = try Rig.run("ffprobe -v error -count_frames -select_streams v:0 -show_entries stream=width,height,pix_fmt,nb_read_frames -of csv=p=0 \(parallel)")
        XCTAssertEqual(parallelProbe.trimmingCharacters(in: .whitespacesAndNewlines), "1280,720,yuv420p,20")

        let png = "\(Rig.scratch)/usb.png"
        try Rig.run("\(Rig.tool) snapshot \(device.uniqueID) --format MJPG --size 640x480 --output \(png)")
        let size = try Rig.run("ffprobe -v error -show_entries stream=width,height -of csv=p=0 \(png)")
        XCTAssertEqual(size.trimmingCharacters(in: .whitespacesAndNewlines), "640,480")
        print("figure: USB camera CLI: list/formats by uniqueID, capture MJPEG 1280x720 -> Y4M (ffprobe: \(probe.trimmingCharacters(in: .whitespacesAndNewlines))), snapshot 640x480 PNG")
    }

    func testCaptureEndsWithDisconnectedWhenTheCameraIsUnplugged() throws {
        let camera = try Rig.usbCamera()
        defer { camera.close() }
        let device = try camera.device()
        let output = "\(Rig.scratch)/unplugged.y4m", printed = "\(Rig.scratch)/unplugged.json"
        let capture = try Rig.spawn([Rig.tool, "capture", device.uniqueID, "--format", "YUYV", "--size", "320x240", "--frames", "100000",
                                     "--timeout", "600", "--output", output, "--json"], output: printed, errors: "\(Rig.scratch)/unplugged.err")
        defer { if capture.isRunning { capture.terminate() } }
        // Wait until frames are being written, then pull the cable. The file is written under a
        // temporary name beside its path (`.unplugged.y4m.XXXXXX`) until the capture ends.
        func written() -> Int {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: Rig.scratch)) ?? []
            return names.filter { $0.hasPrefix(".unplugged.y4m.") }.map { Rig.fileSize("\(Rig.scratch)/\($0)") }.max() ?? 0
        }
        for _ in 0..<900 { guard written() < 320 * 240 * 2 * 3 && capture.isRunning else { break }; usleep(100_000) }
        XCTAssertTrue(capture.isRunning, "the CLI captures: \(Rig.shell("cat \(Rig.scratch)/unplugged.err").output)")
        camera.unplug()
        XCTAssertTrue(Rig.wait(for: capture, seconds: 10), "the CLI ended within 10 s of the unplug")
        XCTAssertNotEqual(capture.terminationStatus, 0)
        let result = try json(String(contentsOfFile: printed, encoding: .utf8))
        let error = try XCTUnwrap(result["error"] as? [String: Any], "\(result)")
        XCTAssertEqual(error["code"] as? String, "disconnected", "\(result)")
        print("figure: USB camera CLI capture unplugged: \(error["message"] as? String ?? "")")
    }

    func testMonitorPrintsTheCameraGoingAndComing() throws {
        let camera = try Rig.usbCamera()
        defer { camera.close() }
        let device = try camera.device()
        let out = "\(Rig.scratch)/usb-monitor.json", err = "\(Rig.scratch)/usb-monitor.err"
        let monitor = try Rig.spawn([Rig.tool, "monitor", "--json", "--kinds", "camera", "--count", "2", "--timeout", "120"], output: out, errors: err)
        defer { if monitor.isRunning { monitor.terminate() } }
        for _ in 0..<600 { guard !((try? String(contentsOfFile: err, encoding: .utf8))?.contains("listening") ?? false) else { break }; usleep(50_000) }
        camera.unplug()
        try camera.replug()
        _ = try camera.device()
        XCTAssertTrue(Rig.wait(for: monitor, seconds: 60), "monitor ended after two events")
        let lines = try String(contentsOfFile: out, encoding: .utf8).split(separator: "\n")
        let objects = try lines.map { try json(String($0)) }
        XCTAssertEqual(objects.map { $0["action"] as? String }, ["removed", "added"], "\(lines)")
        XCTAssertEqual(objects.map { $0["uniqueID"] as? String }, [device.uniqueID, device.uniqueID])
    }
}
