import Foundation
import Glibc
import XCTest

/// A PipeWire camera session started for a test by `scripts/camera-session.sh` (D-Bus, pipewire,
/// wireplumber with its V4L2 and libcamera monitors), with this process's PIPEWIRE_REMOTE
/// pointed at it. Stopped by `stop()` or when dropped.
final class CameraSession {
    /// The session's directory (its runtime directory and logs).
    let directory: String
    /// The socket clients connect to.
    let remote: String
    /// Per device waited for, the camera node's global id and object.serial.
    let nodes: [String: (id: UInt32, serial: UInt64)]
    /// Seconds from start until the last node appeared.
    let seconds: Double
    /// The session bus (with `portal`: where the Camera portal is).
    let bus: String?
    private var stopped = false

    /// Starts a session in a fresh directory named `name` and waits until WirePlumber made a
    /// node for each of `devices` (V4L2 paths or libcamera ids); fails the test with the
    /// script's report when it does not. With `portal`, the Camera portal runs too, with the
    /// test Access backend (`scripts/portal-access.py`) answering as `answerDialogs` says.
    init(name: String, devices: [String], portal: Bool = false) throws {
        directory = "\(Rig.scratch)/camera-session-\(name)"
        let waits = devices.map { "--wait '\($0)'" }.joined(separator: " ") + (portal ? " --portal" : "")
        let result = Rig.shell("\(Rig.script("camera-session.sh")) start \(directory) \(waits)")
        var remote: String?, nodes: [String: (UInt32, UInt64)] = [:], seconds = 0.0, bus: String?
        for line in result.output.split(separator: "\n") {
            let words = line.split(separator: " ").map(String.init)
            switch words.first {
            case "remote" where words.count == 2: remote = words[1]
            case "bus" where words.count == 2: bus = words[1]
            case "node" where words.count >= 4:
                if let id = UInt32(words[words.count - 2]), let serial = UInt64(words[words.count - 1]) {
                    nodes[words[1..<(words.count - 2)].joined(separator: " ")] = (id, serial)
                }
            case "seconds" where words.count == 2: seconds = Double(words[1]) ?? 0
            default: break
            }
        }
        guard result.status == 0, let remote, nodes.count == devices.count else {
            XCTFail("the camera session did not start (scripts/camera-session.sh exit \(result.status)): \(result.errors)\(result.output)")
            Rig.shell("\(Rig.script("camera-session.sh")) stop \(directory)")
            throw RigError.commandFailed("camera-session start")
        }
        self.remote = remote
        self.nodes = nodes
        self.seconds = seconds
        self.bus = bus
        setenv("PIPEWIRE_REMOTE", remote, 1)
    }

    /// Runs `command` with the session's environment (PIPEWIRE_REMOTE, XDG_RUNTIME_DIR) and
    /// fails the test if it exits non-zero.
    @discardableResult
    func run(_ command: String, file: StaticString = #filePath, line: UInt = #line) throws -> String {
        try Rig.run("XDG_RUNTIME_DIR=\(directory) PIPEWIRE_REMOTE=\(remote) \(command)", file: file, line: line)
    }

    /// SIGKILL to the session's process `name` (`wireplumber`, `pipewire`), waiting until it is gone.
    func kill(_ name: String) throws {
        let pid = try Rig.run("awk '$2 == \"\(name)\" { print $3 }' \(directory)/started").trimmingCharacters(in: .whitespacesAndNewlines)
        guard let number = pid_t(pid) else { XCTFail("no \(name) in the session: \(pid)"); throw RigError.commandFailed("kill \(name)") }
        Glibc.kill(number, SIGKILL)
        for _ in 0..<200 { guard Glibc.kill(number, 0) == 0 else { break }; usleep(10_000) }
    }

    /// Starts wireplumber again (after `kill("wireplumber")`) and waits until it made a node for
    /// each of `devices`; returns their global ids and serials as `nodes` gives them.
    func startWireplumber(waitingFor devices: [String]) throws -> [String: (id: UInt32, serial: UInt64)] {
        let waits = devices.map { "--wait '\($0)'" }.joined(separator: " ")
        let output = try Rig.run("\(Rig.script("camera-session.sh")) wireplumber \(directory) \(waits)")
        var nodes: [String: (UInt32, UInt64)] = [:]
        for line in output.split(separator: "\n") {
            let words = line.split(separator: " ").map(String.init)
            if words.first == "node", words.count >= 4, let id = UInt32(words[words.count - 2]), let serial = UInt64(words[words.count - 1]) {
                nodes[words[1..<(words.count - 2)].joined(separator: " ")] = (id, serial)
            }
        }
        return nodes
    }

    /// Makes the test Access backend answer the portal's next dialogs with `response` ("0"
    /// granted, "1" refused, "hang" never).
    func answerDialogs(_ response: String) throws {
        try Rig.run("echo \(response) >\(directory)/access-response")
    }

    /// The dialogs the test Access backend answered so far.
    var dialogs: Int { Int(Rig.shell("grep -c '^AccessDialog' \(directory)/access.log").output.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0 }

    /// The last lines of the daemons' logs, for a failure message.
    var report: String { Rig.shell("tail -n 12 \(directory)/*.log").output }

    /// Stops every process of the session and unsets PIPEWIRE_REMOTE; later calls do nothing.
    func stop() {
        guard !stopped else { return }
        stopped = true
        Rig.shell("\(Rig.script("camera-session.sh")) stop \(directory)")
        unsetenv("PIPEWIRE_REMOTE")
    }

    deinit { stop() }
}
