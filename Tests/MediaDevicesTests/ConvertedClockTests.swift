import XCTest
@testable import MediaDevicesAudio

/// The converter's clock: counts what came out from the first input's stamp; steadied stamps
/// move it by their smaller strays, other stamps only by a jump past the tolerance.
final class ConvertedClockTests: XCTestCase {
    private let period = 10_000_000.0

    /// Two inputs, the second stamped `stray` ns off where the first ended; the clock's `next`
    /// after the first input's output came out.
    private func next(stray: Double, steady: Bool) -> Double {
        var clock = ConvertedClock()
        clock.input(at: 1_000_000_000, duration: period, delay: 0, afterGap: false, steady: steady)
        clock.output(period)
        clock.input(at: Int64(1_000_000_000 + period + stray), duration: period, delay: 0, afterGap: false, steady: steady)
        return clock.next
    }

    func testSteadyStampsMoveItByASmallStray() {
        XCTAssertEqual(next(stray: -3_200_000, steady: true), 1_000_000_000 + period - 3_200_000, "the line settled 3.2 ms earlier")
        XCTAssertEqual(next(stray: 2_000, steady: true), 1_000_000_000 + period + 2_000)
    }

    func testOtherStampsMoveItOnlyByAJump() {
        XCTAssertEqual(next(stray: -3_200_000, steady: false), 1_000_000_000 + period, "a server's jitter is not followed")
        XCTAssertEqual(next(stray: 9_000_000, steady: false), 1_000_000_000 + period + 9_000_000, "past the tolerance it starts over")
        XCTAssertEqual(next(stray: 9_000_000, steady: true), 1_000_000_000 + period + 9_000_000)
    }
}
