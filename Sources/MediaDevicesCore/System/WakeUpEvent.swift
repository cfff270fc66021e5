import CLinuxSystem
import Glibc
import Synchronization

/// An `eventfd` a capture thread polls beside its device, so that another thread can wake it
/// (to stop) without closing the device under it.
package final class WakeUpEvent: Sendable {
    /// The descriptor to poll for `POLLIN`.
    package let descriptor: Int32

    /// How many are open in this process: the eventfds that are the library's, told apart from
    /// those the runtime and the sound servers' client libraries open on their own schedule (a
    /// soak test's leak check counts these exactly).
    package static var openCount: Int { open.load(ordering: .relaxed) }
    private static let open = Atomic<Int>(0)

    /// Creates the eventfd (non-blocking, close-on-exec).
    package init() throws(MediaDevicesError) {
        descriptor = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
        if descriptor < 0 { throw MediaDevicesError.fromErrno(errno, device: nil, operation: "eventfd") }
        Self.open.add(1, ordering: .relaxed)
    }

    deinit {
        Glibc.close(descriptor)
        Self.open.subtract(1, ordering: .relaxed)
    }

    /// Wakes the poller.
    package func signal() {
        var one: UInt64 = 1
        _ = withUnsafeBytes(of: &one) { write(descriptor, $0.baseAddress, 8) }
    }

    /// Consumes pending wake-ups.
    package func reset() {
        var value: UInt64 = 0
        _ = withUnsafeMutableBytes(of: &value) { read(descriptor, $0.baseAddress, 8) }
    }
}
