import Foundation
import XCTest

/// A private headless Wayland desktop for one test: `scripts/wayland-session.sh start` into a
/// temporary directory (sway with one 640x480 output HEADLESS-1 showing a known picture,
/// PipeWire, WirePlumber, the patched xdg-desktop-portal-wlr and xdg-desktop-portal, all as the
/// user `mdsession`, usable by root), stopped by `stop()`. Start-up takes about half a second.
/// A machine without the session's packages fails the test, naming scripts/install.sh: these tests
/// never skip.
final class WaylandSession {
    /// What the ScreenCast portal does.
    enum Mode {
        /// Casts HEADLESS-1 without asking.
        case screenCast
        /// No ScreenCast backend: the portal has no `org.freedesktop.portal.ScreenCast`.
        case noScreenCast
        /// `SelectSources` is answered with response 1 (cancelled by the user).
        case cancel
        /// `SelectSources` waits for a dialog nobody answers.
        case hang
    }

    /// What a client exports to use the session: `DBUS_SESSION_BUS_ADDRESS`, `XDG_RUNTIME_DIR`,
    /// `WAYLAND_DISPLAY`, `SWAYSOCK`, `PIPEWIRE_RUNTIME_DIR`, `XDG_CURRENT_DESKTOP`,
    /// `XDG_SESSION_TYPE`.
    let environment: [String: String]
    /// The picture on the screen at start, 640x480 RGB PNG, pixel for pixel what the output shows:
    /// quadrants red, green / blue, (200,100,50), and a 32x32 one-pixel black/white checkerboard
    /// in the middle (white where x + y is odd).
    let backgroundPNGPath: String
    /// Seconds from start until the portal answered.
    let startupSeconds: Double
    /// Seconds from start until each component was ready (dbus, sway, background, pipewire,
    /// wireplumber, xdg-desktop-portal-wlr, xdg-desktop-portal, screencast, total).
    let componentStartupSeconds: [String: Double]
    /// The session's directory: env, background.png, startup, pids, logs/.
    let directory: URL
    private var running = true

    /// The unprivileged user the session runs as (the script creates it).
    static let user = "mdsession"

    /// The script, found from this file: Tests/MediaDevicesTests/Portal/ → the package root.
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("scripts/wayland-session.sh").path

    init(_ mode: Mode = .screenCast) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("mediadevices-wayland-\(UUID().uuidString)")
        var arguments = ["start", directory.path]
        switch mode {
        case .screenCast: break
        case .noScreenCast: arguments.append("--no-screencast")
        case .cancel: arguments.append("--cancel")
        case .hang: arguments.append("--hang")
        }
        do {
            try Self.runScript(arguments)
        } catch {
            try? FileManager.default.removeItem(at: directory)
            throw error
        }
        environment = try Self.keyValues(directory.appendingPathComponent("env"), separator: "=")
        let startup = try Self.keyValues(directory.appendingPathComponent("startup"), separator: " ")
        componentStartupSeconds = startup.compactMapValues(Double.init)
        startupSeconds = componentStartupSeconds["total"] ?? 0
        backgroundPNGPath = directory.appendingPathComponent("background.png").path
    }

    deinit {
        if running { try? stop() }
    }

    /// Shows a solid colour, `"#rrggbb"`, on HEADLESS-1, and returns once the screen shows it
    /// (the script compares a grim capture). Replacing the background makes sway show its own
    /// grey (#3f3f3f) for a moment: a capture sees one such frame before the colour.
    func setBackground(color: String) throws {
        try Self.runScript(["bg", directory.path, color])
    }

    /// Shows the picture of `backgroundPNGPath` again (returns once the screen shows it).
    func showBackgroundPicture() throws {
        try Self.runScript(["bg", directory.path, "picture"])
    }

    /// Plays a moving picture full screen at `fps` until the session stops (ffplay's test
    /// source: `scripts/wayland-session.sh animate`): a screen that changes all the time.
    func animate(fps: Int = 30) throws {
        try Self.runScript(["animate", directory.path, "\(fps)"])
    }

    /// Stops every process of the session, removes its runtime and temporary directories.
    func stop() throws {
        guard running else { return }
        running = false
        try Self.runScript(["stop", directory.path])
        try? FileManager.default.removeItem(at: directory)
    }

    /// Runs the script; a failure throws its standard error (which names the component and
    /// shows its log's tail, or says to run scripts/install.sh).
    static func runScript(_ arguments: [String]) throws {
        guard FileManager.default.isExecutableFile(atPath: script) else {
            throw WaylandSessionError("\(script) is missing or not executable")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: script)
        process.arguments = arguments
        let errors = Pipe()
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = errors
        try process.run()
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw WaylandSessionError("scripts/wayland-session.sh \(arguments.joined(separator: " ")) failed (status \(process.terminationStatus)): \(message)")
        }
    }

    /// `KEY<separator>VALUE` lines.
    private static func keyValues(_ file: URL, separator: Character) throws -> [String: String] {
        let text = try String(contentsOf: file, encoding: .utf8)
        var values: [String: String] = [:]
        for line in text.split(separator: "\n") {
            guard let index = line.firstIndex(of: separator) else { continue }
            values[String(line[..<index])] = String(line[line.index(after: index)...])
        }
        return values
    }
}

/// Why the test Wayland session could not be used.
struct WaylandSessionError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
