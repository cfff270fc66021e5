import CLinuxSystem
import Glibc

/// An `eventfd` a capture thread polls beside its device, so that another thread can wake it
/// (to stop) without closing the device under it.
package final class WakeUpEvent: Sendable {
    /// The descriptor to poll for `POLLIN`.
    package let descriptor: Int32

    /// Creates the eventfd (non-blocking, close-on-exec).
    package init() throws(MediaDevicesError) {
        descriptor = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
        if descriptor < 0 { throw MediaDevicesError.fromErrno(errno, device: nil, operation: "eventfd") }
    }

    deinit { Glibc.close(descriptor) }

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
