import Foundation
import XCTest

/// The test desktop itself (scripts/wayland-session.sh through `WaylandSession`): a root client
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

    /// The runtime directories (/run/mdsession-*) whose `owner` file names `pid`.
    private func runtimes(ownedBy pid: Int32) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/run")) ?? []
        return names.filter { $0.hasPrefix("mdsession-") }.map { "/run/" + $0 }.filter { runtime in
            let owner = (try? String(contentsOfFile: runtime + "/owner", encoding: .utf8)) ?? ""
            return owner.split(separator: " ").first == Substring("\(pid)")
        }
    }

    /// Waits up to `seconds` for `condition`.
    private func waitUntil(seconds: Double, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while !condition() {
            if Date() > deadline { return false }
            usleep(50_000)
        }
        return true
    }

    /// A run killed with SIGKILL (as a CI timeout kills a test process) cannot stop its session:
    /// the next start, or `cleanup`, stops it because its owner has ended.
    func testASessionWhoseOwnerWasKilledIsStoppedByTheNextCleanup() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("mediadevices-wayland-orphan-\(getpid())").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // The owner: a shell that starts the session and then waits, as a test process would.
        let owner = Process()
        owner.executableURL = URL(fileURLWithPath: "/bin/bash")
        owner.arguments = ["-c", "\"$0\" start \"$1\" --no-screencast && exec sleep 600", WaylandSession.script, directory]
        owner.standardInput = FileHandle.nullDevice
        owner.standardOutput = FileHandle.nullDevice
        try owner.run()
        XCTAssertTrue(waitUntil(seconds: 60) { FileManager.default.fileExists(atPath: directory + "/env") || !owner.isRunning }, "the session started")
        let runtime = try XCTUnwrap(runtimes(ownedBy: owner.processIdentifier).first, "a runtime directory names the owner \(owner.processIdentifier)")
        XCTAssertFalse(try processesUsing(runtime).isEmpty, "the session runs")
        kill(owner.processIdentifier, SIGKILL)
        owner.waitUntilExit()
        XCTAssertFalse(try processesUsing(runtime).isEmpty, "killing the owner left the session running (what the cleanup is for)")
        try WaylandSession.runScript(["cleanup"])
        XCTAssertFalse(FileManager.default.fileExists(atPath: runtime), "\(runtime) is left after cleanup")
        XCTAssertEqual(try processesUsing(runtime), [], "processes of the orphaned session outlived cleanup")
    }

    /// `run` stops its session when it is interrupted (SIGTERM, SIGINT), not only when its command ends.
    func testRunStopsItsSessionWhenTerminated() throws {
        let run = Process()
        run.executableURL = URL(fileURLWithPath: WaylandSession.script)
        run.arguments = ["run", "--no-screencast", "--", "sleep", "600"]
        run.standardInput = FileHandle.nullDevice
        run.standardOutput = FileHandle.nullDevice
        run.standardError = FileHandle.nullDevice
        try run.run()
        var runtime: String?
        XCTAssertTrue(waitUntil(seconds: 60) {
            runtime = runtimes(ownedBy: run.processIdentifier).first
            return runtime.map { ((try? processesUsing($0)) ?? []).contains { pid in
                (try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8))?.hasPrefix("xdg-desktop-por") ?? false } } ?? false
        }, "the session started")
        let started = try XCTUnwrap(runtime)
        run.terminate()
        run.waitUntilExit()
        XCTAssertEqual(run.terminationStatus, 143, "run ends as SIGTERM asked")
        XCTAssertFalse(FileManager.default.fileExists(atPath: started), "\(started) is left after SIGTERM")
        XCTAssertEqual(try processesUsing(started), [], "processes of the session outlived SIGTERM")
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
