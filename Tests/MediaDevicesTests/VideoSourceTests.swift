import Foundation
import TestSupport
import XCTest
@testable import MediaDevicesCore
@testable import MediaDevicesVideo

/// The members every source shares through ``VideoSource`` (one base, no per-source copies),
/// checked on the test pattern: the change-while-running sequence of the core and its
/// roll-back, `prepare()`, and the members that used to exist on some sources only.
final class VideoSourceTests: XCTestCase {
    /// A format change that fails while capturing puts the old format back and capture goes on
    /// in it, through the same sequence (`SourceCore.Control.whilePaused`'s roll-back).
    func testAFailedFormatChangeWhileCapturingRollsBackAndCaptureGoesOn() async throws {
        let request = FormatRequest(pixelFormat: .yuyv, size: Size(width: 160, height: 120), frameRate: FrameRate(60))
        let source: VideoSource = TestPatternSource(request: request)
        defer { source.release() }
        let frames = source.frames(bufferSize: 4)
        try source.start()
        var iterator = frames.makeAsyncIterator()
        _ = try await iterator.next()
        let before = try XCTUnwrap(source.negotiation)
        XCTAssertThrowsError(try source.setFormat(FormatRequest(pixelFormat: .mjpeg))) { error in
            XCTAssertEqual((error as? MediaDevicesError)?.code, .unsupportedFormat)
        }
        XCTAssertTrue(source.isCapturing, "capture resumed after the failed change")
        XCTAssertEqual(source.negotiation, before, "the old format is back")
        let after = try await iterator.next()
        XCTAssertEqual(after?.format.pixelFormat, .yuyv, "frames go on in the old format through the same sequence")
        XCTAssertEqual(after?.format.size, Size(width: 160, height: 120))
        source.stop()
    }

    /// A format change before `initialize()` negotiates (the source is then initialized); a
    /// failed one leaves the source as it was, not initialized.
    func testAFormatChangeBeforeInitializeNegotiatesAndAFailedOneChangesNothing() throws {
        let source = TestPatternSource()
        XCTAssertThrowsError(try source.setFormat(FormatRequest(pixelFormat: .mjpeg)))
        XCTAssertNil(source.negotiation, "a failed change before initialize leaves nothing negotiated")
        let negotiation = try source.setFormat(FormatRequest(pixelFormat: .grey, size: Size(width: 64, height: 48)))
        XCTAssertEqual(negotiation.format.pixelFormat, .grey)
        XCTAssertEqual(source.captureSettings, CaptureSettings(format: negotiation.format, frameRate: negotiation.frameRate))
        source.release()
        XCTAssertNil(source.negotiation, "release forgets the negotiation")
    }

    /// `prepare()` is `initialize()` for a source that waits for no person; the shared members
    /// exist on the test pattern as on a camera.
    func testPrepareInitializesAndTheSharedMembersApply() async throws {
        let source = TestPatternSource(request: FormatRequest(pixelFormat: .grey, size: Size(width: 64, height: 48), frameRate: FrameRate(100)))
        defer { source.release() }
        try await source.prepare()
        XCTAssertEqual(source.negotiation?.format.size, Size(width: 64, height: 48))
        source.frameTimeout = .seconds(5)
        XCTAssertEqual(source.frameTimeout, .seconds(5))
        let frames = source.frames(bufferSize: 2)
        try source.start()
        let executor = source.captureExecutor
        let count = try await Task(executorPreference: executor) {
            var count = 0
            for try await _ in frames {
                count += 1
                if count == 3 { break }
            }
            return count
        }.value
        XCTAssertEqual(count, 3, "a reader on the capture executor gets frames (through the global executor here)")
        source.stop()
        XCTAssertEqual(source.orientation, .up)
    }

    /// A reader on the test pattern's `captureExecutor` runs on the drawing thread itself, right
    /// after each frame: no second thread wakes for it (before, every job went to Swift's global
    /// executor, whose threads are named for libdispatch's root queues).
    func testAReaderOnTheCaptureExecutorRunsOnTheSourcesThread() async throws {
        let source = TestPatternSource(request: FormatRequest(pixelFormat: .yuyv, size: Size(width: 160, height: 120), frameRate: FrameRate(100)))
        let frames = source.frames(bufferSize: 2)
        try source.start()
        let threads = try await Task(executorPreference: source.captureExecutor) {
            var threads: [String] = []
            for try await _ in frames {
                threads.append(currentThreadName())
                if threads.count == 50 { break }
            }
            return threads
        }.value
        source.stop()
        XCTAssertEqual(threads.count, 50)
        XCTAssertEqual(Set(threads), ["md-testpattern"], "the loop body ran on the drawing thread")
    }
}
