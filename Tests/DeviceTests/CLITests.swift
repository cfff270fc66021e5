import Foundation
import XCTest

/// `mediadevices capture` against vivid: what it writes is what ffprobe reads back.
final class CLITests: XCTestCase {
    override func setUpWithError() throws { try Rig.require() }

    func testCaptureWritesY4MThatFFprobeReads() throws {
        try Rig.loadVivid("n_devs=1")
        let output = "\(Rig.scratch)/vivid.y4m"
        let printed = try Rig.run("\(Rig.tool) capture 0 --format YU12 --size 640x480 --fps 24 --frames 20 --output \(output) --json")
        let result = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(printed.utf8)) as? [String: Any], printed)
        XCTAssertEqual(result["container"] as? String, "y4m")
        XCTAssertEqual(result["framesWritten"] as? Int, 20)
        let rate = try XCTUnwrap(result["frameRate"] as? [String: Int])
        XCTAssertEqual(rate, ["numerator": 15, "denominator": 1], "24 fps is not offered at 640x480: 15 is the best at or below")
        let adjustments = try XCTUnwrap(result["adjustments"] as? [[String: String]])
        XCTAssertEqual(adjustments.map { $0["field"] }, ["frameRate"])
        let stats = try XCTUnwrap(result["statistics"] as? [String: Any])
        XCTAssertGreaterThanOrEqual(stats["deliveredFrames"] as? Int ?? 0, 20)
        // Read on the capture thread, each frame is released before the next is dequeued, so the
        // frames go on lease; a frame is copied only when a lease would leave the driver too few
        // buffers, which a busy host can cause (2 of 12 at 60 fps beside two busy loops). Every
        // frame is one or the other.
        let sequence = try XCTUnwrap(result["sequence"] as? [String: Int], printed)
        XCTAssertGreaterThanOrEqual(sequence["leasedFrames"] ?? 0, 1, printed)
        XCTAssertGreaterThanOrEqual((sequence["leasedFrames"] ?? 0) + (sequence["copiedFrames"] ?? 0), 20, printed)
        let probe = try Rig.run("ffprobe -v error -count_frames -select_streams v:0 -show_entries stream=width,height,pix_fmt,nb_read_frames,r_frame_rate -of default=noprint_wrappers=1 \(output)")
        XCTAssertTrue(probe.contains("width=640") && probe.contains("height=480"), probe)
        XCTAssertTrue(probe.contains("pix_fmt=yuv420p"), probe)
        XCTAssertTrue(probe.contains("nb_read_frames=20"), probe)
        XCTAssertTrue(probe.contains("r_frame_rate=15/1"), probe)
    }

    /// `--direct` writes on the capture thread; with output options the converted frames are
    /// written (YUYV from the device, I420 square in the file).
    func testDirectCaptureWritesConvertedFrames() throws {
        try Rig.loadVivid("n_devs=1")
        let output = "\(Rig.scratch)/vivid-direct.y4m"
        let printed = try Rig.run("\(Rig.tool) capture 0 --format YUYV --size 640x480 --fps 25 --direct --output-size 240x240 --frames 12 --output \(output)")
        XCTAssertTrue(printed.contains("wrote 12 frames of YU12 240x240 converted from YUYV 640x480"), printed)
        let probe = try Rig.run("ffprobe -v error -count_frames -select_streams v:0 -show_entries stream=width,height,nb_read_frames -of default=noprint_wrappers=1 \(output)")
        XCTAssertTrue(probe.contains("width=240") && probe.contains("height=240") && probe.contains("nb_read_frames=12"), probe)
    }

    func testCaptureWritesRawFramesOfTheNegotiatedSize() throws {
        try Rig.loadVivid("n_devs=1")
        let output = "\(Rig.scratch)/vivid.yuyv"
        let printed = try Rig.run("\(Rig.tool) capture /dev/video0 --format YUYV --size 320x180 --frames 12 --output \(output)")
        XCTAssertTrue(printed.contains("ffplay -f rawvideo -pixel_format yuyv422 -video_size 320x180"), printed)
        // "sequence: N frames on lease, M copied (…)": every frame one or the other, and leased
        // first (a busy host may make the driver short of buffers later, and a frame is copied).
        let onLease = try XCTUnwrap(printed.split(separator: "\n").first { $0.hasPrefix("sequence: ") }, printed)
        let counts = onLease.split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) }
        XCTAssertTrue(onLease.hasSuffix("copied (a lease would have left the driver too few buffers)"), printed)
        XCTAssertEqual(counts.count, 2, printed)
        XCTAssertGreaterThanOrEqual(counts.first ?? 0, 1, printed)
        XCTAssertGreaterThanOrEqual(counts.reduce(0, +), 12, printed)
        let size = try FileManager.default.attributesOfItem(atPath: output)[.size] as? Int
        XCTAssertEqual(size, 12 * 320 * 180 * 2)
        // The printed line, run as ffprobe, reads the file back: its options are the right ones.
        let line = try XCTUnwrap(printed.split(separator: "\n").first { $0.contains("ffplay ") }, printed)
        let arguments = try XCTUnwrap(line.range(of: "ffplay ").map { line[$0.upperBound...] })
        let probed = try Rig.run("ffprobe -v error -count_frames -select_streams v:0 -show_entries stream=width,height,pix_fmt,nb_read_frames -of csv=p=0 \(arguments)")
        XCTAssertEqual(probed.trimmingCharacters(in: .whitespacesAndNewlines), "320,180,yuyv422,12", "ffprobe with the printed options")
    }

    /// `--off-thread` writes from a task of its own through the bounded queue (the default reads
    /// on the capture thread): the same frames, as many, with the queue's drops reported.
    func testOffThreadCaptureWritesTheSameFrames() throws {
        try Rig.loadVivid("n_devs=1")
        let output = "\(Rig.scratch)/vivid-off-thread.yuyv"
        let printed = try Rig.run("\(Rig.tool) capture /dev/video0 --format YUYV --size 320x180 --fps 25 --off-thread --queue 4 --frames 12 --output \(output)")
        XCTAssertTrue(printed.contains("wrote 12 frames of YUYV 320x180"), printed)
        XCTAssertTrue(printed.contains("(queue)"), "reports queue drops: \(printed)")
        let size = try FileManager.default.attributesOfItem(atPath: output)[.size] as? Int
        XCTAssertEqual(size, 12 * 320 * 180 * 2)
        let probed = try Rig.run("ffprobe -v error -count_frames -f rawvideo -pixel_format yuyv422 -video_size 320x180 -select_streams v:0 -show_entries stream=nb_read_frames -of csv=p=0 \(output)")
        XCTAssertEqual(probed.trimmingCharacters(in: .whitespacesAndNewlines), "12")
    }

    func testUnknownDeviceAndUnofferedFormatAreClearErrors() throws {
        try Rig.loadVivid("n_devs=1")
        let missing = Rig.shell("\(Rig.tool) formats 7 --json")
        XCTAssertEqual(missing.status, 1)
        XCTAssertTrue(missing.output.contains("\"code\" : \"notFound\""), missing.output)
        let unoffered = Rig.shell("\(Rig.tool) capture 0 --format MJPG --frames 1 --output \(Rig.scratch)/x.y4m --json")
        XCTAssertEqual(unoffered.status, 1)
        XCTAssertTrue(unoffered.output.contains("\"code\" : \"unsupportedFormat\""), unoffered.output)
        XCTAssertTrue(unoffered.output.contains("YUYV"), "names what is offered: \(unoffered.output)")
    }
}
