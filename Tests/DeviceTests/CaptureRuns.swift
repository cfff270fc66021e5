import Foundation
import MediaDevices
import TestSupport
import XCTest

/// Capture runs several device tests share: the allocation-probe runs (with the `frames`
/// sequence unread, or read on lease on the capture thread) and holding a sequence's first frame.
/// The caller makes the source, releases it and asserts on what the run returns.
enum CaptureRuns {
    /// Runs `source` with an `AllocationProbe` (`warmUp` frames, then `measured`) as its callback
    /// consumer and a `frames(bufferSize: 2)` sequence that nobody reads (copied into its pool,
    /// oldest dropped), until the measured frames have passed (at most 60 s); then stops it.
    static func allocationsWithTheSequenceUnread(_ source: some VideoSource, warmUp: Int, measured: Int,
                                                 file: StaticString = #filePath, line: UInt = #line) throws
        -> (probe: AllocationProbe, frames: VideoFrames) {
        let probe = AllocationProbe(warmUp: warmUp, measured: measured)
        source.consumer = probe
        let frames = source.frameSequence(bufferSize: 2)
        try source.start()
        XCTAssertEqual(probe.done.wait(timeout: .now() + 60), .success, "\(warmUp + measured) frames arrived", file: file, line: line)
        source.stop()
        return (probe, frames)
    }

    /// Runs `source` with an `AllocationProbe` (10 frames, then 50 measured) as its callback
    /// consumer and a reader that keeps up, on the capture thread (the source's executor): `read`
    /// iterates a `frames(bufferSize: 2)` sequence, whose frames come on lease and go back to the
    /// driver as it moves on; waking the reader costs no hand-off. Once the measured frames have
    /// passed (at most 60 s) the source stops, and this returns with what `read` returned.
    ///
    /// `readerAfterStart`: the reader is made after `start()` with the executor as its task's
    /// preference, as the step-by-step capture of the DocC article CamerasAndFormats does; otherwise it is made before, and takes the
    /// preference inside (`withTaskExecutorPreference`).
    static func allocationsWithALeasedReader<Value: Sendable>(
        _ source: CameraSource, readerAfterStart: Bool = false, file: StaticString = #filePath, line: UInt = #line,
        _ read: @escaping @Sendable (_ frames: VideoFrames, _ probe: AllocationProbe) async throws -> Value
    ) async throws -> (probe: AllocationProbe, frames: VideoFrames, read: Value) {
        let probe = AllocationProbe(warmUp: 10, measured: 50)
        source.consumer = probe
        let frames = source.frameSequence(bufferSize: 2)
        let executor = source.captureExecutor
        let early = readerAfterStart ? nil : Task {
            try await withTaskExecutorPreference(executor) { try await read(frames, probe) }
        }
        try source.start()
        let reader = early ?? Task(executorPreference: executor) { try await read(frames, probe) }
        let arrived = await Soak.wait(probe.done, seconds: 60)  // not blocking: the reader may need this thread
        XCTAssertTrue(arrived, "60 frames arrived", file: file, line: line)
        source.stop()
        return (probe, frames, try await reader.value)
    }

    /// Starts `source` with a new `frames(bufferSize: 2)` sequence and takes its first frame, for
    /// the caller to hold (on lease where the source lends its buffers). Returns the sequence, its
    /// iterator (at the second frame) and the held frame.
    static func startHoldingTheFirstFrame(of source: some VideoSource, file: StaticString = #filePath, line: UInt = #line) async throws
        -> (frames: VideoFrames, iterator: VideoFrames.AsyncIterator, held: VideoFrameBuffer) {
        let frames = source.frameSequence(bufferSize: 2)
        try source.start()
        var iterator = frames.makeAsyncIterator()
        let first = try await iterator.next()
        return (frames, iterator, try XCTUnwrap(first, file: file, line: line))
    }
}
