import Foundation
import Glibc
import XCTest

/// A real PipeWire session started for the test as a desktop runs it: a D-Bus session bus,
/// `pipewire`, `wireplumber` (the session manager) and `pipewire-pulse` (the PulseAudio protocol
/// server the Pulse backend talks to), with a private XDG_RUNTIME_DIR, and a null sink `mdsink`
/// loaded through pactl as on PulseAudio. Bluetooth is off in wireplumber's configuration (its
/// logind monitor needs systemd-logind, which the rig has not: wireplumber would exit).
final class PipeWireDaemon: SoundServer {
    let product = "PipeWire"
    /// 20 log10(2 × 1/√2): measured +3.01 dB (-6.02 against -9.03 dBFS).
    let monoFromStereoGainDecibels = 20 * log10(2 / 2.0.squareRoot())
    let runtime: String
    /// dbus-daemon, pipewire, wireplumber, pipewire-pulse.
    private let pids: [pid_t]
    /// pipewire-pulse: what clients talk to.
    private var pulsePID: pid_t { pids[3] }
    /// Seconds from the first process started until pactl answered.
    private(set) var startSeconds: Double = 0

    init(name: String) throws {
        runtime = "\(Rig.scratch)/pipewire-\(name)"
        let environment = "HOME=\(runtime) XDG_RUNTIME_DIR=\(runtime)"
        let started = Date()
        // bash (dash takes one-digit descriptors only) first closes every descriptor above 2 that
        // it inherited from this process: pipewire and wireplumber keep what they inherit
        // (pulseaudio closes it), and one of them holding Foundation's descriptors of this spawn
        // leaves `Rig.run` waiting for ever.
        let script = "\(Rig.scratch)/pipewire-\(name).sh"
        try """
            for fd in $(ls /proc/$$/fd); do [ "$fd" -gt 2 ] && eval "exec $fd>&-"; done
            rm -rf \(runtime) && mkdir -p \(runtime) && chmod 700 \(runtime) && cd \(runtime) || exit 1
            dbus-daemon --session --fork --nopidfile --print-address=3 --print-pid=4 3>bus 4>dbus.pid </dev/null >dbus.log 2>&1 || exit 1
            export \(environment) DBUS_SESSION_BUS_ADDRESS=$(cat bus)
            pipewire </dev/null >pipewire.log 2>&1 & echo $! >pipewire.pid
            mkdir -p .config/wireplumber/bluetooth.lua.d
            echo '-- off: its logind monitor needs systemd-logind, and wireplumber exits without it' >.config/wireplumber/bluetooth.lua.d/90-enable-all.lua
            wireplumber </dev/null >wireplumber.log 2>&1 & echo $! >wireplumber.pid
            pipewire-pulse </dev/null >pipewire-pulse.log 2>&1 & echo $! >pipewire-pulse.pid
            cat dbus.pid pipewire.pid wireplumber.pid pipewire-pulse.pid

            """.write(toFile: script, atomically: true, encoding: .utf8)
        let output = try Rig.run("bash \(script)")
        pids = output.split(separator: "\n").compactMap { pid_t($0.trimmingCharacters(in: .whitespaces)) }
        guard pids.count == 4 else {
            XCTFail("PipeWire session did not start: \(output)")
            throw RigError.commandFailed("pipewire")
        }
        setenv("PULSE_SERVER", "unix:\(runtime)/pulse/native", 1)
        for _ in 0..<400 {
            if Rig.shell("PULSE_SERVER=unix:\(runtime)/pulse/native pactl info").status == 0 {
                startSeconds = Date().timeIntervalSince(started)
                _ = try pactl("load-module module-null-sink sink_name=mdsink rate=48000 channels=2")
                for _ in 0..<100 {
                    if (try? pactl("list short sources"))?.contains("mdsink.monitor") == true { return }
                    usleep(50_000)
                }
                XCTFail("PipeWire: the null sink's monitor never appeared: \(logs)")
                throw RigError.commandFailed("pactl load-module module-null-sink")
            }
            usleep(50_000)
        }
        XCTFail("pipewire-pulse did not answer within 20 s: \(logs)")
        throw RigError.commandFailed("pipewire-pulse")
    }

    /// The four processes' logs (for a failure message).
    var logs: String { Rig.shell("cd \(runtime) && tail -n 5 dbus.log pipewire.log wireplumber.log pipewire-pulse.log").output }

    func pactl(_ arguments: String) throws -> String { try Rig.run("PULSE_SERVER=unix:\(runtime)/pulse/native pactl \(arguments)") }

    func pause() { Glibc.kill(pulsePID, SIGSTOP) }

    func resume() { Glibc.kill(pulsePID, SIGCONT) }

    /// SIGKILL to the whole session, pipewire-pulse first (a crashed desktop audio stack).
    func kill() {
        for pid in pids.reversed() where pid > 0 && Glibc.kill(pid, 0) == 0 {
            Glibc.kill(pid, SIGKILL)
            var status: Int32 = 0
            waitpid(pid, &status, WNOHANG)
            for _ in 0..<100 where Glibc.kill(pid, 0) == 0 { usleep(10_000) }
        }
    }

    deinit { kill() }
}
