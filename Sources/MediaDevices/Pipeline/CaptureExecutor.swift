import Glibc
import Synchronization

/// A task executor that runs the code reading a source's frames on the source's own capture
/// thread, right after each frame is delivered: one thread wake-up per frame end to end, and
/// no hand-off through Swift's global executor (which allocates in libdispatch on every wake
/// from a foreign thread).
///
/// ```swift
/// try await withTaskExecutorPreference(camera.captureExecutor) {
///     for try await frame in camera.frames() { encoder.encode(frame) }
/// }
/// ```
///
/// The loop body then runs on the capture thread, as a consumer callback does: keep it short
/// (the next frame waits for it), and don't call the source's control methods from it (`stop()`
/// only asks, as from a callback; `setFormat` and the like throw `.invalidState`). While the
/// source is not capturing, the executor passes its jobs to Swift's global executor, so
/// waiting tasks still hear of the end of a run.
public final class CaptureExecutor: TaskExecutor, @unchecked Sendable {
    private struct State {
        /// Jobs waiting for the capture thread, a ring that grows only when full.
        var jobs: [UnownedJob?] = Array(repeating: nil, count: 16)
        var head = 0
        var count = 0
        /// The capture thread running the jobs, while attached, and the event that wakes it.
        var runner: pthread_t?
        var wake: WakeUpEvent?

        mutating func append(_ job: UnownedJob) {
            if count == jobs.count {
                var grown: [UnownedJob?] = Array(repeating: nil, count: jobs.count * 2)
                for offset in 0..<count { grown[offset] = jobs[(head + offset) % jobs.count] }
                jobs = grown
                head = 0
            }
            jobs[(head + count) % jobs.count] = job
            count += 1
        }

        mutating func popFirst() -> UnownedJob? {
            guard count > 0 else { return nil }
            let job = jobs[head]
            jobs[head] = nil
            head = (head + 1) % jobs.count
            count -= 1
            return job
        }
    }

    private let state = Mutex(State())

    init() {}

    /// Queues `job` for the capture thread, or passes it to the global executor while none is
    /// attached.
    public func enqueue(_ job: consuming ExecutorJob) {
        let unowned = UnownedJob(job)
        let (queued, wake) = state.withLock { state -> (Bool, WakeUpEvent?) in
            guard let runner = state.runner else { return (false, nil) }
            state.append(unowned)
            // The capture thread itself (resuming a reader from `deliver`) runs it next anyway.
            return (true, pthread_equal(runner, pthread_self()) != 0 ? nil : state.wake)
        }
        if !queued {
            globalConcurrentExecutor.enqueue(ExecutorJob(unowned))
        } else {
            wake?.signal()
        }
    }

    /// Makes the calling thread (a capture thread) the one that runs the jobs; `wake` is the
    /// event its poll loop watches, signalled for jobs enqueued from other threads.
    func attach(wake: WakeUpEvent) {
        state.withLock {
            $0.runner = pthread_self()
            $0.wake = wake
        }
    }

    /// Runs the queued jobs, and those they queue in turn (a reader that yields), up to a budget
    /// so the capture thread goes back to its device; what is left wakes it again at once.
    /// Called by the attached capture thread.
    func runPending() {
        var budget = 64
        while budget > 0, let job = state.withLock({ $0.popFirst() }) {
            job.runSynchronously(on: asUnownedTaskExecutor())
            budget -= 1
        }
        if budget == 0, let wake = state.withLock({ $0.count > 0 ? $0.wake : nil }) { wake.signal() }
    }

    /// The capture thread is ending: later jobs go to the global executor, and so do the ones
    /// still queued.
    func detach() {
        let leftover = state.withLock { state -> [UnownedJob] in
            state.runner = nil
            state.wake = nil
            var jobs: [UnownedJob] = []
            while let job = state.popFirst() { jobs.append(job) }
            return jobs
        }
        for job in leftover { globalConcurrentExecutor.enqueue(ExecutorJob(job)) }
    }
}
