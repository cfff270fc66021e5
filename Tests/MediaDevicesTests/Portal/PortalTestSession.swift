import Foundation
import MediaDevices
import Synchronization
import XCTest

/// A headless Wayland session with the ScreenCast portal for one test, started with the
/// project's `scripts/wayland-session start DIR` (sway, PipeWire, wireplumber,
/// xdg-desktop-portal-wlr, xdg-desktop-portal as an unprivileged user; usable by root) and
/// stopped by `stop()`. A machine without it fails the test, saying what to run: these tests
/// never skip.
final class PortalTestSession {
    /// How the portal of the session answers.
    enum Mode {
        /// A working ScreenCast portal that shares HEADLESS-1 without asking.
        case normal
        /// No xdg-desktop-portal-wlr: the portal has no ScreenCast interface.
        case noScreenCast
        /// Every SelectSources is answered "cancelled by the user".
        case cancel
    }

    /// The session's directory (env, background.png, logs/).
    let directory: String
    /// What a client exports (DBUS_SESSION_BUS_ADDRESS, WAYLAND_DISPLAY, …).
    let environment: [String: String]
    /// Seconds `start` took.
    let startupSeconds: Double

    /// The session bus's address.
    var busAddress: String { environment["DBUS_SESSION_BUS_ADDRESS"] ?? "" }
    /// The picture on the screen (640x480).
    var backgroundPNGPath: String { directory + "/background.png" }
    /// xdg-desktop-portal-wlr's log.
    var portalBackendLog: String { directory + "/logs/xdg-desktop-portal-wlr.log" }

    private static var script: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../../scripts/wayland-session")
            .standardized.path
    }

    /// Starts a session in a new temporary directory.
    init(_ mode: Mode = .normal) throws {
        directory = NSTemporaryDirectory() + "mediadevices-portal-\(getpid())-\(UUID().uuidString.prefix(8))"
        var arguments = ["start", directory]
        switch mode {
        case .normal: break
        case .noScreenCast: arguments.append("--no-screencast")
        case .cancel: arguments.append("--cancel")
        }
        let started = Date()
        try PortalTestSession.run(arguments)
        startupSeconds = Date().timeIntervalSince(started)
        let text = try String(contentsOfFile: directory + "/env", encoding: .utf8)
        var environment: [String: String] = [:]
        for line in text.split(separator: "\n") {
            guard let equals = line.firstIndex(of: "=") else { continue }
            environment[String(line[..<equals])] = String(line[line.index(after: equals)...])
        }
        self.environment = environment
    }

    /// Shows a solid colour (`"#00ff00"`); returns once the screen shows it.
    func setBackground(color: String) throws { try PortalTestSession.run(["bg", directory, color]) }

    /// Shows the background picture again (swaybg is restarted: the output is redrawn).
    func redrawBackground() throws { try PortalTestSession.run(["bg", directory, "picture"]) }

    /// Initializes `source`, redrawing the screen every second until it has its first
    /// picture. xdg-desktop-portal-wlr sends a picture only when the output is redrawn; its
    /// first one, sent as the stream starts, is lost when it precedes the consumer's link
    /// (PipeWire gives it to no one), and an idle headless output is never redrawn by itself.
    /// Returns the seconds initialization took and how many redraws it needed.
    @discardableResult
    func initializeWhileRedrawing(_ source: ScreenSource, redraw: () throws -> Void = {}) throws -> (seconds: Double, redraws: Int) {
        let failure = Mutex<(any Error)?>(nil)
        let done = DispatchSemaphore(value: 0)
        let started = Date()
        Thread.detachNewThread {
            do { try source.initialize() } catch { failure.withLock { $0 = error } }
            done.signal()
        }
        var redraws = 0
        while done.wait(timeout: .now() + 1) == .timedOut {
            redraws += 1
            try redrawBackground()
        }
        if let error = failure.withLock({ $0 }) { throw error }
        return (Date().timeIntervalSince(started), redraws)
    }

    /// Ends one process of the session (`xdg-desktop-portal-wlr`, `pipewire`, …, as `pids`
    /// names them) with SIGTERM.
    func terminate(_ component: String) throws {
        let lines = try String(contentsOfFile: directory + "/pids", encoding: .utf8).split(separator: "\n")
        guard let line = lines.first(where: { $0.hasPrefix(component + " ") }), let pid = Int32(line.split(separator: " ")[1]) else {
            throw PortalTestError("no \(component) in \(directory)/pids")
        }
        guard Glibc.kill(pid, SIGTERM) == 0 else { throw PortalTestError("kill \(component) (\(pid)) failed: errno \(errno)") }
    }

    /// Runs `swaymsg ARGUMENTS…` against the session's sway.
    func swaymsg(_ arguments: String...) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/swaymsg")
        process.arguments = ["-s", environment["SWAYSOCK"] ?? ""] + arguments
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw PortalTestError("swaymsg \(arguments.joined(separator: " ")) failed with status \(process.terminationStatus)")
        }
    }

    /// Stops every process of the session.
    func stop() { try? PortalTestSession.run(["stop", directory]) }

    /// The lines of xdg-desktop-portal-wlr's log.
    func backendLogLines() -> [Substring] {
        ((try? String(contentsOfFile: portalBackendLog, encoding: .utf8)) ?? "").split(separator: "\n")
    }

    private static func run(_ arguments: [String]) throws {
        guard FileManager.default.isExecutableFile(atPath: script) else {
            throw PortalTestError("\(script) is missing: the portal tests need the headless Wayland session script")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: script)
        process.arguments = arguments
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let message = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw PortalTestError("wayland-session \(arguments.joined(separator: " ")) failed (status \(process.terminationStatus)): "
                                  + String(decoding: message, as: UTF8.self) + " (run `scripts/wayland-session setup` as root once)")
        }
    }
}

/// A failure of the portal tests' environment.
struct PortalTestError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
