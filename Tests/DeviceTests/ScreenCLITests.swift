import Foundation
import MediaDevices
import TestSupport
import XCTest

/// The screen commands of `mediadevices` on bochs, checked with independent readers (ffmpeg
/// decodes the PNG and the Y4M), and the capture thread's allocations.
final class ScreenCLITests: XCTestCase {
    override func setUpWithError() throws { try Rig.require() }

    func testScreensListsTheConnectorAsJSON() throws {
        _ = try ScreenScenarios.loadDisplay("bochs")
        let printed = try Rig.run("\(Rig.tool) screens --json")
        let result = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(printed.utf8)) as? [String: Any], printed)
        let screens = try XCTUnwrap(result["screens"] as? [[String: Any]])
        XCTAssertEqual(screens.first?["connector"] as? String, "Virtual-1")
        XCTAssertEqual(screens.first?["driver"] as? String, "bochs-drm")
        XCTAssertEqual(screens.first?["monitorName"] as? String, "QEMU Monitor")
        let list = try Rig.run("\(Rig.tool) list --json")
        let listed = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(list.utf8)) as? [String: Any], list)
        XCTAssertNotNil(listed["cameras"], "the existing shape stays")
        XCTAssertEqual((listed["screens"] as? [[String: Any]])?.first?["uniqueID"] as? String, "/dev/dri/card0:Virtual-1")
    }

    func testScreenshotPNGIsThePatternAsFFmpegDecodesIt() throws {
        _ = try ScreenScenarios.loadDisplay("bochs")
        let display = try TestDisplay()
        try display.showPattern(width: 640, height: 480)
        let png = "\(Rig.scratch)/screen.png", rgb = "\(Rig.scratch)/screen.rgb"
        try Rig.run("\(Rig.tool) screenshot screen:0 --output \(png)")
        try Rig.run("ffmpeg -v error -y -i \(png) -f rawvideo -pix_fmt rgb24 \(rgb)")
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: rgb)))
        XCTAssertEqual(bytes.count, 640 * 480 * 3)
        var mismatch: String?
        for y in 0..<480 where mismatch == nil {
            for x in 0..<640 {
                let offset = (y * 640 + x) * 3
                let got = UInt32(bytes[offset]) << 16 | UInt32(bytes[offset + 1]) << 8 | UInt32(bytes[offset + 2])
                let want = TestDisplay.expected(x: x, y: y, width: 640, height: 480)
                if got != want { mismatch = String(format: "(%d, %d) is %06x, expected %06x", x, y, got, want); break }
            }
        }
        XCTAssertNil(mismatch, "the PNG is the pattern pixel for pixel")
    }

    func testCaptureScreenWritesY4MThatFFprobeReads() throws {
        _ = try ScreenScenarios.loadDisplay("bochs")
        let display = try TestDisplay()
        try display.showPattern(width: 640, height: 480)
        let output = "\(Rig.scratch)/screen.y4m"
        let printed = try Rig.run("\(Rig.tool) capture screen:0 --fps 10 --frames 8 --output \(output) --json")
        XCTAssertTrue(printed.contains("\"framesWritten\" : 8"), printed)
        let probe = try Rig.run("ffprobe -v error -count_frames -select_streams v:0 -show_entries stream=width,height,pix_fmt,nb_read_frames,r_frame_rate -of default=noprint_wrappers=1 \(output)")
        XCTAssertTrue(probe.contains("width=640") && probe.contains("height=480"), probe)
        XCTAssertTrue(probe.contains("pix_fmt=yuv420p"), probe)
        XCTAssertTrue(probe.contains("nb_read_frames=8"), probe)
        XCTAssertTrue(probe.contains("r_frame_rate=10/1"), probe)
        // The red quadrant stays red through I420: ffmpeg's RGB of pixel (40, 40) (off the grid).
        let rgb = try Data(contentsOf: URL(fileURLWithPath: try {
            let path = "\(Rig.scratch)/screen-frame.rgb"
            try Rig.run("ffmpeg -v error -y -i \(output) -frames:v 1 -f rawvideo -pix_fmt rgb24 \(path)")
            return path
        }()))
        let offset = (40 * 640 + 40) * 3
        XCTAssertGreaterThan(rgb[offset], 200, "red")
        XCTAssertLessThan(rgb[offset + 1], 60, "little green")
    }

    func testScreenCaptureAllocatesNothingPerFrame() throws {
        try Rig.requireAllocationCounting()
        let screen = try ScreenScenarios.loadDisplay("bochs")
        let display = try TestDisplay()
        try display.showPattern(width: 640, height: 480)
        let source = ScreenSource(screen: try ScreenScenarios.current(screen), frameRate: FrameRate(30))
        defer { source.release() }
        let (probe, frames) = try CaptureRuns.allocationsWithTheSequenceUnread(source, warmUp: 5, measured: 30)
        XCTAssertEqual(probe.allocations, 0, "heap allocations on the capture thread over 30 frames")
        print("figure: heap allocations on the capture thread over 30 screen grabs (640x480 XRGB8888): \(probe.allocations)")
        XCTAssertGreaterThan(frames.droppedFrames, 25)
    }
}
