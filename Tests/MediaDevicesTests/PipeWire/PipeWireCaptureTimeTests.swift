import XCTest
@testable import MediaDevicesVideo
@testable import MediaDevicesCore

/// A PipeWire camera frame's timestamp: the buffer's own time (SPA's V4L2 and libcamera sources
/// put the capture time in the header's pts, on CLOCK_MONOTONIC) when it reads as an instant of
/// that clock shortly before the buffer came out; the time it came out otherwise.
final class PipeWireCaptureTimeTests: XCTestCase {
    private let taken = MonotonicInstant(nanoseconds: 50_000_000_000)

    func testTheBuffersOwnTimeIsTakenWithTheDelaySinceIt() {
        let (timestamp, delay) = PipeWireCameraPump.captureTime(pts: 49_996_500_000, taken: taken)
        XCTAssertEqual(timestamp.nanoseconds, 49_996_500_000)
        XCTAssertEqual(delay, .nanoseconds(3_500_000))
    }

    func testNoTimeAFutureOneOrAnotherClocksFallBackToTheTimeTaken() {
        for pts: Int64 in [-1, 0, 50_000_000_001, 47_000_000_000, 33_333_333] {
            let (timestamp, delay) = PipeWireCameraPump.captureTime(pts: pts, taken: taken)
            XCTAssertEqual(timestamp, taken, "pts \(pts)")
            XCTAssertEqual(delay, .zero, "pts \(pts)")
        }
        XCTAssertEqual(PipeWireCameraPump.captureTime(pts: 48_000_000_000, taken: taken).0.nanoseconds, 48_000_000_000,
                       "2 s before is still taken (a stalled graph delivers late)")
    }
}
