import Foundation
import MediaDevices
import Synchronization

/// What the portal tests need of a `WaylandSession` beyond starting and stopping it: the bus
/// address, xdg-desktop-portal-wlr's log, redraws, sway commands, ending one component.
extension WaylandSession {
    /// The session bus's address (`DBUS_SESSION_BUS_ADDRESS`).
    var busAddress: String { environment["DBUS_SESSION_BUS_ADDRESS"] ?? "" }

    /// The lines of xdg-desktop-portal-wlr's log.
    func backendLogLines() -> [Substring] {
        let path = directory.appendingPathComponent("logs/xdg-desktop-portal-wlr.log").path
        return ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n")
    }

    /// Initializes `source`, showing the background picture again every second until it has its
    /// first picture. xdg-desktop-portal-wlr sends a picture only when the output is redrawn;
    /// its first one, sent as the stream starts, is lost when it comes before the consumer's
    /// link is ready (PipeWire hands it to no one, and xdpw does not answer RequestProcess), and
    /// an idle headless output is never redrawn by itself. Returns the seconds initialization
    /// took and how many redraws it needed.
    @discardableResult
    func initializeWhileRedrawing(_ source: ScreenSource) throws -> (seconds: Double, redraws: Int) {
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
            try showBackgroundPicture()
        }
        if let error = failure.withLock({ $0 }) { throw error }
        return (Date().timeIntervalSince(started), redraws)
    }

    /// Runs `swaymsg ARGUMENTS…` against the session's sway (returns at once, unlike
    /// `setBackground`).
    func swaymsg(_ arguments: String...) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/swaymsg")
        process.arguments = ["-s", environment["SWAYSOCK"] ?? ""] + arguments
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw WaylandSessionError("swaymsg \(arguments.joined(separator: " ")) failed with status \(process.terminationStatus)")
        }
    }

    /// Ends one process of the session (`xdg-desktop-portal-wlr`, `pipewire`, …, as `DIR/pids`
    /// names them) with SIGTERM.
    func terminate(_ component: String) throws {
        let lines = try String(contentsOf: directory.appendingPathComponent("pids"), encoding: .utf8).split(separator: "\n")
        guard let line = lines.first(where: { $0.hasPrefix(component + " ") }), let pid = Int32(line.split(separator: " ")[1]) else {
            throw WaylandSessionError("no \(component) in \(directory.path)/pids")
        }
        guard kill(pid, SIGTERM) == 0 else { throw WaylandSessionError("kill \(component) (\(pid)) failed: errno \(errno)") }
    }
}
