import Foundation
import XCTest

/// Every usage error of `mediadevices` (a bad option value, file name or size) exits 64
/// (EX_USAGE) before any device is opened, with a message that says what is wrong; errors of
/// the device or the system keep exit status 1. Runs the built tool on the host, no device.
final class CLIUsageErrorTests: XCTestCase {
    private var folder = ""

    override func setUpWithError() throws {
        folder = try ToolRun.temporaryDirectory()
    }

    override func tearDown() {
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// Runs the tool in the test's folder and checks its status and that standard error says `message`.
    private func assertFails(_ arguments: [String], status: Int32, says message: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let run = try ToolProcess.run(arguments, in: folder)
        XCTAssertEqual(run.status, status, "mediadevices \(arguments.joined(separator: " ")): \(run.errors)", file: file, line: line)
        XCTAssertTrue(run.errors.contains(message), "expected \"\(message)\" in: \(run.errors)", file: file, line: line)
    }

    func testAnOutputNameCaptureCannotWriteIsAUsageError() throws {
        try assertFails(["capture", "testpattern", "--frames", "3", "--output", "x.foo"], status: 64,
                        says: "--output x.foo: The file name decides what is written")
    }

    /// `publish` needs an output; a name after the source is `--pipewire`'s only.
    func testPublishWithoutAnOutputOrWithAStrayNameIsAUsageError() throws {
        try assertFails(["publish", "testpattern"], status: 64, says: "name where to publish: --pipewire [NAME], --v4l2loopback /dev/videoN, or both")
        try assertFails(["publish", "testpattern", "my_camera", "--v4l2loopback", "/dev/video10"], status: 64,
                        says: "only --pipewire takes a name (publish SOURCE --pipewire NAME)")
    }

    func testAnImageNameSnapshotCannotWriteIsAUsageError() throws {
        try assertFails(["snapshot", "testpattern", "--output", "x.foo"], status: 64, says: "the file name must end in .png or .jpg")
    }

    func testAFolderAsOutputIsAUsageErrorThatSaysSo() throws {
        try assertFails(["capture", "testpattern", "--frames", "3", "--output", folder], status: 64,
                        says: "--output \(folder) is a folder, not a file; name a file in it, e.g. \(folder)/capture.y4m")
        try assertFails(["snapshot", "testpattern", "--output", folder + "/"], status: 64, says: "is a folder, not a file")
        try assertFails(["record", "default", "--output", folder], status: 64, says: "is a folder, not a file")
        try assertFails(["duplex", "--play", "far.wav", "--output", folder], status: 64, says: "is a folder, not a file")
    }

    func testAZeroSizeSaysWidthAndHeightMustBePositive() throws {
        try assertFails(["capture", "testpattern", "--size", "0x0", "--frames", "3", "--output", "x.y4m"], status: 64,
                        says: "--size 0x0: width and height must be positive, e.g. 640x480")
        try assertFails(["capture", "testpattern", "--output-size=-2x10", "--frames", "3", "--output", "x.y4m"], status: 64,
                        says: "width and height must be positive")
        try assertFails(["capture", "testpattern", "--size", "big", "--frames", "3", "--output", "x.y4m"], status: 64,
                        says: "--size takes WxH, e.g. 640x480 (got 'big')")
    }

    func testOtherBadValuesAreUsageErrors() throws {
        try assertFails(["capture", "testpattern", "--frames", "3", "--rotate", "90", "--output", "x.mjpeg"], status: 64,
                        says: "A .mjpeg file stores the camera's JPEG frames as they come")
        try assertFails(["capture", "testpattern", "--fps", "fast", "--output", "x.y4m"], status: 64, says: "--fps takes")
        try assertFails(["record", "default", "--seconds", "0", "--output", "x.wav"], status: 64, says: "--seconds must be positive")
        try assertFails(["monitor", "--kinds", "camera,printer"], status: 64, says: "--kinds: unknown kind \"printer\"")
        try assertFails(["orientation", "--mount-matrix", "1, 2"], status: 64, says: "is not three rows of three numbers")
        try assertFails(["orientation", "--camera", "testpattern"], status: 64, says: "the test pattern has no mounting")
        try assertFails(["capture", "testpattern", "--no-such-option", "--output", "x.y4m"], status: 64, says: "Unknown option '--no-such-option'")
    }

    /// A folder that exists but takes no new files (procfs) is not called missing: the message
    /// names the folder, says it exists and gives the system's error. Exit status 1 (the system refused).
    func testAFolderThatRefusesFilesIsNotCalledMissing() throws {
        try assertFails(["capture", "testpattern", "--frames", "3", "--output", "/proc/x.y4m"], status: 1,
                        says: "write /proc/x.y4m failed: No such file or directory (ENOENT). The folder /proc exists, but its filesystem refused to create a file in it")
        try assertFails(["capture", "testpattern", "--frames", "3", "--output", folder + "/missing/x.y4m"], status: 1,
                        says: "The folder \(folder)/missing does not exist; create it or choose another path")
    }

    /// With no screen anywhere, `screenshot` says so, what each backend found, and what to do.
    func testScreenshotWithoutScreensSaysWhatWasLookedAt() throws {
        let cards = ((try? FileManager.default.contentsOfDirectory(atPath: "/dev/dri")) ?? []).filter { $0.hasPrefix("card") }
        try XCTSkipUnless(cards.isEmpty, "this machine has a DRM card")
        let run = try ToolProcess.run(["screenshot", "--output", "s.png"], in: folder, environment: ["DISPLAY": "", "WAYLAND_DISPLAY": ""])
        XCTAssertEqual(run.status, 1, run.errors)
        XCTAssertTrue(run.errors.contains("No screen was found: no Wayland session (WAYLAND_DISPLAY is not set), no X11 display (DISPLAY is not set), no DRM card (/dev/dri/card* is missing). Run it in a desktop session"), run.errors)
        XCTAssertFalse(run.errors.contains("0 screen(s)"), run.errors)
    }

    /// Without an accelerometer, `orientation` points at what a CLI user can do, not at a library type.
    func testOrientationWithoutAnAccelerometerSaysWhatToDo() throws {
        let sensors = ((try? FileManager.default.contentsOfDirectory(atPath: "/sys/bus/iio/devices")) ?? [])
            .filter { FileManager.default.fileExists(atPath: "/sys/bus/iio/devices/\($0)/in_accel_x_raw") }
        try XCTSkipUnless(sensors.isEmpty, "this machine has an accelerometer")
        let run = try ToolProcess.run(["orientation"], in: folder)
        XCTAssertEqual(run.status, 1, run.errors)
        XCTAssertTrue(run.errors.contains("name one with --accelerometer SYSFS_DIR, or read a display's orientation (--display /dev/dri/card0) or a camera's mounting (--camera DEVICE) instead"), run.errors)
        XCTAssertFalse(run.errors.contains("FixedOrientationTracker"), run.errors)
    }

    /// Each command's help has an EXAMPLES section.
    func testEveryCommandsHelpHasExamples() throws {
        for command in ["list", "formats", "controls", "capture", "snapshot", "record", "play", "duplex", "monitor", "orientation", "screens", "screenshot"] {
            let run = try ToolProcess.run([command, "--help"], in: folder)
            XCTAssertEqual(run.status, 0, command)
            XCTAssertTrue(run.output.contains("EXAMPLES:\n  mediadevices \(command)"), "\(command) --help: \(run.output)")
        }
    }
}
