import AllocationCounter
import XCTest
@testable import MediaDevicesVideo
@testable import MediaDevicesCore

/// The test pattern lends the buffers it draws in to `frames` sequences, as a camera lends its
/// driver buffers: a sequence reads the frame in place (no 614 KB copy per 640x480 frame), a held
/// frame is never drawn over, and a lease that would leave no buffer to draw in is refused (that
/// frame is copied).
final class TestPatternLeaseTests: XCTestCase {
    func testSequenceFramesAreLentAndAHeldFrameIsNeverDrawnOver() async throws {
        let source = TestPatternSource(request: FormatRequest(pixelFormat: .yuyv, size: Size(width: 320, height: 240), frameRate: FrameRate(50)))
        defer { source.release() }
        let frames = source.frameSequence(bufferSize: 16)  // the concrete sequence: its lease counters
        try source.start()
        var held: [(frame: VideoFrameBuffer, bytes: [UInt8])] = []
        var read = 0, leased = 0, leasedWhileHoldingAll = 0
        for try await frame in frames {
            read += 1
            if frame.isLeased {
                leased += 1
                // Three held leases take every buffer but the one the next frame is drawn in.
                if held.count == 3 { leasedWhileHoldingAll += 1 }
                if held.count < 3 { held.append((frame, frame.withFrame { Array($0.plane(0).bytes) })) }
            }
            if read == 40 { break }
        }
        source.stop()
        XCTAssertEqual(read, 40)
        XCTAssertEqual(held.count, 3, "three frames came on lease: \(leased) of \(read)")
        XCTAssertEqual(leasedWhileHoldingAll, 0, "no lease is taken that leaves no buffer to draw in")
        XCTAssertEqual(frames.leasedFrames + frames.copiedFrames, read, "each frame read was leased or copied")
        XCTAssertGreaterThan(frames.copiedFrames, 0, "with three buffers held, frames are copied")
        // The bars move every frame: a held buffer drawn over would differ now.
        for (index, entry) in held.enumerated() {
            XCTAssertTrue(entry.frame.isLeased)
            XCTAssertEqual(entry.frame.withFrame { Array($0.plane(0).bytes) }, entry.bytes, "held frame \(index) (sequence \(entry.frame.sequence)) unchanged")
        }
        XCTAssertEqual(Set(held.map { $0.frame.withFrame { $0.plane(0).bytes.baseAddress } }).count, 3, "three buffers")
        held.forEach { $0.frame.release() }
    }

    /// The quick start's way of reading — the public, opaque `frames()` sequence in a task on the
    /// source's capture executor — allocates nothing per frame on the capture thread once it
    /// runs: the drawing, the lease, the queue and the reader's `next()` included.
    func testTheOpaqueSequenceOnTheCaptureExecutorAllocatesNothingPerFrame() async throws {
        let source = TestPatternSource(request: FormatRequest(pixelFormat: .yuyv, size: Size(width: 160, height: 120), frameRate: FrameRate(100)))
        defer { source.release() }
        let frames = source.frames(bufferSize: 4)
        try source.start()
        let counts = try await Task(executorPreference: source.captureExecutor) {
            var read = 0
            var first: UInt64 = 0
            for try await frame in frames {
                read += 1
                _ = frame.withFrame { $0.plane(0).bytes[0] }  // (no `first`: generic collection calls allocate in debug builds)
                if read == 20 { first = allocation_counter_this_thread() }
                if read == 120 { return (read, allocation_counter_this_thread() - first) }
            }
            return (read, UInt64.max)
        }.value
        source.stop()
        XCTAssertEqual(counts.0, 120)
        XCTAssertEqual(counts.1, 0, "heap allocations on the capture thread over 100 frames read through frames()")
    }
}
