import XCTest
@testable import MediaDevices
@testable import MediaDevicesAudio
@testable import MediaDevicesVideo
@testable import MediaDevicesCore

/// Drops that straddle the 32-bit sequence wrap (vivid's `wrap_sequence_number`, or a camera
/// streaming for 5.4 years at 25 fps) are counted like any other gap, and the wrap itself is not
/// a drop (found by SoakTests' fault storm).
final class SequenceWrapDropTests: XCTestCase {
    func testDropsAcrossTheWrapAreCounted() {
        var accumulator = StatisticsAccumulator()
        let sequences: [UInt32] = [UInt32.max - 3, UInt32.max - 1, 1, 2, 5]  // dropped: max-2, max, 0, 3, 4
        for (index, sequence) in sequences.enumerated() {
            accumulator.record(timestamp: MonotonicInstant(nanoseconds: UInt64(index)), sequence: sequence, captureDelay: .zero)
        }
        XCTAssertEqual(accumulator.statistics.droppedFrames, 5)
        XCTAssertEqual(accumulator.statistics.deliveredFrames, 5)
    }

    func testAStepBackIsNotADrop() {
        var accumulator = StatisticsAccumulator()
        for sequence: UInt32 in [100, 101, 7, 8] {
            accumulator.record(timestamp: MonotonicInstant(nanoseconds: UInt64(sequence)), sequence: sequence, captureDelay: .zero)
        }
        XCTAssertEqual(accumulator.statistics.droppedFrames, 0)
    }
}
