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

    /// Replays `add` for the devices of `subsystems` already there, and waits for udevd to finish.
    func trigger(_ subsystems: [String]) throws {
        let matches = subsystems.map { "--subsystem-match=\($0)" }.joined(separator: " ")
        try Rig.run("udevadm trigger --action=add \(matches) && udevadm settle --timeout=60")
    }

    /// Waits until udevd has handled every event so far.
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
