import Foundation
@testable import MediaDevices
@testable import MediaDevicesAudio
@testable import MediaDevicesVideo
@testable import MediaDevicesCore
import XCTest

/// The X11 backend against a real Xorg (the dummy driver, 16 RandR outputs; a private server
/// per test): outputs turned on with `xrandr` are RandR monitors that the backend lists with
/// their names, places, sizes and refresh rates; each grabs what a client drew there; a mode
/// change and a move while capturing are followed. Without Xorg these tests fail (never skip).
final class XorgDummyTests: XCTestCase {
    private var server: XorgDummyServer!

    /// Test modes with exact 60 Hz timings (pixel clock / (htotal × vtotal)), added with
    /// `xrandr --newmode`: the dummy's disconnected outputs have no modes of their own.
    private static let modes = [
        ("t320", ["6", "320", "336", "384", "400", "240", "243", "246", "250"]),
        ("t480", ["12.6", "480", "496", "544", "560", "360", "363", "366", "375"]),
        ("t640", ["24", "640", "656", "752", "800", "480", "490", "492", "500"]),
    ]

    override func setUpWithError() throws {
        server = try XorgDummyServer(width: 640, height: 480)
        print("Xorg (dummy) \(server.display) started in \(String(format: "%.0f", server.startupSeconds * 1000)) ms")
        for (name, timings) in XorgDummyTests.modes { try server.xrandr(["--newmode", name] + timings) }
    }

    override func tearDown() {
        server?.stop()
        server = nil
    }

    /// Draws the reference pattern over the whole root window (`width`×`height`).
    private func drawPattern(width: Int, height: Int) throws {
        let client = try X11TestClient(display: server.display)
        client.draw((0, 0, width, height), X11TestClient.pattern)
    }

    func testSixteenOutputsAllOnAreSixteenScreensEachGrabbingWhatWasDrawnThere() throws {
        let xvfb = try XvfbServer(width: 640, height: 480)
        xvfb.stop()
        print("start-up: Xorg (dummy) \(String(format: "%.0f", server.startupSeconds * 1000)) ms, Xvfb \(String(format: "%.0f", xvfb.startupSeconds * 1000)) ms")
        let outputs = try server.xrandr(["--query"]).split(separator: "\n").compactMap { line -> String? in
            line.hasPrefix("DUMMY") ? line.split(separator: " ").first.map(String.init) : nil
        }
        XCTAssertEqual(outputs, (0..<16).map { "DUMMY\($0)" }, "the dummy driver's 16 RandR outputs")
        XCTAssertEqual(try ScreenSource.x11Screens(display: server.display).map(\.name), ["DUMMY0"], "only DUMMY0 is on at the start")

        // All 16 on, 320x240 each, in a 4x4 grid.
        var arguments = ["--fb", "1280x960"]
        for index in 0..<16 {
            try server.xrandr("--addmode", "DUMMY\(index)", "t320")
            arguments += ["--output", "DUMMY\(index)", "--mode", "t320", "--pos", "\(index % 4 * 320)x\(index / 4 * 240)"]
        }
        try server.xrandr(arguments)
        try drawPattern(width: 1280, height: 960)

        let saved = getenv("DISPLAY").map { String(cString: $0) }
        defer { if let saved { setenv("DISPLAY", saved, 1) } else { unsetenv("DISPLAY") } }
        setenv("DISPLAY", server.display, 1)
        let enumeration = ScreenSource.scan(backend: .x11)
        XCTAssertEqual(enumeration.problems.count, 0, "\(enumeration.problems)")
        XCTAssertEqual(enumeration.devices, try ScreenSource.x11Screens(display: server.display))
        let screens = enumeration.devices
        XCTAssertEqual(screens.map(\.name).sorted(), (0..<16).map { "DUMMY\($0)" }.sorted(), "\(screens)")
        for screen in screens {
            let index = try XCTUnwrap(Int(screen.name.dropFirst("DUMMY".count)))
            let frame = Rect(x: index % 4 * 320, y: index / 4 * 240, width: 320, height: 240)
            XCTAssertEqual(screen.frame, frame, screen.name)
            XCTAssertEqual(screen.backend, .x11)
            XCTAssertEqual(screen.uniqueID, "x11:\(server.display)/\(screen.name)")
            XCTAssertEqual(screen.mode?.size, Size(width: 320, height: 240), screen.name)
            XCTAssertEqual(screen.mode?.refreshRate, FrameRate(60), "6 MHz / (400 × 250): \(screen.name)")
            let source = ScreenSource(screen: screen)
            defer { source.release() }
            let bad = try source.grabFrame { frame in
                XCTAssertEqual(frame.format.size, Size(width: 320, height: 240))
                return pixelMismatches(frame) { x, y in X11TestClient.pattern(x: x + index % 4 * 320, y: y + index / 4 * 240) }
            }
            XCTAssertTrue(bad.isEmpty, "\(screen.name): first differences: \(bad)")
        }
    }

    func testAnOutputTurnedOnRightOfDUMMY0IsAScreenThere() throws {
        try server.xrandr("--addmode", "DUMMY1", "t480")
        try server.xrandr("--output", "DUMMY1", "--mode", "t480", "--right-of", "DUMMY0")
        try drawPattern(width: 640 + 480, height: 480)
        let screens = try ScreenSource.x11Screens(display: server.display)
        XCTAssertEqual(screens.map(\.name), ["DUMMY0", "DUMMY1"])
        let screen = try XCTUnwrap(screens.last)
        XCTAssertEqual(screen.frame, Rect(x: 640, y: 0, width: 480, height: 360))
        XCTAssertEqual(screen.mode?.refreshRate, FrameRate(60))
        XCTAssertEqual(try X11ScreenGrabber(screen: screen, region: nil, showsCursor: false).sharing, .memfd,
                       "Xorg speaks MIT-SHM 1.2 over a Unix socket: a memfd by default")
        for sharing in X11SharedMemory.Sharing.allCases {
            let grabber = try X11ScreenGrabber(screen: screen, region: nil, showsCursor: false, sharing: sharing)
            XCTAssertEqual(try grabber.grab(timestamp: MonotonicInstant(nanoseconds: 0), sequence: 0, onlyIfChanged: false) { frame in
                let bad = pixelMismatches(frame) { x, y in X11TestClient.pattern(x: x + 640, y: y) }
                XCTAssertTrue(bad.isEmpty, "\(sharing): first differences: \(bad)")
            }, .delivered)
        }
    }

    func testAModeChangeAndAMoveWhileCapturingAreFollowed() throws {
        // A fixed framebuffer (`--fb` on every change), so the drawn pattern stays put.
        try server.xrandr("--addmode", "DUMMY1", "t320")
        try server.xrandr("--addmode", "DUMMY1", "t640")
        try server.xrandr("--addmode", "DUMMY1", "t480")
        try server.xrandr("--fb", "1280x960", "--output", "DUMMY1", "--mode", "t320", "--pos", "640x0")
        try drawPattern(width: 1280, height: 960)
        let screen = try XCTUnwrap(try ScreenSource.x11Screens(display: server.display).first { $0.name == "DUMMY1" })
        XCTAssertEqual(screen.frame, Rect(x: 640, y: 0, width: 320, height: 240))
        let source = ScreenSource(screen: screen, frameRate: FrameRate(60))
        defer { source.release() }
        // Each frame against the pattern where the monitor lies for its size.
        let places = [Size(width: 320, height: 240): (640, 0), Size(width: 640, height: 480): (640, 0), Size(width: 480, height: 360): (0, 480)]
        let frames = CheckedFrames { frame in
            guard let (left, top) = places[frame.format.size] else { return false }
            return pixelMismatches(frame) { x, y in X11TestClient.pattern(x: x + left, y: y + top) }.isEmpty
        }
        source.consumer = frames
        try source.start()
        try wait("the first frame") { source.statistics.deliveredFrames >= 1 }
        try server.xrandr("--fb", "1280x960", "--output", "DUMMY1", "--mode", "t640")
        try wait("a frame in the new mode") { frames.sizes.contains(Size(width: 640, height: 480)) }
        try server.xrandr("--fb", "1280x960", "--output", "DUMMY1", "--mode", "t480", "--pos", "0x480")
        try wait("a frame in the next mode at the new place") { frames.sizes.contains(Size(width: 480, height: 360)) }
        source.stop()
        let results = frames.results.withLock { $0 }
        print("frames per size: \(Dictionary(grouping: results, by: \.size).mapValues(\.count)), statistics: \(source.statistics)")
        XCTAssertEqual(results.first?.size, Size(width: 320, height: 240))
        XCTAssertTrue(results.allSatisfy(\.matches), "every frame equals the pattern where the monitor lies: \(results.filter { !$0.matches })")
        XCTAssertNil(frames.stopError.withLock { $0 })
        XCTAssertEqual(try ScreenSource.x11Screens(display: server.display).first { $0.name == "DUMMY1" }?.frame,
                       Rect(x: 0, y: 480, width: 480, height: 360))
    }

    /// Polls `condition` for up to 20 s (a busy machine); fails naming `what`.
    private func wait(_ what: String, _ condition: () -> Bool) throws {
        let deadline = Date().addingTimeInterval(20)
        while !condition() {
            if Date() > deadline { throw XvfbError("timed out waiting for: \(what)") }
            usleep(5_000)
        }
    }
}
