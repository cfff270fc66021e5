import Foundation
import Glibc
import XCTest

/// A real PipeWire session started for the test as a desktop runs it (by `scripts/sound-server`):
/// a D-Bus session bus, `pipewire`, `wireplumber` (the session manager) and `pipewire-pulse` (the
/// PulseAudio protocol server the Pulse backend talks to), with a private XDG_RUNTIME_DIR, and a
/// null sink `mdsink` loaded through pactl as on PulseAudio.
final class PipeWireDaemon: SoundServer {
    let product = "PipeWire"
    /// 20 log10(2 × 1/√2): measured +3.01 dB (-6.02 against -9.03 dBFS).
    let monoFromStereoGainDecibels = 20 * log10(2 / 2.0.squareRoot())
    private let server: SoundServerScript
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

    deinit { kill() }
}
