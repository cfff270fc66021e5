import Foundation
import Glibc

/// A dedicated POSIX thread for one running stream, so capture never blocks Swift's
/// cooperative pool. `join()` waits for it (and does nothing when called from the thread itself).
final class CaptureThread: @unchecked Sendable {
    private final class Body {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }

    private var thread = pthread_t()
    private var joined = false

    /// Starts `body` on a new thread named `name`.
    init(name: String, body: @escaping @Sendable () -> Void) throws {
        let context = Unmanaged.passRetained(Body {
            Thread.current.name = name  // shows in top -H, gdb and /proc/PID/task/*/comm
            body()
        }).toOpaque()
        let result = pthread_create(&thread, nil, { context in
            Unmanaged<Body>.fromOpaque(context!).takeRetainedValue().run()
            return nil
        }, context)
        guard result == 0 else {
            Unmanaged<Body>.fromOpaque(context).release()
            throw MediaDevicesError.fromErrno(result, device: nil, operation: "pthread_create")
        }
    }

    /// Whether the caller is this thread.
    var isCurrent: Bool { pthread_equal(pthread_self(), thread) != 0 }

    /// Waits for the thread to end. Call from one thread at a time.
    func join() {
        guard !joined, !isCurrent else { return }
        joined = true
        pthread_join(thread, nil)
    }

    deinit {
        if !joined { pthread_detach(thread) }
    }
}
