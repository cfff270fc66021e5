import XCTest
@testable import MediaDevices
@testable import MediaDevicesAudio
@testable import MediaDevicesVideo
@testable import MediaDevicesCore

final class FrameRateRangeTests: XCTestCase {
    /// Intervals 1/30 ... 1/5 in steps of 1/30: intervals 1/30, 2/30, ..., 6/30, that is
    /// rates 30, 15, 10, 7.5, 6 and 5.
    let grid = FrameRateRange(minInterval: Fraction(1, 30), maxInterval: Fraction(1, 5), step: Fraction(1, 30))

    func testDiscrete() {
        let range = FrameRateRange(discrete: FrameRate(30))
        XCTAssertEqual(range.kind, .discrete)
        XCTAssertTrue(range.contains(FrameRate(30)))
        XCTAssertTrue(range.contains(FrameRate(Fraction(60, 2))))
        XCTAssertFalse(range.contains(FrameRate(Fraction(30000, 1001))))
        XCTAssertFalse(range.contains(FrameRate(15)))
        XCTAssertEqual(range.bestRate(atOrBelow: FrameRate(60)), FrameRate(30))
        XCTAssertNil(range.bestRate(atOrBelow: FrameRate(29)))
        XCTAssertEqual(range.description, "30 fps")
    }

    func testStepwiseBounds() {
        XCTAssertEqual(grid.kind, .stepwise)
        XCTAssertEqual(grid.minFrameRate, FrameRate(5))
        XCTAssertEqual(grid.maxFrameRate, FrameRate(30))
        XCTAssertEqual(grid.minFrameInterval, Fraction(1, 30))
        XCTAssertEqual(grid.maxFrameInterval, Fraction(1, 5))
        XCTAssertEqual(grid.description, "5-30 fps")
    }

    func testStepwiseContains() {
        for rate in [Fraction(30), Fraction(15), Fraction(10), Fraction(15, 2), Fraction(6), Fraction(5)] {
            XCTAssertTrue(grid.contains(FrameRate(rate)), "\(rate)")
        }
        // 20 fps = 1/20 s: (1/20 - 1/30) / (1/30) = 1/2 step, off the grid.
        XCTAssertFalse(grid.contains(FrameRate(20)))
        XCTAssertFalse(grid.contains(FrameRate(12)))
        XCTAssertFalse(grid.contains(FrameRate(Fraction(30000, 1001))))
        XCTAssertFalse(grid.contains(FrameRate(60)))
        XCTAssertFalse(grid.contains(FrameRate(4)))
    }

    func testStepwiseBestRate() {
        XCTAssertEqual(grid.bestRate(atOrBelow: FrameRate(100)), FrameRate(30))
        XCTAssertEqual(grid.bestRate(atOrBelow: FrameRate(30)), FrameRate(30))
        XCTAssertEqual(grid.bestRate(atOrBelow: FrameRate(29)), FrameRate(15))
        XCTAssertEqual(grid.bestRate(atOrBelow: FrameRate(20)), FrameRate(15))
        XCTAssertEqual(grid.bestRate(atOrBelow: FrameRate(12)), FrameRate(10))
        XCTAssertEqual(grid.bestRate(atOrBelow: FrameRate(10)), FrameRate(10))
        XCTAssertEqual(grid.bestRate(atOrBelow: FrameRate(8)), FrameRate(Fraction(15, 2)))
        XCTAssertEqual(grid.bestRate(atOrBelow: FrameRate(Fraction(11, 2))), FrameRate(5))
        XCTAssertEqual(grid.bestRate(atOrBelow: FrameRate(5)), FrameRate(5))
        XCTAssertNil(grid.bestRate(atOrBelow: FrameRate(4)))
    }

    func testStepwiseWithOffsetGrid() {
        // Intervals 1/25 ... 1/5 in steps of 2/25: 1/25, 3/25, 5/25 -> 25, 25/3 and 5 fps.
        let range = FrameRateRange(minInterval: Fraction(1, 25), maxInterval: Fraction(1, 5), step: Fraction(2, 25))
        XCTAssertTrue(range.contains(FrameRate(Fraction(25, 3))))
        XCTAssertFalse(range.contains(FrameRate(Fraction(25, 2))))
        XCTAssertEqual(range.bestRate(atOrBelow: FrameRate(24)), FrameRate(Fraction(25, 3)))
        XCTAssertEqual(range.bestRate(atOrBelow: FrameRate(8)), FrameRate(5))
    }

    func testContinuous() {
        let range = FrameRateRange(minInterval: Fraction(1, 60), maxInterval: Fraction(1, 1), step: nil)
        XCTAssertEqual(range.kind, .continuous)
        XCTAssertTrue(range.contains(FrameRate(Fraction(30000, 1001))))
        XCTAssertTrue(range.contains(FrameRate(1)))
        XCTAssertTrue(range.contains(FrameRate(60)))
        XCTAssertFalse(range.contains(FrameRate(61)))
        XCTAssertFalse(range.contains(FrameRate(Fraction(1, 2))))
        XCTAssertEqual(range.bestRate(atOrBelow: FrameRate(Fraction(2997, 100))), FrameRate(Fraction(2997, 100)))
        XCTAssertEqual(range.bestRate(atOrBelow: FrameRate(120)), FrameRate(60))
        XCTAssertNil(range.bestRate(atOrBelow: FrameRate(Fraction(1, 2))))
    }
}
