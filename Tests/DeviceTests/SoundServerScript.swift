import Foundation
import Glibc
import XCTest

/// A sound server started by `scripts/sound-server.sh` (the script the audio benchmark uses too):
/// its socket, its processes and how long it took to answer.
struct SoundServerScript {
    /// `unix:PATH`, for PULSE_SERVER.
    let server: String
    /// The processes started, in order; the last is the one clients talk to.
    let processes: [(name: String, pid: pid_t)]
    /// Seconds from the first process started until pactl answered.
    let seconds: Double
    /// The server's HOME and XDG_RUNTIME_DIR, with its processes' logs.
    let directory: String

    /// Starts `kind` (`pulseaudio` or `pipewire`) in `directory` and points this process's
    /// PULSE_SERVER at it; fails the test with the script's report when it does not come up.
    init(_ kind: String, directory: String) throws {
        let result = Rig.shell("\(Rig.script("sound-server.sh")) \(kind) \(directory)")
        var server: String?, processes: [(String, pid_t)] = [], seconds = 0.0
        for line in result.output.split(separator: "\n") {
            let words = line.split(separator: " ").map(String.init)
            switch words.first {
            case "server" where words.count == 2: server = words[1]
            case "pid" where words.count == 3: if let pid = pid_t(words[2]) { processes.append((words[1], pid)) }
            case "seconds" where words.count == 2: seconds = Double(words[1]) ?? 0
            default: break
            }
        }
        guard result.status == 0, let server, !processes.isEmpty else {
            XCTFail("\(kind) did not start (scripts/sound-server.sh exit \(result.status)): \(result.errors)\(result.output)")
            throw RigError.commandFailed("sound-server \(kind)")
        }
        self.server = server
        self.processes = processes
        self.seconds = seconds
        self.directory = directory
        pointPulseClientsHere()
    }

    /// Points this process's PULSE_SERVER (the library's and pactl's) at this server.
    func pointPulseClientsHere() { setenv("PULSE_SERVER", server, 1) }

    /// `pactl` against this server.
    func pactl(_ arguments: String) throws -> String { try Rig.run("PULSE_SERVER=\(server) pactl \(arguments)") }

    /// Which of the processes still run, and the last lines of their logs: what a test prints
    /// when a stream on this server failed.
    var report: String {
        let alive = processes.map { "\($0.name) \($0.pid) \(Glibc.kill($0.pid, 0) == 0 ? "running" : "gone")" }.joined(separator: ", ")
        return "\(alive)\n" + Rig.shell("tail -n 12 \(directory)/*.log").output
    }

    /// SIGKILL to every process, the last started first, waiting until each is gone.
    func kill() {
        for (_, pid) in processes.reversed() where pid > 0 && Glibc.kill(pid, 0) == 0 {
            Glibc.kill(pid, SIGKILL)
            var status: Int32 = 0
            waitpid(pid, &status, WNOHANG)  // reaps it if it is our child; harmless otherwise
            for _ in 0..<100 { guard Glibc.kill(pid, 0) == 0 else { break }; usleep(10_000) }
        }
    }
}
