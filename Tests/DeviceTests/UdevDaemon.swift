import Foundation

/// A real systemd-udevd inside the rig for as long as a test needs one: device links
/// (`/dev/v4l/by-id`, ...), rules, and udevd's events instead of the kernel's. It runs as our
/// child, without pipes (a piped daemon hangs `Rig.shell`), and is ended by `stop()`
/// (`udevadm control --exit` is refused in a chroot). The root is read-only, so extra rules go
/// to /run/udev/rules.d, beside the system's own.
final class UdevDaemon {
    private let process = Process()
    private var stopped = false

    /// Starts udevd with `rules` (paths of rules files) added, and waits for its control socket.
    init(rules: [String] = []) throws {
        if !rules.isEmpty {
            try Rig.run("mkdir -p /run/udev/rules.d && cp \(rules.joined(separator: " ")) /run/udev/rules.d/")
        }
        process.executableURL = URL(fileURLWithPath: "/lib/systemd/systemd-udevd")
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        for _ in 0..<200 { guard !FileManager.default.fileExists(atPath: "/run/udev/control") else { break }; usleep(50_000) }
    }

    /// Replays `add` for the devices of `subsystems` already there, and waits until udevd has
    /// handled those events (`--settle` waits for the triggered events themselves: a separate
    /// `udevadm settle` in systemd 252 only waits for udevd's queue to empty, and returns at
    /// once when udevd has not read the kernel's events yet, which CI saw on a busy machine).
    func trigger(_ subsystems: [String]) throws {
        let matches = subsystems.map { "--subsystem-match=\($0)" }.joined(separator: " ")
        try Rig.run("udevadm trigger --settle --action=add \(matches)")
    }

    /// Waits until each of `links` (device links udevd makes, e.g. `/dev/v4l/by-path/...`) is
    /// there, then until udevd's queue is empty (`udevadm settle`: the event that made a link is
    /// in it until its rules are done). For devices a module just added: `udevadm settle` alone
    /// returns at once when udevd has not read the kernel's events yet (systemd 252 no longer
    /// compares sequence numbers), which CI saw on a busy machine. (`udevadm wait` on the new
    /// devices timed out twice in the std boot, for a reason not found.)
    func waitForLinks(_ links: [String], timeout: TimeInterval = 60) throws {
        let start = Date()
        while let missing = links.first(where: { !FileManager.default.fileExists(atPath: $0) }) {
            guard Date().timeIntervalSince(start) < timeout else {
                throw RigError.commandFailed("udevd made no \(missing) in \(Int(timeout)) s: \(Rig.shell("ls -lR /dev/v4l /dev/mediadevices 2>&1 | tail -20").output)")
            }
            usleep(100_000)
        }
        settle()
    }

    /// Waits until udevd's queue is empty (`udevadm settle`): for polling loops only, which
    /// look again when it returned too early (see `trigger`).
    func settle() { Rig.shell("udevadm settle --timeout=60") }

    /// Ends udevd and removes its state and the links it made (a link left behind would name
    /// whichever device gets that node next), so later tests see a rig without udevd.
    func stop() {
        guard !stopped else { return }
        stopped = true
        process.terminate()
        process.waitUntilExit()
        Rig.shell("rm -rf /run/udev /dev/v4l /dev/mediadevices")
    }

    deinit { stop() }
}
