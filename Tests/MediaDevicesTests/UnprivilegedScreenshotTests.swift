import Foundation
import XCTest

/// A screen shared without root: `mediadevices screenshot` run as an unprivileged user, with no
/// capabilities, gives the picture on the screen pixel for pixel, on an X server (Xvfb, as
/// `nobody`) and through the Wayland portal (a headless sway, as the session's own user).
final class UnprivilegedScreenshotTests: XCTestCase {
    func testAnUnprivilegedUserGrabsAnX11ScreenPixelExact() throws {
        let server = try XvfbServer(width: 640, height: 480)
        defer { server.stop() }
        let client = try X11TestClient(display: server.display)
        client.draw((0, 0, 640, 480), X11TestClient.pattern)
        let directory = try ToolRun.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let picture = directory + "/x11.png"
        let printed = try ToolRun.run(["screenshot", "--backend", "x11", "--output", picture], as: ("nobody", "nogroup"),
                                       environment: ["DISPLAY": server.display])
        XCTAssertTrue(printed.contains("wrote 640x480 PNG"), printed)
        let owner = try FileManager.default.attributesOfItem(atPath: picture)[.ownerAccountName] as? String
        XCTAssertEqual(owner, "nobody", "written by the unprivileged user")
        let shot = try ToolRun.rgb(picture)
        XCTAssertEqual(shot.width, 640)
        XCTAssertEqual(shot.height, 480)
        var differing = 0
        for y in 0..<shot.height {
            for x in 0..<shot.width {
                let expected = X11TestClient.pattern(x: x, y: y), at = (y * shot.width + x) * 3
                let got = UInt32(shot.pixels[at]) << 16 | UInt32(shot.pixels[at + 1]) << 8 | UInt32(shot.pixels[at + 2])
                if got != expected { differing += 1 }
            }
        }
        XCTAssertEqual(differing, 0, "pixels that differ from the drawn pattern")
    }

    func testTheWaylandSessionsUserSharesTheScreenThroughThePortalPixelExact() throws {
        let session = try WaylandSession()
        defer { try? session.stop() }
        let directory = try ToolRun.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let picture = directory + "/portal.png"
        let background = try ToolRun.rgb(session.backgroundPNGPath)
        // A redraw while the tool waits for its first picture shows sway's grey for a moment,
        // which the screenshot may catch: then take another.
        var differing = -1
        for attempt in 1...3 where differing != 0 {
            let printed = try ToolRun.run(["screenshot", "--backend", "portal", "--output", picture],
                                          as: (WaylandSession.user, WaylandSession.user), environment: session.environment) {
                try session.showBackgroundPicture()
            }
            XCTAssertTrue(printed.contains("wrote 640x480 PNG of monitor"), printed)
            let shot = try ToolRun.rgb(picture)
            differing = shot.pixels.count == background.pixels.count ? zip(shot.pixels, background.pixels).filter { $0 != $1 }.count : shot.pixels.count
            if differing != 0 { print("screenshot \(attempt): \(differing) bytes differ from the background (a redraw's grey?)") }
        }
        XCTAssertEqual(differing, 0, "the screenshot is the background")
        let owner = try FileManager.default.attributesOfItem(atPath: picture)[.ownerAccountName] as? String
        XCTAssertEqual(owner, WaylandSession.user, "written by the session's unprivileged user")
    }
}
