import Foundation
import XCTest

/// `mediadevices screens`, `screenshot` and `capture screen:N` with `--backend portal` in a
/// headless Wayland session (`WaylandSession`), the session's environment exported to the tool
/// as a desktop would. Needs the `mediadevices` executable built beside the test bundle.
final class PortalCLITests: XCTestCase {
    private var session: WaylandSession?

    override func tearDown() {
        try? session?.stop()
        session = nil
    }

    func testScreensScreenshotAndCaptureThroughThePortal() throws {
        let session = try WaylandSession()
        self.session = session
        let listing = try run(["screens", "--backend", "portal", "--json"], in: session)
        let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(listing.utf8)) as? [String: Any])
        let screens = try XCTUnwrap(json["screens"] as? [[String: Any]])
        XCTAssertEqual(screens.count, 1, listing)
        XCTAssertEqual(screens.first?["backend"] as? String, "portal")
        XCTAssertEqual(screens.first?["uniqueID"] as? String, "portal:monitor")
        // Automatic: WAYLAND_DISPLAY is set and the portal answers.
        XCTAssertTrue(try run(["screens"], in: session).contains("[screen:0] monitor  (portal:"))

        let picture = session.directory.appendingPathComponent("shot.png").path
        let token = session.directory.appendingPathComponent("token").path
        // A redraw while the tool waits for its first picture (see `run`) shows sway's grey for a
        // moment, which the screenshot may catch: then take another.
        let background = try PortalCLITests.rgb(session.backgroundPNGPath)
        var differing = -1
        for attempt in 1...3 where differing != 0 {
            let shot = try run(["screenshot", "screen:0", "--backend", "portal", "--restore-token-file", token, "--output", picture], in: session)
            XCTAssertTrue(shot.contains("wrote 640x480 PNG of monitor"), shot)
            let pixels = try PortalCLITests.rgb(picture)
            differing = pixels.count == background.count ? zip(pixels, background).filter { $0 != $1 }.count : pixels.count
            if differing != 0 { print("screenshot \(attempt): \(differing) bytes differ from the background (a redraw's grey?)") }
        }
        XCTAssertEqual(differing, 0, "the screenshot is the background")
        XCTAssertFalse(try String(contentsOfFile: token, encoding: .utf8).isEmpty, "the restore token was kept")

        let video = session.directory.appendingPathComponent("capture.y4m").path
        let capture = try run(["capture", "screen:0", "--backend", "portal", "--restore-token-file", token, "--fps", "10",
                               "--frames", "5", "--output", video], in: session)
        XCTAssertTrue(capture.contains("wrote 5 frames"), capture)
        let header = try XCTUnwrap(FileHandle(forReadingAtPath: video)?.readData(ofLength: 64))
        XCTAssertTrue(String(decoding: header, as: UTF8.self).hasPrefix("YUV4MPEG2 W640 H480"), String(decoding: header, as: UTF8.self))
    }

    /// Runs the tool with the session's environment, showing the background picture again
    /// every second while it runs (see `WaylandSession.initializeWhileRedrawing`); returns its
    /// standard output, or throws with its standard error when it fails.
    private func run(_ arguments: [String], in session: WaylandSession) throws -> String {
        try ToolRun.run(arguments, environment: session.environment) { try session.showBackgroundPicture() }
    }

    /// The RGB pixels of a PNG.
    private static func rgb(_ path: String) throws -> [UInt8] {
        try ToolRun.rgb(path).pixels
    }
}
