import Dispatch
import Foundation
import Synchronization
import XCTest
@testable import MediaDevicesVideo
@testable import MediaDevicesCore

/// Issue 54, a source the application makes: frames sent (copied, drawn on) reach the source's
/// sequences with the drawing and the sender's timestamps, in the source's buffers on lease;
/// sends while not capturing are refused; a frame of another format is a clear error; an
/// upstream runs exactly while the application source runs.
final class ApplicationSourceTests: XCTestCase {
    private let format = VideoFormat(pixelFormat: .yu12, width: 64, height: 48)

    func testSentFramesArriveDrawnOnWithTheirTimestampsOnLease() async throws {
        let source = try ApplicationSource(format: format)
        defer { source.release() }
        XCTAssertFalse(source.send { _ in XCTFail("not called while not capturing") }, "refused before start()")
        let frames = source.frameSequence(bufferSize: 16)
        try source.start()
        XCTAssertEqual(source.negotiation?.format, format)
        // A padded upstream frame (row stride 80 for 64 pixels of luma, 40 for 32 of chroma).
        let sender = Task.detached {
            var upstream = [UInt8](repeating: 0, count: 80 * 48 + 2 * 40 * 24)
            for index in 0..<10 {
                upstream.withUnsafeMutableBytes { bytes in
                    for row in 0..<48 { for column in 0..<64 { bytes[row * 80 + column] = UInt8(index * 10) } }
                }
                try upstream.withUnsafeBytes { bytes in
                    let frame = VideoFrame(format: VideoFormat(pixelFormat: .yu12, width: 64, height: 48, bytesPerRow: [80, 40, 40],
                                                               bufferSizes: [bytes.count]),
                                           timestamp: MonotonicInstant(nanoseconds: 1_000_000 * UInt64(index + 1)), sequence: UInt32(index),
                                           orientation: .up, captureDelay: .zero, planeCount: 3, bytesUsed: bytes.count,
                                           plane0: FramePlane(bytes: UnsafeRawBufferPointer(rebasing: bytes[0..<(80 * 48)]), bytesPerRow: 80),
                                           plane1: FramePlane(bytes: UnsafeRawBufferPointer(rebasing: bytes[(80 * 48)..<(80 * 48 + 40 * 24)]), bytesPerRow: 40),
                                           plane2: FramePlane(bytes: UnsafeRawBufferPointer(rebasing: bytes[(80 * 48 + 40 * 24)...]), bytesPerRow: 40))
                    let sent = try source.send(frame) { picture in
                        XCTAssertEqual(picture.plane(0).bytesPerRow, 64, "the source's buffer is tightly packed")
                        picture.plane(0).bytes[0] = 255    // the drawing: the first luma byte
                    }
                    XCTAssertTrue(sent)
                }
                try await Task.sleep(for: .milliseconds(30))
            }
        }
        var read: [(timestamp: UInt64, first: UInt8, second: UInt8, leased: Bool)] = []
        for try await frame in frames {
            read.append((frame.timestamp.nanoseconds, frame.withFrame { $0.plane(0).bytes[0] }, frame.withFrame { $0.plane(0).bytes[65] },
                         frame.isLeased))
            if read.count == 10 { break }
        }
        try await sender.value
        source.stop()
        XCTAssertEqual(read.map(\.timestamp), (1...10).map { UInt64($0) * 1_000_000 }, "the sender's timestamps, in order")
        XCTAssertTrue(read.allSatisfy { $0.first == 255 }, "the drawing is on every frame")
        XCTAssertEqual(read.map(\.second), (0..<10).map { UInt8($0 * 10) }, "each frame's own pixels (row 1 of the padded upstream)")
        XCTAssertGreaterThan(read.filter(\.leased).count, 0, "frames come on lease from the source's buffers")
        XCTAssertFalse(source.send { _ in }, "refused after stop()")
    }

    func testAFrameOfAnotherSizeIsAClearError() throws {
        let source = try ApplicationSource(format: format)
        defer { source.release() }
        try source.start()
        defer { source.stop() }
        var bytes = [UInt8](repeating: 0, count: 32 * 24 * 2)
        let error = bytes.withUnsafeMutableBytes { raw -> MediaDevicesError? in
            let frame = VideoFrame(format: VideoFormat(pixelFormat: .yuyv, width: 32, height: 24), timestamp: MonotonicInstant(nanoseconds: 1),
                                   sequence: 0, orientation: .up, captureDelay: .zero, planeCount: 1, bytesUsed: raw.count,
                                   plane0: FramePlane(bytes: UnsafeRawBufferPointer(raw), bytesPerRow: 64))
            do throws(MediaDevicesError) { try source.send(frame); return nil } catch { return error }
        }
        XCTAssertEqual(error?.code, .unsupportedFormat)
        XCTAssertTrue(error?.detail.contains("YUYV 32x24") == true && error?.detail.contains("YU12 64x48") == true, "\(String(describing: error))")
        // The right format, but one plane where I420 has three.
        var planar = [UInt8](repeating: 0, count: 64 * 48 * 3 / 2)
        let short = planar.withUnsafeMutableBytes { raw -> MediaDevicesError? in
            let frame = VideoFrame(format: format, timestamp: MonotonicInstant(nanoseconds: 1), sequence: 0, orientation: .up,
                                   captureDelay: .zero, planeCount: 1, bytesUsed: raw.count,
                                   plane0: FramePlane(bytes: UnsafeRawBufferPointer(raw), bytesPerRow: 64))
            do throws(MediaDevicesError) { try source.send(frame); return nil } catch { return error }
        }
        XCTAssertEqual(short?.code, .unsupportedFormat, "a frame with fewer planes than its format: \(String(describing: short))")
        XCTAssertThrowsError(try ApplicationSource(format: VideoFormat(pixelFormat: .mjpeg, width: 64, height: 48))) {
            XCTAssertEqual(($0 as? MediaDevicesError)?.code, .unsupportedFormat, "a compressed format is refused")
        }
    }

    func testTheUpstreamRunsExactlyWhileTheApplicationSourceRuns() throws {
        let upstream = TestPatternSource(request: FormatRequest(pixelFormat: .yu12, size: Size(width: 64, height: 48), frameRate: FrameRate(50)))
        defer { upstream.release() }
        let source = try ApplicationSource(format: format, upstream: upstream)
        defer { source.release() }
        XCTAssertFalse(upstream.isCapturing)
        try source.start()
        XCTAssertTrue(upstream.isCapturing, "started with the application source")
        source.stop()
        XCTAssertFalse(upstream.isCapturing, "stopped with it")
        try source.start()
        XCTAssertTrue(upstream.isCapturing, "and again")
        source.release()
        XCTAssertFalse(upstream.isCapturing)
    }

    /// The upstream's own consumer stopping the application source (an unplugged camera's
    /// `captureDidStop` would) returns, and both stop: no thread waits for another that waits
    /// for it.
    func testStoppingFromTheUpstreamsConsumerStopsBoth() throws {
        let upstream = TestPatternSource(request: FormatRequest(pixelFormat: .yu12, size: Size(width: 64, height: 48), frameRate: FrameRate(100)))
        defer { upstream.release() }
        let source = try ApplicationSource(format: format, upstream: upstream)
        defer { source.release() }
        let stopper = StopOnFirstFrame(source: source)
        upstream.consumer = stopper
        try source.start()
        XCTAssertEqual(stopper.stopped.wait(timeout: .now() + 10), .success, "stop() called from the upstream's consumer returned")
        let deadline = Date().addingTimeInterval(10)
        while (source.isCapturing || upstream.isCapturing) && Date() < deadline { usleep(10_000) }
        XCTAssertFalse(source.isCapturing, "the application source stopped")
        XCTAssertFalse(upstream.isCapturing, "and its upstream")
    }

    /// A frame sent before the capture thread took the previous one replaces it: the newest
    /// wins, and the one replaced shows as a sequence gap.
    func testAFrameSentBeforeThePreviousWasTakenReplacesIt() throws {
        let buffers = ApplicationFrameBuffers(count: 2, size: 16)
        XCTAssertEqual(buffers.fill(timestamp: 1) { _ in XCTFail("no run: not called") }, .refused)
        buffers.startAccepting()
        XCTAssertEqual(buffers.fill(timestamp: 1) { $0.storeBytes(of: 1, as: UInt8.self) }, .staged(replaced: false))
        XCTAssertEqual(buffers.fill(timestamp: 2) { target in
            target.storeBytes(of: 2, as: UInt8.self)
            // No lock is held while a frame is drawn: a second send meanwhile is told at once.
            XCTAssertEqual(buffers.fill(timestamp: 9) { _ in XCTFail("not called while another fills") }, .busy)
        }, .staged(replaced: true), "replaces the one not taken")
        let taken = try XCTUnwrap(buffers.take())
        XCTAssertEqual(taken.timestamp, 2)
        XCTAssertEqual(taken.sequence, 1, "frame 0 was replaced: a gap before 1")
        XCTAssertEqual(taken.buffer.load(as: UInt8.self), 2)
        buffers.endDelivery()
        XCTAssertNil(buffers.take(), "nothing staged")
        // A frame whose run ends (and another starts) while it is being filled is not delivered.
        XCTAssertEqual(buffers.fill(timestamp: 3) { _ in buffers.stopAccepting(); buffers.startAccepting() }, .refused)
        XCTAssertNil(buffers.take(), "the frame of the run that ended is not staged for the next")
        XCTAssertEqual(buffers.fill(timestamp: 4) { $0.storeBytes(of: 4, as: UInt8.self) }, .staged(replaced: false))
        buffers.stopAccepting()
        XCTAssertNil(buffers.take(), "a stop forgets the staged frame")
    }
}

/// The upstream's consumer in `testStoppingFromTheUpstreamsConsumerStopsBoth`.
private final class StopOnFirstFrame: VideoFrameConsumer, @unchecked Sendable {
    weak let source: ApplicationSource?
    let stopped = DispatchSemaphore(value: 0)
    private let once = Mutex(false)

    init(source: ApplicationSource) { self.source = source }

    func consumeFrame(_ frame: VideoFrame) {
        guard once.withLock({ done in defer { done = true }; return !done }) else { return }
        source?.stop()
        stopped.signal()
    }
}
