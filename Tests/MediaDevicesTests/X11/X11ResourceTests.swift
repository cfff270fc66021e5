import Foundation
@testable import MediaDevices
import XCTest

/// What the X11 backend holds is given back: the connection (a socket descriptor) and the
/// shared-memory segment, after use and after a failed initialization.
final class X11ResourceTests: XCTestCase {
    private func openDescriptors() -> Int { (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1 }

    /// System V segments of this process still alive (created by us: `cpid` column).
    private func ownSegments() -> Int {
        guard let table = try? String(contentsOfFile: "/proc/sysvipc/shm", encoding: .utf8) else { return -1 }
        let pid = String(getpid())
        return table.split(separator: "\n").dropFirst().filter { $0.split(separator: " ", omittingEmptySubsequences: true).dropFirst(4).first.map(String.init) == pid }.count
    }

    func testConnectionsAndSegmentsAreReleasedAlsoOnErrors() throws {
        let server = try XvfbServer()
        defer { server.stop() }
        let screen = try XCTUnwrap(try ScreenSource.x11Screens(display: server.display).first)
        let (descriptors, segments) = (openDescriptors(), ownSegments())
        for round in 0..<10 {
            let source = ScreenSource(screen: screen, showsCursor: round % 2 == 0)
            try source.grabFrame { _ in }
            XCTAssertEqual(ownSegments(), segments + 1, "one segment while open")
            source.release()
            let failing = ScreenSource(screen: screen, region: Rect(x: 5000, y: 0, width: 10, height: 10))
            XCTAssertThrowsError(try failing.initialize())
        }
        XCTAssertEqual(openDescriptors(), descriptors, "every connection closed")
        // The server lets go of a segment when it handles the detach; give it a moment.
        let deadline = Date().addingTimeInterval(10)
        while ownSegments() != segments, Date() < deadline { usleep(10_000) }
        XCTAssertEqual(ownSegments(), segments, "every segment gone")
    }
}
