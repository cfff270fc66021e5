import AllocationCounter
import Foundation
import XCTest
@testable import MediaDevicesVideo
@testable import MediaDevicesCore

/// An X11 screen lends its shared segments to `frames` sequences, as a camera lends its driver
/// buffers: a sequence reads the grab in place (no 1.2 MB copy per 640x480 frame), a held frame
/// is never grabbed over, a lease that would leave no segment to grab into is refused (that
/// frame is copied), and a reader on the capture executor keeps the source on one segment.
/// Against X11ScreenTests' private Xvfb; without it these tests fail (they never skip).
extension X11ScreenTests {
    private func source(rate: Int) throws -> ScreenSource {
        let screen = try XCTUnwrap(try ScreenSource.x11Screens(display: server.display).first)
        return ScreenSource(screen: screen, frameRate: FrameRate(rate), skipsUnchangedFrames: false)
    }

    /// The corner pixel of a grab (0x00RRGGBB), which the test paints anew after each frame read.
    private static func corner(_ frame: VideoFrame) -> UInt32 {
        frame.plane(0).bytes.load(as: UInt32.self) & 0xFFFFFF
    }

    func testSequenceFramesAreLentAndAHeldFrameIsNeverGrabbedOver() async throws {
        let source = try source(rate: 30)
        defer { source.release() }
        let frames = source.frameSequence(bufferSize: 16)  // the concrete sequence: its lease counters
        try source.start()
        var held: [(frame: VideoFrameBuffer, corner: UInt32, bytes: [UInt8])] = []
        var read = 0, leasedWhileHoldingAll = 0
        var cornersAfterHolding = Set<UInt32>()
        for try await frame in frames {
            read += 1
            if held.count == 3 { cornersAfterHolding.insert(frame.withFrame(Self.corner)) }
            if frame.isLeased {
                // Three held leases take every segment but the one the next grab goes into.
                if held.count == 3 { leasedWhileHoldingAll += 1 }
                if held.count < 3 { held.append((frame, frame.withFrame(Self.corner), frame.withFrame { Array($0.plane(0).bytes) })) }
            }
            // A new picture in the corner for the grabs to come.
            client.draw((0, 0, 8, 8)) { _, _ in UInt32(read * 0x010203) & 0xFFFFFF }
            if read == 30 { break }
        }
        let statistics = source.statistics
        source.stop()
        XCTAssertEqual(held.count, 3, "three frames came on lease: \(frames.leasedFrames) of \(read)")
        XCTAssertEqual(leasedWhileHoldingAll, 0, "no lease is taken that leaves no segment to grab into")
        XCTAssertEqual(frames.leasedFrames + frames.copiedFrames, read, "each frame read was leased or copied")
        XCTAssertGreaterThan(frames.copiedFrames, 0, "with three segments held, frames are copied")
        XCTAssertEqual(statistics.buffers, 4, "the segments came into use as leases held them, up to four")
        // The screen went on changing while the frames were held: grabbed over, they would differ now.
        XCTAssertFalse(cornersAfterHolding.subtracting(held.map(\.corner)).isEmpty,
                       "later frames show other pictures than the held ones (\(held.map(\.corner))): \(cornersAfterHolding)")
        for (index, entry) in held.enumerated() {
            XCTAssertTrue(entry.frame.isLeased)
            XCTAssertEqual(entry.frame.withFrame { Array($0.plane(0).bytes) }, entry.bytes,
                           "held frame \(index) (sequence \(entry.frame.sequence)) unchanged while the screen changed")
        }
        XCTAssertEqual(Set(held.map { $0.frame.withFrame { $0.plane(0).bytes.baseAddress } }).count, 3, "three segments")
        held.forEach { $0.frame.release() }
    }

    /// The quick start's way of reading — the opaque `frames()` sequence in a task on the
    /// source's capture executor — gets every frame on lease from one segment (each frame comes
    /// back before the next grab), and allocates nothing per frame on the capture thread but
    /// what libxcb allocates for each reply (`X11AllocationTests` counts those).
    func testAReaderOnTheCaptureExecutorReadsEveryFrameInPlaceFromOneSegment() async throws {
        let source = try source(rate: 60)
        defer { source.release() }
        let frames = source.frameSequence(bufferSize: 4)
        try source.start()
        let (read, leased, addresses) = try await Task(executorPreference: source.captureExecutor) {
            var read = 0, leased = 0
            var addresses = Set<Int>()
            for try await frame in frames {
                read += 1
                if frame.isLeased { leased += 1 }
                addresses.insert(frame.withFrame { Int(bitPattern: $0.plane(0).bytes.baseAddress) })
                frame.release()
                if read == 40 { break }
            }
            return (read, leased, addresses)
        }.value
        let statistics = source.statistics
        source.stop()
        XCTAssertEqual(read, 40)
        XCTAssertEqual(leased, 40, "every frame read in place")
        XCTAssertEqual(frames.copiedFrames, 0)
        XCTAssertEqual(addresses.count, 1, "one segment serves a reader on the capture executor")
        XCTAssertEqual(statistics.buffers, 1)
    }
}
