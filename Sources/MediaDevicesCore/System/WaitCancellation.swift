import Glibc
import Synchronization

/// Ends the blocking waits of the thread it is installed on (a portal's dialog, the first
/// picture of a stream): an `async` call runs such a wait on a thread of its own
/// (`runBlocking`), and its task's cancellation sets the flag, which the waits look at at least
/// every `slice`. A wait that sees it throws `.cancelled`, and the code around it cleans up as on
/// any failure.
package final class WaitCancellation: Sendable {
    /// The longest a cancellable wait sleeps before it looks at the flag again.
    package static let slice: Duration = .milliseconds(100)

    private let cancelled = Atomic<Bool>(false)

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()

    /// Sets the flag: the waits of the thread it is installed on end.
    func cancel() { cancelled.store(true, ordering: .releasing) }

    /// Whether `cancel()` was called.
    var isCancelled: Bool { cancelled.load(ordering: .acquiring) }

    /// Whether the calling thread's installed flag (if any) was set.
    package static var isCurrentCancelled: Bool {
        guard let pointer = pthread_getspecific(key) else { return false }
        return Unmanaged<WaitCancellation>.fromOpaque(pointer).takeUnretainedValue().isCancelled
    }

    /// Throws `.cancelled` when the calling thread's wait was cancelled.
    package static func check(device: String?, operation: String, waitingFor what: String) throws(MediaDevicesError) {
        guard isCurrentCancelled else { return }
        throw MediaDevicesError(.cancelled, device: device, operation: operation,
                                detail: "The task waiting for \(what) was cancelled; nothing was left open")
    }

    /// Runs `body` with this flag installed on the calling thread.
    func installed<Result, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        pthread_setspecific(Self.key, Unmanaged.passUnretained(self).toOpaque())
        defer { pthread_setspecific(Self.key, nil) }
        return try body()
    }
}

/// Runs `body`, a call that waits on a person or a server, on a thread of its own (named
/// `name`), so that it holds no thread of Swift's cooperative pool; cancelling the calling task
/// ends its waits (`WaitCancellation`) and it throws `.cancelled`.
package func runBlocking<Result: Sendable>(name: String, device: String?, operation: String,
                                   _ body: @escaping @Sendable () throws -> Result) async throws(MediaDevicesError) -> Result {
    let cancellation = WaitCancellation()
    let outcome: Swift.Result<Result, MediaDevicesError> = await withTaskCancellationHandler {
        await withCheckedContinuation { (continuation: CheckedContinuation<Swift.Result<Result, MediaDevicesError>, Never>) in
            if Task.isCancelled { cancellation.cancel() }
            do {
                // Detached once started (the object is let go): it ends when `body` returns.
                _ = try CaptureThread(name: name) {
                    let outcome = cancellation.installed {
                        Swift.Result { () throws(MediaDevicesError) -> Result in
                            do { return try body() } catch { throw MediaDevicesError.converting(error, device: device, operation: operation) }
                        }
                    }
                    continuation.resume(returning: outcome)
                }
            } catch {
                continuation.resume(returning: .failure(MediaDevicesError.converting(error, device: device, operation: operation)))
            }
        }
    } onCancel: {
        cancellation.cancel()
    }
    return try outcome.get()
}
