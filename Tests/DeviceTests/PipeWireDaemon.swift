import Foundation
import Glibc
import XCTest

/// A real PipeWire session started for the test as a desktop runs it (by `scripts/sound-server.sh`):
/// a D-Bus session bus, `pipewire`, `wireplumber` (the session manager) and `pipewire-pulse` (the
/// PulseAudio protocol server the Pulse backend talks to), with a private XDG_RUNTIME_DIR, and a
/// null sink `mdsink` loaded through pactl as on PulseAudio.
final class PipeWireDaemon: SoundServer {
    let product = "PipeWire"
    /// 20 log10(2 × 1/√2): measured +3.01 dB (-6.02 against -9.03 dBFS).
    let monoFromStereoGainDecibels = 20 * log10(2 / 2.0.squareRoot())
    fileprivate let server: SoundServerScript
    /// pipewire-pulse: what clients talk to.
    private var pulsePID: pid_t { server.processes.last!.pid }
    /// Seconds from the first process started until pactl answered.
    var startSeconds: Double { server.seconds }

    init(name: String) throws {
        server = try SoundServerScript("pipewire", directory: "\(Rig.scratch)/pipewire-\(name)")
    }

    func pactl(_ arguments: String) throws -> String { try server.pactl(arguments) }

    func pause() { Glibc.kill(pulsePID, SIGSTOP) }

    func resume() { Glibc.kill(pulsePID, SIGCONT) }

    /// SIGKILL to the whole session, pipewire-pulse first (a crashed desktop audio stack).
    func kill() { server.kill() }

    var report: String { server.report }

    /// Whether every process of the session runs and pipewire-pulse answers `pactl info`.
    var isServing: Bool {
        server.processes.allSatisfy { Glibc.kill($0.pid, 0) == 0 } && Rig.shell("PULSE_SERVER=\(server.server) pactl info").status == 0
    }

    deinit { kill() }

    /// One session for a test class: started by the first test that asks for it, started again
    /// when a test killed it (or it stopped answering), and stopped by the class's `tearDown`.
    /// A session costs 17–20 s to start in the emulated guest; most checks do not need a fresh one.
    /// (`@unchecked Sendable`: a class's static; its state is behind `lock`.)
    final class Shared: @unchecked Sendable {
        private let name: String
        private let lock = NSLock()
        private var running: PipeWireDaemon?
        private var started = 0

        init(name: String) { self.name = name }

        /// The running session, or a new one when there is none or it no longer serves (a new
        /// one also points this process's PULSE_SERVER at itself).
        func daemon() throws -> PipeWireDaemon {
            // Test methods run one at a time; the lock keeps the state consistent, and is not
            // held while a server is asked or started.
            let (current, number) = lock.withLock { (running, started + 1) }
            if let current, current.isServing {
                current.server.pointPulseClientsHere()
                return current
            }
            current?.kill()
            let fresh = try PipeWireDaemon(name: "\(name)-\(number)")
            print(String(format: "figure: PipeWire session %d of the class (dbus-daemon, pipewire, wireplumber, pipewire-pulse) answered pactl %.1f s after start",
                         number, fresh.startSeconds))
            lock.withLock { running = fresh; started = number }
            return fresh
        }

        /// Kills the session, if one runs.
        func stop() {
            let stopping = lock.withLock {
                defer { running = nil }
                return running
            }
            stopping?.kill()
        }
    }
}
