import Foundation
import Glibc
import Synchronization
import XCTest
@testable import MediaDevices

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
        let threads = try await withTaskExecutorPreference(runner.executor) {
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
}
