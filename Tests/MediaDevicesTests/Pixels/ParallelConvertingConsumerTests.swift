import AllocationCounter
import CTurboJPEG
import Dispatch
import Glibc
import Synchronization
import TestSupport
import XCTest
@testable import MediaDevicesVideo
@testable import MediaDevicesCore

/// `ParallelConvertingConsumer`: frames converted on several threads come out in capture order,
/// with their timestamps and sequence numbers, as one converter on one thread makes them; a
/// corrupt frame is counted and the order of the others kept; a frame offered while every
/// thread is busy is counted and dropped; steady state allocates nothing on any thread.
final class ParallelConvertingConsumerTests: XCTestCase {
    /// What the consumer behind the parallel one saw, in the order it saw it.
    final class Recorder: VideoFrameConsumer, @unchecked Sendable {
        struct Entry {
            var sequence: UInt32
            var timestamp: MonotonicInstant
            var checksum: UInt64
            var thread: pthread_t
            /// The calling thread's allocations so far, read first thing in the call.
            var allocations: UInt64
        }
        let entries = Mutex<[Entry]>([])
        let inside = Atomic<Int>(0)
        let overlapped = Atomic<Bool>(false)
        let stopped = DispatchSemaphore(value: 0)

        init(capacity: Int) { entries.withLock { $0.reserveCapacity(capacity) } }

        func consumeFrame(_ frame: VideoFrame) {
            let allocations = allocation_counter_this_thread()
            if inside.add(1, ordering: .acquiringAndReleasing).newValue > 1 { overlapped.store(true, ordering: .relaxed) }
            let entry = Entry(sequence: frame.sequence, timestamp: frame.timestamp, checksum: ParallelConvertingConsumerTests.checksum(frame),
                              thread: pthread_self(), allocations: allocations)
            entries.withLock { $0.append(entry) }
            inside.subtract(1, ordering: .acquiringAndReleasing)
        }

        func captureDidStop(error: MediaDevicesError?) { stopped.signal() }
    }

    /// FNV-1a over every plane's bytes.
    static func checksum(_ frame: VideoFrame) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        var index = 0
        while index < frame.planeCount {
            for byte in frame.plane(index).bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
            index += 1
        }
        return hash
    }

    /// Calls `body` with a frame over `bytes` (one plane, in memory of its own) stamped as the
    /// `sequence`-th frame of a 30 fps stream.
    static func withFrame<R>(_ bytes: [UInt8], format: VideoFormat, sequence: UInt32, _ body: (VideoFrame) throws -> R) rethrows -> R {
        try bytes.withUnsafeBytes { buffer in
            let frame = VideoFrame(format: format, timestamp: MonotonicInstant(nanoseconds: 1_000_000 + UInt64(sequence) * 33_333_333),
                                   sequence: sequence, orientation: .up, captureDelay: .milliseconds(2), planeCount: 1,
                                   bytesUsed: bytes.count, plane0: FramePlane(bytes: buffer, bytesPerRow: format.bytesPerRow[0]))
            return try body(frame)
        }
    }

    static let mjpeg = VideoFormat(pixelFormat: .mjpeg, width: 640, height: 480)

    /// A 640x480 4:2:0 JPEG of a pattern of its own: picture `index` differs from every other.
    static func picture(_ index: Int) -> [UInt8] {
        let width = 640, height = 480
        var pixels = [UInt8](repeating: 0, count: width * height * 3)
        for y in 0..<height {
            for x in 0..<width {
                let at = (y * width + x) * 3
                pixels[at] = UInt8(truncatingIfNeeded: x / 4 + index * 29)
                pixels[at + 1] = UInt8(truncatingIfNeeded: y / 3 + index * 53)
                pixels[at + 2] = UInt8(truncatingIfNeeded: (x + y) / 8 + index * 11)
            }
        }
        let handle = tjInitCompress()!
        defer { tjDestroy(handle) }
        var jpeg: UnsafeMutablePointer<UInt8>?
        var size: UInt = 0
        defer { tjFree(jpeg) }
        precondition(tjCompress2(handle, pixels, Int32(width), 0, Int32(height), Int32(TJPF_RGB.rawValue), &jpeg, &size,
                                 Int32(TJSAMP_420.rawValue), 85, 0) == 0, "libjpeg-turbo could not encode the test picture")
        return Array(UnsafeBufferPointer(start: jpeg, count: Int(size)))
    }

    /// Offers `frames` one after another, each once the frames before it are done (converted
    /// or dropped), so none is dropped busy; the consumer's end is waited for.
    func feedPaced(_ consumer: ParallelConvertingConsumer, _ recorder: Recorder, frames: [[UInt8]], format: VideoFormat) {
        for (index, bytes) in frames.enumerated() {
            Self.withFrame(bytes, format: format, sequence: UInt32(index)) { consumer.consumeFrame($0) }
            let deadline = Date().addingTimeInterval(30)
            while consumer.convertedFrames + consumer.corruptFrames + consumer.busyFrames < index + 1 && Date() < deadline { usleep(200) }
        }
        consumer.captureDidStop(error: nil)
        XCTAssertEqual(recorder.stopped.wait(timeout: .now() + 30), .success, "the end of capture was passed on")
    }

    func testFramesComeOutInCaptureOrderAsOneThreadConvertsThem() throws {
        let pictures = (0..<24).map(Self.picture)
        let output = OutputFormat(.nv12, size: Size(width: 320, height: 240))
        // The reference: one converter, one frame after another.
        let single = try FrameConverter(output: output)
        let expected = try pictures.enumerated().map { index, bytes in
            try Self.withFrame(bytes, format: Self.mjpeg, sequence: UInt32(index)) { try single.convert($0) { Self.checksum($0) } }
        }
        XCTAssertEqual(Set(expected).count, pictures.count, "the pictures differ from one another")
        let recorder = Recorder(capacity: 64)
        let consumer = try ParallelConvertingConsumer(output: output, threads: 3, consumer: recorder)
        feedPaced(consumer, recorder, frames: pictures, format: Self.mjpeg)
        let entries = recorder.entries.withLock { $0 }
        XCTAssertEqual(entries.map(\.sequence), (0..<24).map(UInt32.init), "every frame, in capture order")
        for entry in entries {
            XCTAssertEqual(entry.checksum, expected[Int(entry.sequence)], "frame \(entry.sequence) converted as one converter converts it")
            XCTAssertEqual(entry.timestamp, MonotonicInstant(nanoseconds: 1_000_000 + UInt64(entry.sequence) * 33_333_333), "its timestamp kept")
        }
        XCTAssertEqual(Set(entries.map { UInt($0.thread) }).count, 3, "each of the three threads converted frames in turn")
        XCTAssertFalse(recorder.overlapped.load(ordering: .relaxed), "the consumer was never called twice at once")
        XCTAssertEqual(consumer.convertedFrames, 24)
        XCTAssertEqual(consumer.busyFrames, 0)
        XCTAssertEqual(consumer.corruptFrames, 0)
    }

    /// Frames offered back to back, faster than three threads convert them: the ones taken come
    /// out in order, the rest are counted busy, none is lost uncounted.
    func testFramesOfferedWhileEveryThreadIsBusyAreCountedAndTheRestKeepTheirOrder() throws {
        let pictures = (0..<30).map(Self.picture)
        let recorder = Recorder(capacity: 64)
        let consumer = try ParallelConvertingConsumer(output: OutputFormat(.yu12), threads: 3, consumer: recorder)
        for (index, bytes) in pictures.enumerated() {
            Self.withFrame(bytes, format: Self.mjpeg, sequence: UInt32(index)) { consumer.consumeFrame($0) }
        }
        consumer.captureDidStop(error: nil)
        XCTAssertEqual(recorder.stopped.wait(timeout: .now() + 30), .success)
        let sequences = recorder.entries.withLock { $0.map(\.sequence) }
        print("offered 30 frames back to back to 3 threads: \(sequences.count) converted, \(consumer.busyFrames) dropped busy")
        XCTAssertEqual(sequences, sequences.sorted(), "in capture order")
        XCTAssertEqual(Array(sequences.prefix(3)), [0, 1, 2], "the first three found every thread free")
        XCTAssertEqual(sequences.count + consumer.busyFrames, 30, "each frame converted or counted busy")
        XCTAssertEqual(consumer.convertedFrames, sequences.count)
    }

    func testACorruptFrameIsCountedAndTheOthersKeepTheirOrder() throws {
        var pictures = (0..<10).map(Self.picture)
        pictures[4] = Array(pictures[4].prefix(600)) + [UInt8](repeating: 0x5a, count: 400)  // header kept, scan garbled
        let recorder = Recorder(capacity: 16)
        let consumer = try ParallelConvertingConsumer(output: OutputFormat(.yu12), threads: 2, consumer: recorder)
        feedPaced(consumer, recorder, frames: pictures, format: Self.mjpeg)
        XCTAssertEqual(recorder.entries.withLock { $0.map(\.sequence) }, [0, 1, 2, 3, 5, 6, 7, 8, 9])
        XCTAssertEqual(consumer.corruptFrames, 1)
        XCTAssertNotNil(consumer.lastCorruptFrameReason)
        XCTAssertEqual(consumer.convertedFrames, 9)
    }

    /// The public form: `ConvertingConsumer` with more than one thread converts on threads of
    /// its own (not the offering thread), in capture order, and reports the parallel counts; with
    /// one it converts on the offering thread; fewer than one is refused.
    func testConvertingConsumerWithThreadsConvertsOnThreadsOfItsOwn() throws {
        var pictures = (0..<8).map(Self.picture)
        pictures[3] = Array(pictures[3].prefix(600)) + [UInt8](repeating: 0x5a, count: 400)  // header kept, scan garbled
        let recorder = Recorder(capacity: 16)
        let consumer = try ConvertingConsumer(output: OutputFormat(.yu12), threads: 2, consumer: recorder)
        for (index, bytes) in pictures.enumerated() {
            Self.withFrame(bytes, format: Self.mjpeg, sequence: UInt32(index)) { consumer.consumeFrame($0) }
            let deadline = Date().addingTimeInterval(30)
            while recorder.entries.withLock({ $0.count }) + consumer.corruptFrames + consumer.busyFrames < index + 1 && Date() < deadline { usleep(200) }
        }
        consumer.captureDidStop(error: nil)
        XCTAssertEqual(recorder.stopped.wait(timeout: .now() + 30), .success, "the end of capture was passed on")
        let entries = recorder.entries.withLock { $0 }
        XCTAssertEqual(entries.map(\.sequence), [0, 1, 2, 4, 5, 6, 7], "every good frame, in capture order")
        XCTAssertFalse(entries.contains { pthread_equal($0.thread, pthread_self()) != 0 }, "converted on threads of its own")
        XCTAssertEqual(consumer.corruptFrames, 1)
        XCTAssertNotNil(consumer.lastCorruptFrameReason)
        XCTAssertEqual(consumer.busyFrames, 0, "each frame was offered once the one before was done")

        let inline = Recorder(capacity: 4)
        let single = try ConvertingConsumer(output: OutputFormat(.yu12), consumer: inline)
        Self.withFrame(pictures[0], format: Self.mjpeg, sequence: 0) { single.consumeFrame($0) }
        XCTAssertEqual(inline.entries.withLock { $0.map { pthread_equal($0.thread, pthread_self()) != 0 } }, [true],
                       "one thread: converted on the offering thread, before consumeFrame returned")
        XCTAssertThrowsError(try ConvertingConsumer(output: OutputFormat(.yu12), threads: 0, consumer: inline)) { error in
            XCTAssertEqual((error as? MediaDevicesError)?.code, .invalidValue)
        }
    }

    /// YUYV 640x480 to I420 on two threads: once each thread has converted a frame, a frame
    /// costs no heap allocation on the thread that offers it nor on the thread that converts it
    /// (from one of its calls of the consumer to its next).
    func testSteadyStateAllocatesNothingOnAnyThread() throws {
        if let why = AllocationProbe.unavailableReason { print("skip: \(why)"); throw XCTSkip(why) }
        let format = VideoFormat(pixelFormat: .yuyv, width: 640, height: 480)
        let frames = (0..<12).map { frame in (0..<(640 * 480 * 2)).map { UInt8(truncatingIfNeeded: $0 / 7 + frame * 13) } }
        let recorder = Recorder(capacity: 32)
        let consumer = try ParallelConvertingConsumer(output: OutputFormat(.yu12), threads: 2, consumer: recorder)
        var offering: UInt64 = 0
        for (index, bytes) in frames.enumerated() {
            try bytes.withUnsafeBytes { buffer in
                let frame = VideoFrame(format: format, timestamp: MonotonicInstant(nanoseconds: UInt64(index + 1)), sequence: UInt32(index),
                                       orientation: .up, captureDelay: .zero, planeCount: 1, bytesUsed: buffer.count,
                                       plane0: FramePlane(bytes: buffer, bytesPerRow: format.bytesPerRow[0]))
                let before = allocation_counter_this_thread()
                consumer.consumeFrame(frame)
                if index >= 2 { offering += allocation_counter_this_thread() - before }
                let deadline = Date().addingTimeInterval(30)
                while consumer.convertedFrames < index + 1 && Date() < deadline { usleep(200) }
                XCTAssertEqual(consumer.convertedFrames, index + 1, "frame \(index) converted")
            }
        }
        consumer.captureDidStop(error: nil)
        XCTAssertEqual(recorder.stopped.wait(timeout: .now() + 30), .success)
        let entries = recorder.entries.withLock { $0 }
        XCTAssertEqual(entries.count, 12)
        XCTAssertEqual(offering, 0, "allocations on the offering thread over frames 2-11")
        for thread in Set(entries.map { UInt($0.thread) }) {
            let counts = entries.filter { UInt($0.thread) == thread }.map(\.allocations)
            XCTAssertGreaterThanOrEqual(counts.count, 5, "the two threads took turns")
            // From its second call on: its first frame made the converter's buffers.
            let steady = zip(counts.dropFirst(), counts.dropFirst(2)).map { $1 - $0 }
            XCTAssertEqual(steady, Array(repeating: 0, count: steady.count), "allocations of a converting thread from one frame to the next")
        }
    }

    /// A consumer that lets go of the parallel consumer in its own call (as an app that swaps
    /// consumers from a callback would): the parallel consumer is released on one of its own
    /// threads, which must not wait for itself, and every thread ends.
    func testReleasedFromItsOwnConsumersCallItEndsWithoutWaitingForItself() throws {
        final class Releasing: VideoFrameConsumer, @unchecked Sendable {
            var holder: ParallelConvertingConsumer?
            let released = DispatchSemaphore(value: 0)
            func consumeFrame(_ frame: VideoFrame) {
                guard holder != nil else { return }
                holder = nil
                released.signal()
            }
        }
        let releasing = Releasing()
        weak var released: ParallelConvertingConsumer?
        try {
            let consumer = try ParallelConvertingConsumer(output: OutputFormat(.yu12), threads: 2, consumer: releasing)
            releasing.holder = consumer
            released = consumer
            Self.withFrame(Self.picture(1), format: Self.mjpeg, sequence: 0) { consumer.consumeFrame($0) }
        }()
        XCTAssertEqual(releasing.released.wait(timeout: .now() + 30), .success, "the consumer's call returned after releasing it")
        XCTAssertNil(released, "released on its converting thread")
        let deadline = Date().addingTimeInterval(10)
        while Self.convertingThreads() > 0 && Date() < deadline { usleep(10_000) }
        XCTAssertEqual(Self.convertingThreads(), 0, "every converting thread ended")
    }

    /// Threads of this process named `md-convert` (the parallel consumers' threads).
    static func convertingThreads() -> Int {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.filter { task in
            ((try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8)) ?? "").hasPrefix("md-convert")
        }.count
    }

    func testNoThreadIsRefused() {
        XCTAssertThrowsError(try ParallelConvertingConsumer(output: OutputFormat(.yu12), threads: 0, consumer: Recorder(capacity: 1))) { error in
            XCTAssertEqual((error as? MediaDevicesError)?.code, .invalidValue)
        }
    }
}
