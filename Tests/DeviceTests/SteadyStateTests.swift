import Foundation
@testable import MediaDevices
@testable import MediaDevicesAudio
@testable import MediaDevicesVideo
@testable import MediaDevicesCore
import TestSupport
import XCTest

/// Steady-state V4L2 capture allocates nothing per frame: poll, DQBUF, delivery to the callback
/// consumer, the copy into a frame queue's pool, QBUF.
final class SteadyStateTests: XCTestCase {
    override func setUpWithError() throws { try Rig.require() }

    func testCaptureAllocatesNothingPerFrame() throws {
        try Rig.requireAllocationCounting()
        let node = try Rig.loadVivid("n_devs=1 multiplanar=2")[0]
        let source = CameraSource(device: try CaptureDevice(path: node),
                                  request: FormatRequest(pixelFormat: .nv12m, size: Size(width: 320, height: 180), frameRate: FrameRate(25)))
        let probe = AllocationProbe(warmUp: 10, measured: 50)
        source.consumer = probe
        try source.setOrientationTracker(FixedOrientationTracker(.left))  // read for every frame, too
        let frames = source.frameSequence(bufferSize: 2)  // nobody reads it: copied into the pool, oldest dropped
        try source.start()
        XCTAssertEqual(probe.done.wait(timeout: .now() + 60), .success, "60 frames arrived")
        source.stop()
        XCTAssertEqual(probe.allocations, 0, "heap allocations on the capture thread over 50 frames")
        print("figure: heap allocations on the capture thread over 50 NV12M frames: \(probe.allocations)")
        XCTAssertGreaterThan(frames.droppedFrames, 50)
        // Feeding the unread pool costs the driver nothing: each frame went into it, leased
        // (while the lender leaves the driver its minimum of queued buffers) or copied, and the
        // driver had its buffers back as the callback returned. The driver's own drops (sequence
        // gaps) are the emulated vivid's timing, which a busy host stretches: printed, not bounded.
        let statistics = source.statistics
        XCTAssertEqual(statistics.leasedFrames + statistics.copiedFrames, statistics.deliveredFrames,
                       "every delivered frame went into the unread pool, leased or copied: \(statistics)")
        print("figure: NV12M with an unread sequence: \(statistics.deliveredFrames) delivered (\(statistics.leasedFrames) leased, \(statistics.copiedFrames) copied), \(frames.droppedFrames) dropped from the pool, \(statistics.droppedFrames) dropped by the driver (vivid's timing)")
    }

    func testLeasedSequenceAllocatesNothingPerFrameOnTheCaptureThread() async throws {
        try await assertALeasedReaderStepsTheLoop(readerAfterStart: false)
    }

    /// The same with the reader made as the step-by-step capture of the DocC article CamerasAndFormats makes it: after `start()`, with
    /// the capture executor as its task's preference.
    func testAReaderMadeAfterStartStepsTheLoopToo() async throws {
        try await assertALeasedReaderStepsTheLoop(readerAfterStart: true)
    }

    /// Once `start()` has returned, the executor's jobs go to the capture thread: a task made
    /// right then starts there, not on Swift's global executor (whose first use would start
    /// libdispatch's manager thread, waking every second for as long as the process lives).
    func testATaskMadeRightAfterStartRunsOnTheCaptureThread() async throws {
        let node = try Rig.loadVivid("n_devs=1")[0]
        for attempt in 1...5 {
            let source = CameraSource(device: try CaptureDevice(path: node),
                                      request: FormatRequest(pixelFormat: .yuyv, size: .vga, frameRate: FrameRate(25)))
            defer { source.release() }
            try source.initialize()
            let executor = source.captureExecutor
            let before = executor.jobsRunOnCaptureThread
            try source.start()
            let thread = await Task(executorPreference: executor) { () -> String in
                ((try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? "?").trimmingCharacters(in: .whitespacesAndNewlines)
            }.value
            XCTAssertEqual(thread, "md-capture", "attempt \(attempt): the task's first job ran on \(thread)")
            XCTAssertEqual(executor.jobsRunOnCaptureThread, before + 1, "attempt \(attempt)")
            source.stop()
        }
    }

    private func assertALeasedReaderStepsTheLoop(readerAfterStart: Bool) async throws {
        try Rig.requireAllocationCounting()
        let node = try Rig.loadVivid("n_devs=1 node_types=1")[0]
        let source = CameraSource(device: try CaptureDevice(path: node),
                                  request: FormatRequest(pixelFormat: .yuyv, size: .vga, frameRate: FrameRate(25)))
        defer { source.release() }
        // A reader that keeps up, on the capture thread: it counts the frames it reads there.
        let (probe, frames, (read, onCaptureThread)) = try await CaptureRuns.allocationsWithALeasedReader(source, readerAfterStart: readerAfterStart) { frames, probe in
            var read = 0
            var onCaptureThread = 0
            for try await buffer in frames {
                read += buffer.withFrame { $0.planeCount }
                if let thread = probe.captureThread, pthread_equal(thread, pthread_self()) != 0 { onCaptureThread += 1 }
            }
            return (read, onCaptureThread)
        }
        print("figure: heap allocations on the capture thread over 50 leased YUYV frames: \(probe.allocations) (leased \(frames.leasedFrames), copied \(frames.copiedFrames); \(onCaptureThread) of \(read) read on the capture thread)")
        XCTAssertGreaterThan(onCaptureThread, read / 2, "the reader ran on the capture thread")
        // It stepped the capture loop itself rather than suspend: no job (task switch) per frame.
        let jobs = source.captureExecutor.jobsRunOnCaptureThread
        print("figure: jobs run on the capture thread for \(read) leased frames read there: \(jobs)")
        XCTAssertLessThan(jobs, max(read / 4, 3), "the reader suspended and was resumed per frame")
        XCTAssertEqual(probe.allocations, 0, "heap allocations on the capture thread over 50 frames")
        XCTAssertGreaterThan(frames.leasedFrames, 25, "most frames leased")
    }
}
