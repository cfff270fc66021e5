import Foundation
import Glibc
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
}

/// A real PulseAudio daemon started for the test, with a null sink whose monitor source gives
/// back what is played into it. The test process reaches it through PULSE_SERVER. Without its
/// CPU limit: on a host busy with other guests, the emulated daemon can use more than the
/// limit's share and would terminate itself ("Soft CPU time limit exhausted").
final class PulseDaemon: SoundServer {
    let product = "pulseaudio"
    let monoFromStereoGainDecibels = 0.0
    let pid: pid_t
    let runtime: String

    init(name: String) throws {
        runtime = "\(Rig.scratch)/pulse-\(name)"
        let started = try Rig.run("""
            rm -rf \(runtime) && mkdir -p \(runtime) && \
            HOME=\(runtime) XDG_RUNTIME_DIR=\(runtime) pulseaudio -n --daemonize=no --exit-idle-time=-1 --disallow-exit --no-cpu-limit \
              --use-pid-file=no --log-target=stderr --log-level=error \
              -L "module-native-protocol-unix auth-anonymous=1 socket=\(runtime)/native" \
              -L "module-null-sink sink_name=mdsink rate=48000 channels=2" </dev/null >\(runtime)/log 2>&1 &
            echo $!
            """)
        pid = pid_t(started.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        setenv("PULSE_SERVER", "unix:\(runtime)/native", 1)
        for _ in 0..<200 {
            if Rig.shell("PULSE_SERVER=unix:\(runtime)/native pactl info").status == 0 { return }
            usleep(50_000)
        }
        XCTFail("pulseaudio did not come up: \(Rig.shell("cat \(runtime)/log").output)")
        throw RigError.commandFailed("pulseaudio")
    }

    /// `pactl` against this daemon.
    func pactl(_ arguments: String) throws -> String { try Rig.run("PULSE_SERVER=unix:\(runtime)/native pactl \(arguments)") }

    /// SIGSTOP: the server keeps its socket open and stops answering, as a hung server does.
    func pause() { Glibc.kill(pid, SIGSTOP) }

    /// SIGCONT after `pause()`.
    func resume() { Glibc.kill(pid, SIGCONT) }

    /// SIGKILL: the server is gone at once, as in a crash.
    func kill() {
        guard pid > 0, Glibc.kill(pid, 0) == 0 else { return }
        Glibc.kill(pid, SIGKILL)
        var status: Int32 = 0
        waitpid(pid, &status, 0)  // reaps it if it is our child's child's orphan; harmless otherwise
        for _ in 0..<100 where Glibc.kill(pid, 0) == 0 { usleep(10_000) }
    }

    deinit { kill() }
}

