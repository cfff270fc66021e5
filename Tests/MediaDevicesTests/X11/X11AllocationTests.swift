import AllocationCounter
@testable import MediaDevices
@testable import MediaDevicesAudio
@testable import MediaDevicesVideo
@testable import MediaDevicesCore
import TestSupport
import XCTest

/// The X11 grabber's steady state on a private Xvfb, with a memfd and with a System V
/// segment: the segment is reused, so a grab allocates no pixel buffer, nor anything else of
/// ours. What remains is libxcb's: it mallocs each reply it reads (measured here on a plain round trip of the test's own client). A grab
/// skipped by DAMAGE allocates nothing at all.
final class X11AllocationTests: XCTestCase {
    func testGrabsAllocateNoMoreThanLibxcbsRoundTripAndSkippedGrabsNothing() throws {
        if let why = AllocationProbe.unavailableReason { throw XCTSkip(why) }
        XCTAssertTrue(AllocationProbe.isActive, "malloc is interposed in the test binary")
        let server = try XvfbServer(width: 1920, height: 1080)
        defer { server.stop() }
        let screen = try XCTUnwrap(try ScreenSource.x11Screens(display: server.display).first)
        let client = try X11TestClient(display: server.display)
        for sharing in X11SharedMemory.Sharing.allCases {
            try measure(try X11ScreenGrabber(screen: screen, region: nil, showsCursor: false, sharing: sharing), client)
        }
    }

    /// Grabs of `grabber` against round trips of `client`, then grabs skipped by DAMAGE.
    private func measure(_ grabber: X11ScreenGrabber, _ client: X11TestClient) throws {
        for _ in 0..<5 {
            _ = try grabber.grab(timestamp: MonotonicInstant(nanoseconds: 0), sequence: 0, onlyIfChanged: false) { _ in }
            client.sync()
        }
        let count = 50
        var start = allocation_counter_this_thread()
        for _ in 0..<count { client.sync() }
        let roundTrip = Double(allocation_counter_this_thread() - start) / Double(count)
        start = allocation_counter_this_thread()
        for _ in 0..<count { _ = try grabber.grab(timestamp: MonotonicInstant(nanoseconds: 0), sequence: 0, onlyIfChanged: false) { _ in } }
        let perGrab = Double(allocation_counter_this_thread() - start) / Double(count)
        print("X11 grab of 1920x1080 (\(grabber.sharing)): \(perGrab) allocations per grab; a bare libxcb round trip: \(roundTrip)")
        XCTAssertLessThanOrEqual(perGrab, roundTrip, "only what libxcb allocates for the ShmGetImage reply")

        var skipped = 0
        let cpu = threadCPUNanoseconds()
        start = allocation_counter_this_thread()
        for _ in 0..<count where try grabber.grab(timestamp: MonotonicInstant(nanoseconds: 0), sequence: 0, onlyIfChanged: true, { _ in }) == .unchanged { skipped += 1 }
        let allocations = allocation_counter_this_thread() - start
        print("X11 grab skipped by DAMAGE: \(String(format: "%.1f", Double(threadCPUNanoseconds() - cpu) / 1e3 / Double(count))) µs CPU each")
        XCTAssertEqual(skipped, count, "a still screen")
        XCTAssertEqual(allocations, 0, "a grab skipped by DAMAGE allocates nothing")
    }

    private func threadCPUNanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }
}
