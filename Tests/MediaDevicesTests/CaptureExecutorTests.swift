import Foundation
import Glibc
import Synchronization
import XCTest
@testable import MediaDevices
@testable import MediaDevicesAudio
@testable import MediaDevicesVideo
@testable import MediaDevicesCore

/// The capture executor runs the jobs of tasks that prefer it on the attached thread, including
/// jobs those tasks queue from that thread (a yield), and hands everything to the global
/// executor once the thread detaches.
final class CaptureExecutorTests: XCTestCase {
    /// A stand-in capture thread: polls the wake-up event (1 s timeout) and runs the jobs.
    private final class Runner: @unchecked Sendable {
        let executor = CaptureExecutor()
        let wake: WakeUpEvent
        let stop = Atomic<Bool>(false)
        let ranOn = Mutex<[pthread_t]>([])
        let done = DispatchSemaphore(value: 0)
        var thread: pthread_t?

        init() throws { wake = try WakeUpEvent() }

        func start() {
            Thread.detachNewThread { [self] in
                executor.attach(wake: wake)
                while !stop.load(ordering: .acquiring) {
                    var fd = pollfd(fd: wake.descriptor, events: Int16(POLLIN), revents: 0)
                    _ = poll(&fd, 1, 1000)
                    wake.reset()
                    executor.runPending()
                }
                executor.detach()
                done.signal()
            }
        }
    }

    func testJobsRunOnTheAttachedThreadAndYieldsDoNotWaitForAWakeUp() async throws {
        let runner = try Runner()
        runner.start()
        try await Task.sleep(for: .milliseconds(50))
        let started = Date()
        let threads = await withTaskExecutorPreference(runner.executor) {
            var seen: [pthread_t] = []
            for _ in 0..<5 {
                seen.append(pthread_self())
                await Task.yield()  // queued from the runner itself: must not wait for its 1 s poll
            }
            return seen
        }
        let elapsed = Date().timeIntervalSince(started)
        XCTAssertLessThan(elapsed, 0.5, "five yields on the capture thread took \(elapsed) s")
        XCTAssertEqual(Set(threads.map { UInt($0) }).count, 1, "every step ran on one thread")
        runner.stop.store(true, ordering: .releasing)
        runner.wake.signal()
        runner.done.wait()
        // Detached: the executor passes jobs to the global executor, so a preferring task still runs.
        let after = await withTaskExecutorPreference(runner.executor) { 42 }
        XCTAssertEqual(after, 42)
    }

    /// A reader on the capture thread whose sequence is empty steps the loop itself: the frames
    /// come with no job (no task switch) per frame, on the capture thread, in order; and it
    /// suspends, so the thread's own loop goes on, once the loop ends.
    func testAReaderOnTheCaptureThreadStepsTheLoopInsteadOfSuspending() async throws {
        let executor = CaptureExecutor()
        let queue = FrameQueue(capacity: 4, executor: executor)
        let wake = try WakeUpEvent()
        let total = 40
        let produced = Atomic<Int>(0)
        let steppedOn = Mutex<Set<UInt>>([])
        let done = DispatchSemaphore(value: 0)
        // The stand-in capture loop: each step "dequeues" one frame (1 ms apart) and delivers it.
        final class Loop: CaptureExecutor.Loop, @unchecked Sendable {
            let body: @Sendable () -> CaptureExecutor.Step
            init(_ body: @escaping @Sendable () -> CaptureExecutor.Step) { self.body = body }
            func step() -> CaptureExecutor.Step { body() }
        }
        let loop = Loop {
            steppedOn.withLock { _ = $0.insert(UInt(pthread_self())) }
            let next = produced.load(ordering: .relaxed)
            if next == total { return .leave }
            usleep(1_000)
            _ = withGreyFrame(sequence: UInt32(next), bytes: marker(UInt32(next))) { queue.push($0) }
            produced.store(next + 1, ordering: .relaxed)
            return .stepped
        }
        let attached = DispatchSemaphore(value: 0)
        let readerStarted = Atomic<Bool>(false)
        Thread.detachNewThread {
            executor.attach(wake: wake, loop: loop)
            attached.signal()
            // Run jobs only until the reader has hopped here; from then on, step.
            while !readerStarted.load(ordering: .acquiring) {
                var fd = pollfd(fd: wake.descriptor, events: Int16(POLLIN), revents: 0)
                _ = poll(&fd, 1, 1000)
                wake.reset()
                executor.runPending()
            }
            while loop.step() == .stepped { executor.runPending() }
            executor.detach()
            queue.finish(error: nil)
            done.signal()
        }
        attached.wait()
        let read = try await withTaskExecutorPreference(executor) {
            readerStarted.store(true, ordering: .releasing)
            var sequences: [UInt32] = []
            var threads = Set<UInt>()
            for try await buffer in VideoFrames(queue: queue) {
                sequences.append(buffer.sequence)
                threads.insert(UInt(pthread_self()))
                buffer.withFrame { XCTAssertEqual(Array($0.plane(0).bytes), marker(buffer.sequence)) }
            }
            return (sequences, threads)
        }
        done.wait()
        XCTAssertEqual(read.0, (0..<UInt32(total)).map { $0 }, "every frame, in order")
        XCTAssertLessThanOrEqual(executor.jobsRunOnCaptureThread, 2,
                                 "\(executor.jobsRunOnCaptureThread) jobs for \(read.0.count) frames: the reader suspended instead of stepping")
        XCTAssertEqual(steppedOn.withLock { $0.count }, 1, "the loop was stepped on one thread")
        XCTAssertTrue(read.1.isSubset(of: steppedOn.withLock { $0 }), "the reader ran on the capture thread")
    }
}
