import MediaDevicesCore
import CV4L2
import Glibc

/// Tells an unplugged camera from other failures. After an unplug, uvcvideo first fails
/// streaming and its control transfers (DQBUF/STREAMON with EIO, EPROTO, ETIME, EPIPE, or the
/// queue in error) while the node still answers, and only a moment later unregisters the node
/// (ENODEV). So an I/O-class failure is reported as `.disconnected` when the node goes away
/// within a short grace period, and as itself otherwise.
enum DisconnectProbe {
    /// How long an I/O-class failure waits for the node to disappear. Measured: uvcvideo
    /// unregisters the node 5–40 ms after the first failed transfer under the rig's emulation.
    static let patienceNanoseconds: UInt64 = 300_000_000

    /// `.disconnected`, naming `operation`, if the node behind `file` no longer answers now.
    static func now(_ file: DeviceFile, after operation: String) -> MediaDevicesError? {
        var capability = v4l2_capability()
        let error = file.ioctlErrno(cv4l2_VIDIOC_QUERYCAP, &capability)
        guard error == ENODEV || error == ENXIO else { return nil }
        return MediaDevicesError.fromErrno(error, device: file.path, operation: operation)
    }

    /// `failure` itself, or `.disconnected` when it is an I/O-class failure and the node stops
    /// answering within `patienceNanoseconds`.
    static func classify(_ failure: MediaDevicesError, file: DeviceFile) -> MediaDevicesError {
        if failure.code == .disconnected { return failure }
        if let gone = now(file, after: failure.operation) { return gone }
        guard failure.code == .io || failure.code == .timeout else { return failure }
        let deadline = MonotonicClock.now() + patienceNanoseconds
        while MonotonicClock.now() < deadline {
            usleep(20_000)
            if let gone = now(file, after: failure.operation) { return gone }
        }
        return failure
    }
}
