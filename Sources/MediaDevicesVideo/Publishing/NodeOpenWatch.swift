import Glibc

/// Tells when a process opens or closes one of a set of device nodes: an inotify watch on each
/// node for `IN_OPEN` and `IN_CLOSE` (the kernel reports opens and last closes of any file,
/// device nodes included, whatever driver is behind them). Internal: ``VirtualCamera``'s
/// watcher scans `/proc` for the openers (``NodeOpeners``) only after such an event, not four
/// times a second: the scan reads every process's descriptors, which cost a v4l2loopback
/// producer as much CPU as writing its frames.
///
/// What it does not see: a descriptor handed to another process (`fork`, `SCM_RIGHTS`) opens
/// nothing, and a process that exits while another still holds the same open file closes
/// nothing; the watcher scans every few seconds as well for those.
final class NodeOpenWatch {
    /// The inotify descriptor to poll for `POLLIN`.
    let descriptor: Int32

    /// Watches `paths`; nil when inotify refuses (no descriptor or watch left): scan on a timer then.
    init?(paths: [String]) {
        descriptor = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard descriptor >= 0 else { return nil }
        let events = UInt32(IN_OPEN) | UInt32(IN_CLOSE_WRITE) | UInt32(IN_CLOSE_NOWRITE)
        for path in paths where inotify_add_watch(descriptor, path, events) < 0 {
            Glibc.close(descriptor)
            return nil
        }
    }

    deinit { Glibc.close(descriptor) }

    /// Reads the pending events off; whether there were any.
    func drain() -> Bool {
        var buffer = (0..<16).map { _ in inotify_event() }  // the events carry no name: a node is watched itself
        var any = false
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count > 0 { any = true; continue }
            if count < 0 && errno == EINTR { continue }
            return any
        }
    }
}
