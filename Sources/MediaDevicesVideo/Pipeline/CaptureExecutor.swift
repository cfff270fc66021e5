import MediaDevicesCore
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
/// only asks, as from a callback; `setFormat` and the like throw `.invalidState`). From the
/// moment the source's `start()` returns until its run ends, jobs run on the capture thread, so
/// make the reader after `start()`. While the source is not capturing, the executor passes its
/// jobs to Swift's global executor, so waiting tasks still hear of the end of a run.
///
/// On a camera (V4L2 or PipeWire) or a screen, a reader running here that finds its sequence
/// empty does not suspend: it runs the capture loop's next step itself (poll, dequeue or grab,
/// deliver) until a frame for it is queued, as GStreamer's streaming thread pulls from `v4l2src`.
/// (The test pattern resumes a suspended reader on its thread right after each frame.)
/// A frame then costs what a consumer
/// callback costs: no continuation, no job, no task switch. It suspends as usual when other
/// jobs are waiting for the thread, when the source stops or fails, and on the first read.
/// Cancelling such a reader takes effect at its next frame (or within the loop's poll timeout:
/// half a second on a camera, a second on a still screen), not at once.
public final class CaptureExecutor: TaskExecutor, Sendable {
    /// A capture loop that can be run a step at a time (`CameraPump`). A class, not a closure:
    /// a closure handed out through `Mutex.withLock`'s generic result is reabstracted, which
    /// allocates on every call.
    protocol Loop: AnyObject, Sendable {
        /// Waits for the device (or a wake-up) and delivers what is ready.
        func step() -> Step
    }

    /// What one step of the capture loop did.
    enum Step {
        /// It polled and delivered what was ready (maybe nothing): step again.
        case stepped
        /// The loop must end (asked to stop, or the device failed): readers suspend.
        case leave
    }

    private struct State {
        /// Jobs waiting for the capture thread, a ring that grows only when full.
        var jobs: [UnownedJob?] = Array(repeating: nil, count: 16)
        var head = 0
        var count = 0
        /// The capture thread running the jobs, while attached, and the event that wakes it.
        var runner: pthread_t?
        var wake: WakeUpEvent?
        /// The attached capture loop, for readers on the capture thread to step.
        var loop: (any Loop)?

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
    private let jobsRun = Atomic<Int>(0)

    init() {}

    /// Jobs run on capture threads so far: a reader that steps the loop itself adds none per frame.
    var jobsRunOnCaptureThread: Int { jobsRun.load(ordering: .relaxed) }

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
    /// event its poll loop watches, signalled for jobs enqueued from other threads; `loop` is
    /// stepped by readers that would otherwise suspend (`stepForReader`).
    func attach(wake: WakeUpEvent, loop: (any Loop)? = nil) {
        state.withLock {
            $0.runner = pthread_self()
            $0.wake = wake
            $0.loop = loop
        }
    }

    /// On a capture thread: attaches it with `loop` (see `attach`), calls `attached`, then steps
    /// `loop` until it leaves, running the jobs between steps; detaches before returning.
    func drive(_ loop: any Loop, wake: WakeUpEvent, attached: () -> Void) {
        attach(wake: wake, loop: loop)
        attached()
        defer { detach() }
        while loop.step() == .stepped { runPending() }
    }

    /// Runs one step of the capture loop for a reader that found its sequence empty, when the
    /// caller is on the attached capture thread and no other job waits for it. Returns `false`
    /// when the reader must suspend instead (elsewhere, jobs waiting, or the loop ending).
    func stepForReader() -> Bool {
        let loop = state.withLock { state -> (any Loop)? in
            guard state.count == 0, let runner = state.runner, pthread_equal(runner, pthread_self()) != 0 else { return nil }
            return state.loop
        }
        guard let loop else { return false }
        return loop.step() == .stepped
    }

    /// Runs the queued jobs, and those they queue in turn (a reader that yields), up to a budget
    /// so the capture thread goes back to its device; what is left wakes it again at once.
    /// Called by the attached capture thread.
    func runPending() {
        var budget = 64
        while budget > 0, let job = state.withLock({ $0.popFirst() }) {
            jobsRun.add(1, ordering: .relaxed)
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
            state.loop = nil
            var jobs: [UnownedJob] = []
            while let job = state.popFirst() { jobs.append(job) }
            return jobs
        }
        for job in leftover { globalConcurrentExecutor.enqueue(ExecutorJob(job)) }
    }
}
