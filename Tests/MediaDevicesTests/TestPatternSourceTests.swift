import Foundation
import TestSupport
import XCTest
@testable import MediaDevices
@testable import MediaDevicesAudio
@testable import MediaDevicesVideo
@testable import MediaDevicesCore

/// The built-in source: known bar colours, a counter that changes, noise that is noise, pacing,
/// format changes while running, and no allocation per frame.
final class TestPatternSourceTests: XCTestCase {
    /// 100% colour bars, BT.601 limited range luma (ITU-R BT.601 values), left to right.
    private let barLuma = [235, 210, 170, 145, 106, 81, 41, 16]

    func testColourBarsHaveTheKnownLumaAndMove() throws {
        let source = TestPatternSource(request: FormatRequest(pixelFormat: .yuyv, size: .vga, frameRate: FrameRate(60)))
        let frames = Collector(count: 3)
        source.consumer = frames
        try source.start()
        XCTAssertTrue(frames.wait(), "3 frames in time")
        source.stop()
        let first = try XCTUnwrap(frames.kept.first)
        XCTAssertEqual(first.sequence, 0)
        let row = 400 * 1280  // below the counter box
        for (bar, luma) in barLuma.enumerated() {
            XCTAssertEqual(Int(first.bytes[row + (80 * bar + 40) * 2]), luma, "bar \(bar) of frame 0")
        }
        // Frame 1 has moved 4 pixels left: the pixel 2 left of the first boundary is now yellow.
        let second = frames.kept[1]
        XCTAssertEqual(Int(second.bytes[row + 77 * 2]), 210)
        XCTAssertEqual(Int(first.bytes[row + 77 * 2]), 235)
        // The counter box (top left) differs between frames 0 and 1, and is grey only.
        let box = (0..<56).flatMap { y in (0..<264).map { x in y * 1280 + x * 2 } }
        XCTAssertNotEqual(box.map { first.bytes[$0] }, box.map { second.bytes[$0] }, "the frame counter changes")
        XCTAssertTrue(box.allSatisfy { first.bytes[$0 + 1] == 128 }, "the counter box has neutral chroma")
    }

    func testNoiseIsNoise() throws {
        let source = TestPatternSource(pattern: .noise, request: FormatRequest(pixelFormat: .grey, size: Size(width: 320, height: 240)))
        let frames = Collector(count: 2)
        source.consumer = frames
        try source.start()
        XCTAssertTrue(frames.wait())
        source.stop()
        let (a, b) = (frames.kept[0].bytes, frames.kept[1].bytes)
        XCTAssertEqual(a.count, 320 * 240)
        XCTAssertNotEqual(a, b, "each frame is new noise")
        let mean = Double(a.reduce(0) { $0 + Int($1) }) / Double(a.count)
        XCTAssertEqual(mean, 127.5, accuracy: 3, "uniform bytes")
        XCTAssertGreaterThan(Set(a).count, 250, "every byte value appears")
    }

    func testPacingAndSequenceNumbers() throws {
        let source = TestPatternSource(request: FormatRequest(pixelFormat: .nv12, size: Size(width: 320, height: 240), frameRate: FrameRate(30)))
        let frames = Collector(count: 16)
        source.consumer = frames
        let started = DispatchTime.now().uptimeNanoseconds
        try source.start()
        XCTAssertTrue(frames.wait())
        let elapsed = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
        source.stop()
        XCTAssertEqual(source.captureSettings?.frameRate, FrameRate(30))
        // 16 frames at 30 fps: the 16th is due 15/30 s after the start (wall clock, not the
        // source's own timestamps); a loaded machine may be late, never early.
        XCTAssertGreaterThanOrEqual(elapsed, 0.49)
        XCTAssertLessThan(elapsed, 1.5)
        let sequences = frames.kept.map(\.sequence)
        XCTAssertEqual(sequences.first, 0)
        XCTAssertTrue(zip(sequences, sequences.dropFirst()).allSatisfy { $0 < $1 }, "sequence numbers increase")
        XCTAssertEqual(frames.kept[0].bytes.count, 320 * 240 * 3 / 2, "NV12: Y plus half-size CbCr")
        XCTAssertFalse(source.isCapturing)
    }

    func testControlCallsFromTheCallbackDoNotDeadlock() throws {
        let source = TestPatternSource(request: FormatRequest(pixelFormat: .grey, size: Size(width: 64, height: 48), frameRate: FrameRate(100)))
        let callback = ReentrantConsumer(source: source)
        source.consumer = callback
        try source.start()
        XCTAssertEqual(callback.done.wait(timeout: .now() + 10), .success, "the callback ran")
        // stop() from another thread while the callback also calls into the source.
        source.stop()
        XCTAssertFalse(source.isCapturing)
        XCTAssertEqual(callback.setFormatError?.code, .invalidState, "setFormat from the callback is refused, not a deadlock")
        XCTAssertEqual(callback.stopCount, 1, "the consumer hears of the end once")
    }

    func testFormatChangeWhileRunningKeepsTheSequence() async throws {
        let source = TestPatternSource(request: FormatRequest(pixelFormat: .yuyv, size: Size(width: 320, height: 240), frameRate: FrameRate(60)))
        let frames = source.frameSequence(bufferSize: 4)
        try source.start()
        var iterator = frames.makeAsyncIterator()
        let before = try await iterator.next()
        XCTAssertEqual(before?.format.pixelFormat, .yuyv)
        try source.setFormat(FormatRequest(pixelFormat: .yu12, size: Size(width: 160, height: 120), frameRate: FrameRate(60)))
        var changed: VideoFrameBuffer?
        for _ in 0..<10 {
            let next = try await iterator.next()
            if next?.format.pixelFormat == .yu12 { changed = next; break }
        }
        source.stop()
        XCTAssertEqual(changed?.format.size, Size(width: 160, height: 120), "the new format arrives through the same iterator")
        // What the queue held when stop came (at most its 4 frames; on a busy machine it is
        // full) is still delivered, then the sequence ends.
        var buffered = 0
        while try await iterator.next() != nil, buffered <= 4 { buffered += 1 }
        XCTAssertLessThanOrEqual(buffered, 4, "stop ends the sequence after the frames it had buffered")
    }

    func testSteadyStateAllocatesNothingPerFrame() throws {
        if let why = AllocationProbe.unavailableReason { print("skip: \(why)"); throw XCTSkip(why) }
        XCTAssertTrue(AllocationProbe.isActive, "malloc is interposed in the test binary")
        let source = TestPatternSource(request: FormatRequest(pixelFormat: .yuyv, size: Size(width: 320, height: 240), frameRate: FrameRate(120)))
        let probe = AllocationProbe(warmUp: 20, measured: 200)
        source.consumer = probe
        // A sequence nobody reads: every frame is copied into its pool and the oldest dropped.
        let frames = source.frameSequence(bufferSize: 2)
        try source.start()
        XCTAssertEqual(probe.done.wait(timeout: .now() + 30), .success)
        source.stop()
        XCTAssertEqual(probe.allocations, 0, "heap allocations on the capture thread over 200 frames (render, deliver, copy, drop)")
        XCTAssertGreaterThan(frames.droppedFrames, 200, "the queue copied and dropped every frame")
    }

    /// Waking a task that awaits the next frame makes Swift's executor enqueue it, and
    /// libdispatch allocates a continuation for that on a thread it does not own. That is the
    /// runtime's cost, not ours: at most 2 per frame, and none when the reader is behind. On a
    /// busy machine libdispatch now and then refills its continuation cache on top (measured: 2
    /// more over 200 frames with two busy loops beside): a few are allowed; one of ours per
    /// frame would add 200.
    func testAwaitingReaderCostsOnlyTheExecutorsWakeUp() async throws {
        if let why = AllocationProbe.unavailableReason { print("skip: \(why)"); throw XCTSkip(why) }
        let source = TestPatternSource(request: FormatRequest(pixelFormat: .yuyv, size: Size(width: 320, height: 240), frameRate: FrameRate(120)))
        let probe = AllocationProbe(warmUp: 20, measured: 200)
        source.consumer = probe
        let frames = source.frameSequence(bufferSize: 2)
        try source.start()
        let reader = Task.detached { var count = 0; for try await _ in frames { count += 1 }; return count }
        XCTAssertEqual(probe.done.wait(timeout: .now() + 30), .success)
        source.stop()
        let read = try await reader.value
        XCTAssertGreaterThan(read, 100)
        XCTAssertLessThanOrEqual(probe.allocations, 2 * 200 + 8, "only the executor's wake-ups allocate")
    }

    /// The lifecycle rules every source shares (one core): calls from the callback, twice, after release.
    func testLifecycleRulesHoldAsForEverySource() throws {
        let request = FormatRequest(pixelFormat: .grey, size: Size(width: 64, height: 48), frameRate: FrameRate(100))
        let source = TestPatternSource(request: request)
        let broken = try SourceLifecycleRules.violations(of: source, change: { try source.setFormat(request) })
        XCTAssertEqual(broken, [], "rules broken by the test pattern")
    }

    func testUnsupportedRequestIsAClearError() {
        let source = TestPatternSource(request: FormatRequest(pixelFormat: .mjpeg))
        XCTAssertThrowsError(try source.initialize()) { error in
            XCTAssertEqual((error as? MediaDevicesError)?.code, .unsupportedFormat)
            XCTAssertTrue("\(error)".contains("YUYV"), "lists what is offered: \(error)")
        }
    }
}

/// Calls back into its source from the capture thread: reads state, tries setFormat, then stop.
private final class ReentrantConsumer: VideoFrameConsumer, @unchecked Sendable {
    weak var source: TestPatternSource?
    let done = DispatchSemaphore(value: 0)
    private(set) var setFormatError: MediaDevicesError?
    private(set) var stopCount = 0
    private var frames = 0

    init(source: TestPatternSource) { self.source = source }

    func consumeFrame(_ frame: VideoFrame) {
        frames += 1
        guard frames == 3, let source else { return }
        _ = source.isCapturing
        _ = source.captureSettings
        do { try source.setFormat(FormatRequest(pixelFormat: .yuyv)) } catch { setFormatError = error }
        source.stop()
        done.signal()
    }

    func captureDidStop(error: MediaDevicesError?) { stopCount += 1 }
}

/// Keeps copies of the first `count` frames' first plane(s).
private final class Collector: VideoFrameConsumer, @unchecked Sendable {
    struct Kept { var sequence: UInt32; var bytes: [UInt8] }
    private let count: Int
    private let lock = NSLock()
    private(set) var kept: [Kept] = []
    private let done = DispatchSemaphore(value: 0)

    init(count: Int) { self.count = count }

    func consumeFrame(_ frame: VideoFrame) {
        lock.lock(); defer { lock.unlock() }
        guard kept.count < count else { return }
        let bytes = (0..<frame.planeCount).flatMap { Array(frame.plane($0).bytes) }
        kept.append(Kept(sequence: frame.sequence, bytes: bytes))
        if kept.count == count { done.signal() }
    }

    func wait() -> Bool { done.wait(timeout: .now() + 20) == .success }
}
