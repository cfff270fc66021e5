import Foundation
@testable import MediaDevices
@testable import MediaDevicesAudio
@testable import MediaDevicesVideo
@testable import MediaDevicesCore
import XCTest

/// What the X11 backend holds is given back: the connection (a socket descriptor) and the
/// shared memory — a memfd (descriptor and mapping) or a System V segment — after use and
/// after a failed initialization.
final class X11ResourceTests: XCTestCase {
    private func openDescriptors() -> Int { (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1 }

    /// A /proc file read to its end (`String(contentsOfFile:)` stops after the first page of one).
    private func procFile(_ path: String) -> String? {
        FileHandle(forReadingAtPath: path).map { String(decoding: $0.readDataToEndOfFile(), as: UTF8.self) }
    }

    /// System V segments of this process still alive (created by us: `cpid` column).
    private func ownSegments() -> Int {
        guard let table = procFile("/proc/sysvipc/shm") else { return -1 }
        let pid = String(getpid())
        return table.split(separator: "\n").dropFirst().filter { $0.split(separator: " ", omittingEmptySubsequences: true).dropFirst(4).first.map(String.init) == pid }.count
    }

    /// The grabber's memfds open in this process: descriptors that name one, and mappings of one.
    private func ownMemfds() -> (descriptors: Int, mappings: Int) {
        let name = "/memfd:mediadevices-x11"
        let descriptors = ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []).filter {
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)"))?.hasPrefix(name) == true
        }.count
        let maps = procFile("/proc/self/maps") ?? ""
        return (descriptors, maps.split(separator: "\n").filter { $0.contains(name) }.count)
    }

    /// By default (Xvfb takes a memfd): one memfd descriptor and mapping while open, no System V
    /// segment; everything back as it was after release and after failed initializations.
    func testConnectionsAndMemfdsAreReleasedAlsoOnErrors() throws {
        let server = try XvfbServer()
        defer { server.stop() }
        let screen = try XCTUnwrap(try ScreenSource.x11Screens(display: server.display).first)
        let (descriptors, segments, memfds) = (openDescriptors(), ownSegments(), ownMemfds())
        XCTAssertEqual(memfds.descriptors, 0)
        for round in 0..<10 {
            let source = ScreenSource(screen: screen, showsCursor: round % 2 == 0)
            try source.grabFrame { _ in }
            XCTAssertEqual(ownMemfds().descriptors, 1, "one memfd while open")
            XCTAssertEqual(ownMemfds().mappings, memfds.mappings + 1, "one mapping of it")
            XCTAssertEqual(ownSegments(), segments, "no System V segment")
            source.release()
            let failing = ScreenSource(screen: screen, region: Rect(x: 5000, y: 0, width: 10, height: 10))
            XCTAssertThrowsError(try failing.initialize())
        }
        XCTAssertEqual(openDescriptors(), descriptors, "every connection and memfd closed")
        XCTAssertEqual(ownMemfds().descriptors, 0, "no memfd open")
        XCTAssertEqual(ownMemfds().mappings, memfds.mappings, "every memfd unmapped")
    }

    func testConnectionsAndSystemVSegmentsAreReleasedAlsoOnErrors() throws {
        let server = try XvfbServer()
        defer { server.stop() }
        let screen = try XCTUnwrap(try ScreenSource.x11Screens(display: server.display).first)
        let (descriptors, segments, memfds) = (openDescriptors(), ownSegments(), ownMemfds())
        for round in 0..<10 {
            var grabber: X11ScreenGrabber? = try X11ScreenGrabber(screen: screen, region: nil, showsCursor: round % 2 == 0, sharing: .systemV)
            _ = try grabber?.grab(timestamp: MonotonicInstant(nanoseconds: 0), sequence: 0, onlyIfChanged: false) { _ in }
            XCTAssertEqual(ownSegments(), segments + 1, "one segment while open")
            XCTAssertEqual(ownMemfds().descriptors, 0, "no memfd")
            grabber = nil
            XCTAssertThrowsError(try X11ScreenGrabber(screen: screen, region: Rect(x: 5000, y: 0, width: 10, height: 10),
                                                      showsCursor: false, sharing: .systemV))
        }
        XCTAssertEqual(openDescriptors(), descriptors, "every connection closed")
        XCTAssertEqual(ownMemfds().mappings, memfds.mappings)
        // The server lets go of a segment when it handles the detach; give it a moment.
        let deadline = Date().addingTimeInterval(10)
        while ownSegments() != segments, Date() < deadline { usleep(10_000) }
        XCTAssertEqual(ownSegments(), segments, "every segment gone")
    }

    /// A memfd the server refuses (attached twice under one segment id: `BadIDChoice`) leaves
    /// nothing behind.
    func testARefusedMemfdIsClosedAndUnmapped() throws {
        let server = try XvfbServer()
        defer { server.stop() }
        let x = try X11Connection(display: server.display)
        let (descriptors, memfds) = (openDescriptors(), ownMemfds())
        let memory = try X11SharedMemory(x, byteCount: 4096, sharing: .memfd)
        XCTAssertEqual(ownMemfds().descriptors, 1)
        XCTAssertThrowsError(try X11SharedMemory(x, byteCount: 4096, sharing: .memfd, segment: memory.segment)) {
            XCTAssertEqual(($0 as? MediaDevicesError)?.operation, "ShmAttachFd", "\($0)")
        }
        XCTAssertEqual(ownMemfds().descriptors, 1, "the refused one closed")
        XCTAssertEqual(ownMemfds().mappings, memfds.mappings + 1, "the refused one unmapped")
        withExtendedLifetime(memory) {}
        XCTAssertEqual(openDescriptors(), descriptors + 1, "the first memfd only")
    }
}
