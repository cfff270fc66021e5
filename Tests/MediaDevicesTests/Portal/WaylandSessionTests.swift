import Foundation
import XCTest

/// The test desktop itself (scripts/wayland-session through `WaylandSession`): a root client
/// reaches the session's bus and the ScreenCast portal answers, or, without a backend, has no
/// ScreenCast interface; the picture is 640x480; stopping leaves nothing behind.
final class WaylandSessionTests: XCTestCase {
    /// Runs `dbus-send --print-reply ARGUMENTS` on the session's bus as this (root) process;
    /// returns its status and output.
    private func dbusSend(_ session: WaylandSession, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/dbus-send")
        process.arguments = ["--session", "--print-reply", "--dest=org.freedesktop.portal.Desktop", "/org/freedesktop/portal/desktop"] + arguments
        process.environment = ProcessInfo.processInfo.environment.merging(session.environment) { $1 }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, text)
    }

    private let versionProperty = ["org.freedesktop.DBus.Properties.Get", "string:org.freedesktop.portal.ScreenCast", "string:version"]

    func testRootReachesTheScreenCastPortalAndTheSessionStopsCleanly() throws {
        let session = try WaylandSession()
        print("wayland session ready in \(session.startupSeconds) s: \(session.componentStartupSeconds)")
        for key in ["DBUS_SESSION_BUS_ADDRESS", "XDG_RUNTIME_DIR", "WAYLAND_DISPLAY", "SWAYSOCK", "PIPEWIRE_RUNTIME_DIR"] {
            XCTAssertNotNil(session.environment[key], "env lacks \(key)")
        }
        XCTAssertGreaterThan(session.startupSeconds, 0)
        // As root, on the session user's bus: the portal's ScreenCast version (4 in Debian 12).
        let version = try dbusSend(session, versionProperty)
        XCTAssertEqual(version.status, 0, version.output)
        XCTAssertTrue(version.output.contains("uint32 4"), version.output)

        // The picture: a PNG of the output's size.
        let png = try Data(contentsOf: URL(fileURLWithPath: session.backgroundPNGPath))
        XCTAssertEqual(Array(png.prefix(8)), [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        let width = png[16..<20].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        let height = png[20..<24].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        XCTAssertEqual([width, height], [640, 480])

        try session.setBackground(color: "#00ff00")
        try session.showBackgroundPicture()

        let runtime = try XCTUnwrap(session.environment["XDG_RUNTIME_DIR"])
        try session.stop()
        XCTAssertFalse(FileManager.default.fileExists(atPath: runtime), "\(runtime) is left after stop")
        XCTAssertEqual(try processesUsing(runtime), [], "processes of the session outlived stop")
    }

    func testWithoutABackendThePortalHasNoScreenCast() throws {
        let session = try WaylandSession(.noScreenCast)
        defer { try? session.stop() }
        let ping = try dbusSend(session, ["org.freedesktop.DBus.Peer.Ping"])
        XCTAssertEqual(ping.status, 0, ping.output)
        let version = try dbusSend(session, versionProperty)
        XCTAssertNotEqual(version.status, 0)
        XCTAssertTrue(version.output.contains("org.freedesktop.DBus.Error.InvalidArgs"), version.output)
    }

    func testAMissingScriptArgumentIsAnErrorWithTheScriptsMessage() {
        XCTAssertThrowsError(try WaylandSession.runScript(["stop", "/nonexistent-wayland-session"])) { error in
            XCTAssertTrue("\(error)".contains("no session was started"), "\(error)")
        }
    }

    /// Live (not zombie) processes whose environment names `runtime` as XDG_RUNTIME_DIR.
    private func processesUsing(_ runtime: String) throws -> [Int] {
        var found: [Int] = []
        for entry in try FileManager.default.contentsOfDirectory(atPath: "/proc") {
            guard let pid = Int(entry),
                  let environ = FileManager.default.contents(atPath: "/proc/\(pid)/environ") else { continue }
            if environ.split(separator: 0).contains(where: { String(decoding: $0, as: UTF8.self) == "XDG_RUNTIME_DIR=\(runtime)" }) {
                found.append(pid)
            }
        }
        return found
    }
}
