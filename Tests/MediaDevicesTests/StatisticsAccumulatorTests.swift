import XCTest
@testable import MediaDevices
@testable import MediaDevicesAudio
@testable import MediaDevicesVideo
@testable import MediaDevicesCore

final class StatisticsAccumulatorTests: XCTestCase {
    func testSequenceGapsCountAsDrops() {
        var accumulator = StatisticsAccumulator()
        for sequence: UInt32 in [0, 1, 3, 4, 8] {
            accumulator.record(timestamp: MonotonicInstant(nanoseconds: UInt64(sequence) * 1_000_000), sequence: sequence, captureDelay: .zero)
        }
        XCTAssertEqual(accumulator.statistics.droppedFrames, 4)  // 2, 5, 6, 7
        XCTAssertEqual(accumulator.statistics.deliveredFrames, 5)
    }

    /// A frame dropped as cut counts as seen, and the numbers the driver skipped before it count
    /// as dropped: delivered + dropped + cut spans the sequence numbers.
    func testDropsBeforeACutFrameCountAsDrops() {
        var accumulator = StatisticsAccumulator()
        let cut = MediaDevicesError(.corruptFrame, device: "test", operation: "deliver", detail: "cut")
        accumulator.record(timestamp: MonotonicInstant(nanoseconds: 0), sequence: 0, captureDelay: .zero)
        accumulator.recordUnusableFrame(sequence: 3, cut)  // 1 and 2 lost by the driver
        accumulator.record(timestamp: MonotonicInstant(nanoseconds: 4), sequence: 4, captureDelay: .zero)
        accumulator.recordUnusableFrame(sequence: 5, cut)
        accumulator.record(timestamp: MonotonicInstant(nanoseconds: 7), sequence: 7, captureDelay: .zero)  // 6 lost
        let statistics = accumulator.statistics
        XCTAssertEqual(statistics.droppedFrames, 3)
        XCTAssertEqual(statistics.corruptFrames, 2)
        XCTAssertEqual(statistics.deliveredFrames, 3)
        XCTAssertEqual(statistics.deliveredFrames + statistics.droppedFrames + statistics.corruptFrames, 8, "sequence numbers 0 to 7")
    }

    /// uvcvideo completes buffers from an unbound workqueue, so a frame can be dequeued after a
    /// newer one (a rig run saw a number one below the one before it). The late frame was
    /// counted as dropped when the newer one came; it arrives, so it is not dropped, and the next
    /// in order is no gap.
    func testALateFrameIsNotCountedAsDropped() {
        var accumulator = StatisticsAccumulator()
        for sequence: UInt32 in [0, 1, 2, 3, 5, 4, 6, 7, 9, 10, 8, 8, 13, 12] {  // 8 twice: taken back once; 11 lost
            accumulator.record(timestamp: MonotonicInstant(nanoseconds: UInt64(sequence) * 40_000_000), sequence: sequence, captureDelay: .zero)
        }
        XCTAssertEqual(accumulator.statistics.droppedFrames, 1, "only 11 never came")
        XCTAssertEqual(accumulator.statistics.deliveredFrames, 14)
        XCTAssertEqual(accumulator.statistics.measuredFrameRate, 13.0 / 0.52, accuracy: 1e-9, "the newest timestamp, not the late frame's")
        // A frame from before the first one seen was never counted: nothing to take back.
        var fresh = StatisticsAccumulator()
        for sequence: UInt32 in [5, 4, 6] {
            fresh.record(timestamp: MonotonicInstant(nanoseconds: UInt64(sequence)), sequence: sequence, captureDelay: .zero)
        }
        XCTAssertEqual(fresh.statistics.droppedFrames, 0)
        // Far behind is a stream whose numbers began again, as before: no drop, counting goes on from there.
        var restarted = StatisticsAccumulator()
        for sequence: UInt32 in [1000, 1001, 0, 1, 3] {
            restarted.record(timestamp: MonotonicInstant(nanoseconds: 0), sequence: sequence, captureDelay: .zero)
        }
        XCTAssertEqual(restarted.statistics.droppedFrames, 1, "2")
    }

    func testMeasuredFrameRate() {
        var accumulator = StatisticsAccumulator()
        for index in 0..<11 {
            accumulator.record(timestamp: MonotonicInstant(nanoseconds: 5_000_000_000 + UInt64(index) * 40_000_000), sequence: UInt32(index),
                               captureDelay: .zero)
        }
        XCTAssertEqual(accumulator.statistics.measuredFrameRate, 25.0, accuracy: 1e-9)
        XCTAssertEqual(accumulator.statistics.deliveredFrames, 11)
        XCTAssertEqual(accumulator.statistics.droppedFrames, 0)
    }

    func testRateNeedsTwoFrames() {
        var accumulator = StatisticsAccumulator()
        accumulator.record(timestamp: MonotonicInstant(nanoseconds: 1_000), sequence: 0, captureDelay: .zero)
        XCTAssertEqual(accumulator.statistics.measuredFrameRate, 0)
    }

    func testRestartIsNotADrop() {
        var accumulator = StatisticsAccumulator()
        for sequence: UInt32 in 0..<100 {
            accumulator.record(timestamp: MonotonicInstant(nanoseconds: UInt64(sequence)), sequence: sequence, captureDelay: .zero)
        }
        accumulator.restartSequence()
        for sequence: UInt32 in [0, 1, 2] {
            accumulator.record(timestamp: MonotonicInstant(nanoseconds: 200 + UInt64(sequence)), sequence: sequence, captureDelay: .zero)
        }
        XCTAssertEqual(accumulator.statistics.droppedFrames, 0)
        XCTAssertEqual(accumulator.statistics.deliveredFrames, 103)
        // Counting resumes after the restart.
        accumulator.record(timestamp: MonotonicInstant(nanoseconds: 300), sequence: 5, captureDelay: .zero)
        XCTAssertEqual(accumulator.statistics.droppedFrames, 2)
    }

    func testSequenceWrapIsNotADrop() {
        var accumulator = StatisticsAccumulator()
        accumulator.record(timestamp: MonotonicInstant(nanoseconds: 1), sequence: UInt32.max, captureDelay: .zero)
        accumulator.record(timestamp: MonotonicInstant(nanoseconds: 2), sequence: 0, captureDelay: .zero)
        XCTAssertEqual(accumulator.statistics.droppedFrames, 0)
    }

    func testCaptureDelay() {
        var accumulator = StatisticsAccumulator()
        accumulator.record(timestamp: MonotonicInstant(nanoseconds: 0), sequence: 0, captureDelay: .milliseconds(1))
        accumulator.record(timestamp: MonotonicInstant(nanoseconds: 1), sequence: 1, captureDelay: .microseconds(3000))
        accumulator.record(timestamp: MonotonicInstant(nanoseconds: 2), sequence: 2, captureDelay: .microseconds(500))
        XCTAssertEqual(accumulator.statistics.meanCaptureDelay.inMicroseconds, 1500, accuracy: 1e-6)
        XCTAssertEqual(accumulator.statistics.maxCaptureDelay.inMicroseconds, 3000, accuracy: 1e-6)
    }

    func testQueueDrops() {
        var accumulator = StatisticsAccumulator()
        accumulator.recordQueueDrops(2)
        accumulator.recordQueueDrops(3)
        XCTAssertEqual(accumulator.statistics.queueDroppedFrames, 5)
        XCTAssertEqual(accumulator.statistics.droppedFrames, 0)
    }
}
