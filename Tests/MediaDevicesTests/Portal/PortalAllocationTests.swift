import AllocationCounter
@testable import MediaDevices
@testable import MediaDevicesAudio
@testable import MediaDevicesVideo
@testable import MediaDevicesCore
import TestSupport
import XCTest

/// The portal grabber's steady state in a headless Wayland session: a grab dispatches the
/// PipeWire loop without waiting and lends the held buffer, so neither a grab that lends the
/// picture nor one that finds nothing new allocates anything.
final class PortalAllocationTests: XCTestCase {
    func testGrabsAllocateNothing() throws {
        if let why = AllocationProbe.unavailableReason { throw XCTSkip(why) }
        XCTAssertTrue(AllocationProbe.isActive, "malloc is interposed in the test binary")
        let session = try WaylandSession()
        defer { try? session.stop() }
        let screen = try XCTUnwrap(try ScreenSource.portalScreens(busAddress: session.busAddress).first)
        let source = ScreenSource(screen: screen)
        defer { source.release() }
        try session.initializeWhileRedrawing(source)
        let grabber = try XCTUnwrap(source.portalGrabber)
        for _ in 0..<5 { _ = try grabber.grab(timestamp: MonotonicInstant(nanoseconds: 0), sequence: 0, onlyIfChanged: false) { _ in } }
        let count = 50
        var lent = 0
        var start = allocation_counter_this_thread()
        for _ in 0..<count where try grabber.grab(timestamp: MonotonicInstant(nanoseconds: 0), sequence: 0, onlyIfChanged: false, { _ in }) == .delivered { lent += 1 }
        let lending = allocation_counter_this_thread() - start
        var unchanged = 0
        start = allocation_counter_this_thread()
        for _ in 0..<count where try grabber.grab(timestamp: MonotonicInstant(nanoseconds: 0), sequence: 0, onlyIfChanged: true, { _ in }) == .unchanged { unchanged += 1 }
        let skipping = allocation_counter_this_thread() - start
        print("portal grab: \(lending) allocations in \(count) lending grabs, \(skipping) in \(count) unchanged grabs")
        XCTAssertEqual(lent, count)
        XCTAssertEqual(unchanged, count, "a still screen")
        XCTAssertEqual(lending, 0, "lending the held buffer allocates nothing")
        XCTAssertEqual(skipping, 0, "an unchanged grab allocates nothing")
    }
}
