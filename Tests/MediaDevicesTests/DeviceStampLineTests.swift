import XCTest
@testable import MediaDevicesAudio

/// The device's period stamps steadied: late stamps (ALSA's, taken when the position is read
/// rather than when the hardware moved it) do not move the times; the earliest stamps do.
final class DeviceStampLineTests: XCTestCase {
    private let period = 10_000_000.0  // 10 ms

    /// Feeds `count` periods whose true start is `start + index × period × (1 + ppm)` and whose
    /// stamps are that plus `late(index)`; the line's times less the truth.
    private func errors(_ line: inout DeviceStampLine, count: Int, start: Double = 1e12, ppm: Double = 0,
                        late: (Int) -> Double) -> [Double] {
        (0..<count).map { index in
            let truth = start + Double(index) * period * (1 + ppm / 1e6)
            return Double(line.time(for: Int64(truth + late(index)), duration: period, afterGap: false)) - truth
        }
    }

    func testALateFirstStampIsLeftForTheFirstEarlierOne() {
        var line = DeviceStampLine()
        // The first period stamped 3.2 ms late (the error a capture used to keep), the rest
        // between 0 and 9 ms late, one in eight on time.
        let found = errors(&line, count: 400) { index in index == 0 ? 3_200_000 : index % 8 == 5 ? 0 : Double((index * 7_919) % 9_000_000) }
        XCTAssertEqual(found[0], 3_200_000, accuracy: 1, "nothing earlier known yet")
        XCTAssertEqual(found[5], 0, accuracy: 1, "the first on-time stamp is taken")
        XCTAssertLessThanOrEqual(found[5...].map(abs).max()!, 1, "and the line holds through the late ones: \(found[5...].max()!) ns")
    }

    func testADeviceSlowerThanTheMonotonicClockIsFollowed() {
        var line = DeviceStampLine()
        // 300 ppm slow (its 10 ms periods last 10.003 ms of the monotonic clock), stamps 0–6 ms
        // late with one in ten on time: the line lags by no more than two windows' drift (0.15 ms
        // each: it moves up by the least delay of a window, seen early in it).
        let found = errors(&line, count: 6000, ppm: 300) { index in index % 10 == 3 ? 0 : Double((index * 104_729) % 6_000_000) }
        XCTAssertLessThanOrEqual(found.suffix(3000).map(abs).max()!, 310_000, "worst \(found.suffix(3000).map(abs).max()!) ns")
    }

    func testADeviceFasterThanTheMonotonicClockIsFollowed() {
        var line = DeviceStampLine()
        let found = errors(&line, count: 6000, ppm: -300) { index in index % 10 == 3 ? 0 : Double((index * 104_729) % 6_000_000) }
        // Ahead by 3 µs a period until the next on-time stamp (one in ten) is taken.
        XCTAssertLessThanOrEqual(found.suffix(3000).map(abs).max()!, 30_000, "early stamps are taken at once: worst \(found.suffix(3000).map(abs).max()!) ns")
    }

    func testFramesLostWithoutAnOverrunMoveTheLineWithinAWindow() {
        var line = DeviceStampLine()
        // 5 ms of audio lost after period 100, unreported: every period from then on began 5 ms
        // later than the count says, and is stamped so (plus the usual late ones).
        let found = errors(&line, count: 300) { index in (index > 100 ? 5_000_000 : 0) + (index % 4 == 0 ? 0 : 2_000_000) }
        XCTAssertEqual(found[99], 0, accuracy: 1)
        XCTAssertEqual(found[102], 0, accuracy: 1, "the loss is taken only once a window of stamps agrees")
        XCTAssertEqual(found[200...].min()!, 5_000_000, accuracy: 1, "and then followed")
        XCTAssertEqual(found[200...].max()!, 5_000_000, accuracy: 1)
    }

    func testAJumpOrAGapStartsTheLineOver() {
        var line = DeviceStampLine()
        _ = errors(&line, count: 20) { _ in 0 }
        let jump = 1e12 + 20 * period + 50_000_000  // 50 ms later than the line: over the tolerance
        XCTAssertEqual(line.time(for: Int64(jump), duration: period, afterGap: false), Int64(jump))
        let afterGap = jump + period + 3_000_000
        XCTAssertEqual(line.time(for: Int64(afterGap), duration: period, afterGap: true), Int64(afterGap), "a reported gap takes the stamp as it is")
        XCTAssertEqual(line.time(for: Int64(afterGap + period + 4_000_000), duration: period, afterGap: false), Int64(afterGap + period),
                       "and the line goes on from it")
    }
}
