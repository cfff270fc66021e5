import Foundation
import Glibc
import MediaDevices
import XCTest

/// A sound server the Pulse backend talks to (PulseAudio itself, or PipeWire's pipewire-pulse),
/// started for one test, with a null sink `mdsink` whose monitor `mdsink.monitor` gives back
/// what is played into it; the test process reaches it through PULSE_SERVER.
protocol SoundServer: AnyObject {
    /// What the figures call it.
    var product: String { get }
    /// The level a mono stream plays into the stereo null sink and a mono stream records from
    /// its monitor gains: PulseAudio copies mono to both channels and averages them back (0 dB);
    /// PipeWire downmixes each channel at -3 dB, so a tone on both comes back 3 dB up.
    var monoFromStereoGainDecibels: Double { get }
    /// `pactl` against this server.
    func pactl(_ arguments: String) throws -> String
    /// SIGSTOP to the process clients talk to: it keeps its socket open and stops answering.
    func pause()
    /// SIGCONT after `pause()`.
    func resume()
    /// SIGKILL: the server is gone at once, as in a crash.
    func kill()
    /// Which of its processes still run, and their logs' last lines.
    var report: String { get }
}

extension SoundServer {
    /// Runs `body`; when it throws, prints the server's `report` first (a stream that never
    /// became ready says nothing of why), then throws the error on.
    func reporting<T>(_ body: () throws -> T) rethrows -> T {
        do {
            return try body()
        } catch {
            print("\(product) when the test failed (\(error)):\n\(report)")
            throw error
        }
    }
}

/// A real PulseAudio daemon started for the test (by `scripts/sound-server.sh`), with a null sink
/// whose monitor source gives back what is played into it. The test process reaches it through
/// PULSE_SERVER.
final class PulseDaemon: SoundServer {
    let product = "pulseaudio"
    let monoFromStereoGainDecibels = 0.0
    private let server: SoundServerScript
    var pid: pid_t { server.processes.last!.pid }

    init(name: String) throws {
        server = try SoundServerScript("pulseaudio", directory: "\(Rig.scratch)/pulse-\(name)")
    }

    /// `pactl` against this daemon.
    func pactl(_ arguments: String) throws -> String { try server.pactl(arguments) }

    /// Its PULSE_SERVER address, for the tools a test runs against it.
    var address: String { server.server }

    /// SIGSTOP: the server keeps its socket open and stops answering, as a hung server does.
    func pause() { Glibc.kill(pid, SIGSTOP) }

    /// SIGCONT after `pause()`.
    func resume() { Glibc.kill(pid, SIGCONT) }

    /// SIGKILL: the server is gone at once, as in a crash.
    func kill() { server.kill() }

    var report: String { server.report }

    deinit { kill() }
}

extension AudioStreamOptions {
    /// Options for a stream on the rig's sound server (or on snd-aloop beside it, which ignores
    /// the timeout): `periodFrames` × `periods` as given, and a 30 s `serverTimeout`. Under
    /// emulation with the host's two cores busy, pipewire-pulse has taken more than the library's
    /// 5 s default to accept a stream (a loaded CI run); these tests check what a connected
    /// stream does, not how fast an emulated server answers.
    static func rig(periodFrames: Int, periods: Int) -> AudioStreamOptions {
        AudioStreamOptions(periodFrames: periodFrames, periods: periods, serverTimeout: .seconds(30))
    }
}
