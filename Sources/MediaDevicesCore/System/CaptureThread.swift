import Foundation
import Glibc
import Synchronization

/// A dedicated POSIX thread for one running stream, so capture never blocks Swift's
/// cooperative pool. `join()` waits for it (and does nothing when called from the thread itself).
// @unchecked Sendable: the pthread is written once, in init; `join` runs once, under the `joined` mutex.
package final class CaptureThread: @unchecked Sendable {
    private final class Body {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }

    /// Marks capture threads, so control calls can tell they are made from a consumer callback.
    private static let marker: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()

    private var thread = pthread_t()  // written once, in init
    private let joined = Mutex(false)

    /// Starts `body` on a new thread named `name` (at most 15 characters, Linux's limit),
    /// marked as a thread of `owner` (`isOwned(by:)`) when one is given; `owner` must outlive it.
    package init(name: String, owner: AnyObject? = nil, body: @escaping @Sendable () -> Void) throws(MediaDevicesError) {
        let key = CaptureThread.marker
        let mark = owner.map { UInt(bitPattern: ObjectIdentifier($0)) } ?? 1
        let context = Unmanaged.passRetained(Body {
            pthread_setspecific(key, UnsafeRawPointer(bitPattern: mark))
            Thread.current.name = name  // shows in top -H, gdb and /proc/PID/task/*/comm
            body()
        }).toOpaque()
        let result = pthread_create(&thread, nil, { context in
            Unmanaged<Body>.fromOpaque(context!).takeRetainedValue().run()
            return nil
        }, context)
        guard result == 0 else {
            Unmanaged<Body>.fromOpaque(context).release()
            throw MediaDevicesError(.io, device: nil, operation: "pthread_create", errno: result,
                                    detail: "Could not start the capture thread; the process or user may have reached its thread limit (`ulimit -u`)")
        }
    }

    /// Whether the caller is any capture thread (a consumer callback runs on one).
    static var isCaptureThread: Bool { pthread_getspecific(marker) != nil }

    /// Whether the caller is a thread started for `owner` (a source's capture thread: its
    /// consumer callback, or a task on its capture executor), from the thread's first
    /// instruction to its last, whatever the source's run slot says meanwhile.
    package static func isOwned(by owner: AnyObject) -> Bool {
        pthread_getspecific(marker) == UnsafeMutableRawPointer(bitPattern: UInt(bitPattern: ObjectIdentifier(owner)))
    }

    /// Whether the caller is this thread.
    package var isCurrent: Bool { pthread_equal(pthread_self(), thread) != 0 }

    /// Waits for the thread to end; does nothing on the thread itself or once joined.
    package func join() {
        guard !isCurrent else { return }
        joined.withLock { joined in
            if !joined { pthread_join(thread, nil) }
            joined = true
        }
    }

    deinit {
        if !joined.withLock({ $0 }) { pthread_detach(thread) }
    }
}
