import XCTest
import Synchronization
@testable import MediaDevices
@testable import MediaDevicesAudio
@testable import MediaDevicesVideo
@testable import MediaDevicesCore

/// Records what the delivery hands it.
final class RecordingConsumer: VideoFrameConsumer {
    struct Record {
        var sequences: [UInt32] = []
        var firstBytes: [[UInt8]] = []
        var basePointers: [Int] = []
        var stops: [MediaDevicesError?] = []
    }
    let record = Mutex(Record())

    func consumeFrame(_ frame: VideoFrame) {
        record.withLock {
            $0.sequences.append(frame.sequence)
            $0.firstBytes.append(Array(frame.plane(0).bytes))
            $0.basePointers.append(Int(bitPattern: frame.plane(0).bytes.baseAddress))
        }
    }

    func captureDidStop(error: MediaDevicesError?) {
        record.withLock { $0.stops.append(error) }
    }
}

final class FrameDeliveryTests: XCTestCase {
    /// `frameTimeout`: a run that goes longer than it without a frame (since it began, or since
    /// its last frame) is stalled, with a `.timeout` naming the device and the option; a frame
    /// resets the clock; no limit by default.
    func testFrameTimeoutCountsFromTheRunsStartAndItsLastFrame() {
        let delivery = FrameDelivery()
        XCTAssertNil(delivery.frameTimeout)
        delivery.beginRun()
        usleep(60_000)
        XCTAssertNil(delivery.stall(device: "cam"), "no limit by default")
        delivery.frameTimeout = .milliseconds(50)
        XCTAssertEqual(delivery.frameTimeout, .milliseconds(50))
        let stalled = delivery.stall(device: "cam")
        XCTAssertEqual(stalled?.code, .timeout, "60 ms since the run began, limit 50")
        XCTAssertTrue("\(stalled.map { "\($0)" } ?? "")".contains("frameTimeout"), "\(String(describing: stalled))")
        XCTAssertEqual(stalled?.device, "cam")
        withGreyFrame(sequence: 0, bytes: marker(0)) { delivery.deliver($0) }
        XCTAssertNil(delivery.stall(device: "cam"), "a frame just came")
        usleep(60_000)
        XCTAssertEqual(delivery.stall(device: "cam")?.code, .timeout, "60 ms since the last frame")
        delivery.beginRun()
        XCTAssertNil(delivery.stall(device: "cam"), "a new run starts the clock again")
        delivery.frameTimeout = nil
        usleep(60_000)
        XCTAssertNil(delivery.stall(device: "cam"))
    }

    func testConsumerGetsEveryFrameZeroCopy() {
        let delivery = FrameDelivery()
        let consumer = RecordingConsumer()
        delivery.consumer = consumer
        var pointers: [Int] = []
        for sequence: UInt32 in 0..<5 {
            withGreyFrame(sequence: sequence, bytes: marker(sequence)) { frame in
                pointers.append(Int(bitPattern: frame.plane(0).bytes.baseAddress))
                delivery.deliver(frame)
            }
        }
        let record = consumer.record.withLock { $0 }
        do {
            XCTAssertEqual(record.sequences, [0, 1, 2, 3, 4])
            XCTAssertEqual(record.firstBytes, (0..<5).map { marker($0) })
            XCTAssertEqual(record.basePointers, pointers, "the consumer should see the source's memory, not a copy")
            XCTAssertTrue(record.stops.isEmpty)
        }
        XCTAssertEqual(delivery.statistics.deliveredFrames, 5)
    }

    func testConsumerToldOnceWhenARunEnds() {
        let delivery = FrameDelivery()
        let consumer = RecordingConsumer()
        delivery.consumer = consumer
        let failure = MediaDevicesError(.disconnected, device: "/dev/video0", operation: "VIDIOC_DQBUF", detail: "")
        delivery.finish(error: failure)  // no run: nothing to tell
        delivery.beginRun()
        delivery.finish(error: nil)
        delivery.finish(error: failure)  // the same run cannot end twice
        delivery.beginRun()
        delivery.finish(error: failure)
        let record = consumer.record.withLock { $0 }
        XCTAssertEqual(record.stops.count, 2)
        XCTAssertEqual(record.stops.first ?? failure, nil)
        XCTAssertEqual(record.stops.last ?? nil, failure)
    }

    func testAbandonedSequenceIsNoLongerFed() {
        let delivery = FrameDelivery()
        weak var abandoned: FrameQueue?
        do {
            let frames = delivery.makeFrames(bufferSize: 2)
            abandoned = frames.queue
            withGreyFrame(sequence: 0, bytes: marker(0)) { delivery.deliver($0) }
            XCTAssertNotNil(abandoned)
        }
        XCTAssertNil(abandoned, "the delivery does not keep a dropped sequence alive")
        for n in 1...5 { withGreyFrame(sequence: UInt32(n), bytes: marker(UInt32(n))) { delivery.deliver($0) } }
        XCTAssertEqual(delivery.statistics.queueDroppedFrames, 0, "nothing is copied for it any more")
    }

    func testReplacedConsumerNoLongerCalled() {
        let delivery = FrameDelivery()
        let first = RecordingConsumer(), second = RecordingConsumer()
        delivery.consumer = first
        withGreyFrame(sequence: 0, bytes: marker(0)) { delivery.deliver($0) }
        delivery.consumer = second
        withGreyFrame(sequence: 1, bytes: marker(1)) { delivery.deliver($0) }
        XCTAssertEqual(first.record.withLock { $0.sequences }, [0])
        XCTAssertEqual(second.record.withLock { $0.sequences }, [1])
    }

    func testSequencesGetCopiesAndQueueDropsAreCounted() async throws {
        let delivery = FrameDelivery()
        let frames = delivery.makeFrames(bufferSize: 2)
        for sequence: UInt32 in 10..<15 {
            withGreyFrame(sequence: sequence, timestamp: UInt64(sequence), bytes: marker(sequence)) { delivery.deliver($0) }
        }
        XCTAssertEqual(frames.droppedFrames, 3)
        XCTAssertEqual(delivery.statistics.queueDroppedFrames, 3)
        XCTAssertEqual(delivery.statistics.droppedFrames, 0)
        XCTAssertEqual(delivery.statistics.deliveredFrames, 5)
        delivery.finish(error: nil)
        var seen: [UInt32] = []
        var bytes: [[UInt8]] = []
        for try await buffer in frames {
            seen.append(buffer.sequence)
            bytes.append(buffer.withUnsafeBytes { Array($0) })
        }
        XCTAssertEqual(seen, [13, 14])
        XCTAssertEqual(bytes, [marker(13), marker(14)])
    }

    func testFinishWithErrorEndsSequences() async {
        let delivery = FrameDelivery()
        let frames = delivery.makeFrames(bufferSize: 4)
        delivery.finish(error: MediaDevicesError(.disconnected, device: "/dev/video0", operation: "VIDIOC_DQBUF", detail: ""))
        do {
            for try await _ in frames {}
            XCTFail("expected the sequence to throw")
        } catch {
            XCTAssertEqual(error.code, .disconnected)
        }
    }

    func testDriverDropsAndRestart() {
        let delivery = FrameDelivery()
        for sequence: UInt32 in [0, 1, 4] {
            withGreyFrame(sequence: sequence, bytes: marker(sequence)) { delivery.deliver($0) }
        }
        XCTAssertEqual(delivery.statistics.droppedFrames, 2)
        delivery.streamRestarted()
        withGreyFrame(sequence: 0, bytes: marker(0)) { delivery.deliver($0) }
        XCTAssertEqual(delivery.statistics.droppedFrames, 2)
        delivery.beginRun()
        XCTAssertEqual(delivery.statistics.deliveredFrames, 0)
        XCTAssertEqual(delivery.statistics.droppedFrames, 0)
    }
}
