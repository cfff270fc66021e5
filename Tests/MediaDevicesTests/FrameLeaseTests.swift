import Synchronization
import XCTest
@testable import MediaDevices
@testable import MediaDevicesAudio
@testable import MediaDevicesVideo
@testable import MediaDevicesCore

/// A driver stand-in: `count` buffers of bytes, lent under the same rule as `V4L2Buffers`
/// (refuse a lease that leaves fewer than `minimumQueued` queued), counting what it is given back.
private final class FakeLender: FrameBufferLender, @unchecked Sendable {
    struct State {
        var leases: [Int]
        var queued: [Bool]
        var giveBacks = 0
    }

    let memory: [UnsafeMutableRawBufferPointer]
    let minimumQueued: Int
    let state: Mutex<State>

    init(count: Int, size: Int, minimumQueued: Int) {
        memory = (0..<count).map { _ in .allocate(byteCount: size, alignment: 16) }
        self.minimumQueued = minimumQueued
        state = Mutex(State(leases: Array(repeating: 0, count: count), queued: Array(repeating: true, count: count)))
    }

    deinit { for buffer in memory { buffer.deallocate() } }

    func lease(_ index: Int) -> Bool {
        state.withLock { state in
            if state.leases[index] == 0, state.queued.filter({ $0 }).count < minimumQueued { return false }
            state.leases[index] += 1
            return true
        }
    }

    var bufferCount: Int { memory.count }

    func giveBack(_ index: Int) {
        state.withLock { state in
            state.giveBacks += 1
            state.leases[index] -= 1
            if state.leases[index] == 0 { state.queued[index] = true }
        }
    }

    var leased: Int { state.withLock { $0.leases.filter { $0 > 0 }.count } }
    var giveBacks: Int { state.withLock { $0.giveBacks } }

    /// Dequeues buffer `index` filled with `fill`, delivers it into `queue`, and requeues it
    /// unless leased, as the capture thread does.
    func deliver(_ index: Int, fill: UInt8, sequence: UInt32, into queue: FrameQueue) {
        state.withLock { $0.queued[index] = false }
        let bytes = memory[index]
        for offset in 0..<bytes.count { bytes[offset] = fill }
        let format = VideoFormat(pixelFormat: .grey, width: bytes.count, height: 1, bytesPerRow: [bytes.count], bufferSizes: [bytes.count])
        let frame = VideoFrame(format: format, timestamp: MonotonicInstant(nanoseconds: UInt64(sequence)), sequence: sequence, orientation: .up,
                               captureDelay: .zero, planeCount: 1, bytesUsed: bytes.count,
                               plane0: FramePlane(bytes: UnsafeRawBufferPointer(bytes), bytesPerRow: bytes.count),
                               plane1: .empty, plane2: .empty,
                               dmaBuf: DMABufFrame(drmFourCC: FourCC("R8  "), planes: [DMABufPlane(descriptor: Int32(100 + index), offset: 0,
                                                                                                    bytesPerRow: bytes.count, length: bytes.count)]),
                               lendable: LendableBuffer(lender: self, index: index))
        _ = queue.push(frame)
        state.withLock { if $0.leases[index] == 0 { $0.queued[index] = true } }
    }
}

final class FrameLeaseTests: XCTestCase {
    /// Takes the next frame, checks it with `check`, and lets go of it.
    private func next(_ queue: FrameQueue, _ check: (VideoFrameBuffer) -> Void = { _ in }) async throws {
        guard let buffer = try await queue.next() else { return XCTFail("the sequence ended") }
        check(buffer)
    }

    func testLeasedFrameIsTheDriverBufferAndGoesBackAtTheNextRequest() async throws {
        let lender = FakeLender(count: 4, size: 64, minimumQueued: 2)
        let queue = FrameQueue(capacity: 2)
        lender.deliver(0, fill: 7, sequence: 1, into: queue)
        XCTAssertEqual(lender.leased, 1, "the frame waits in the queue on lease")
        try await next(queue) { buffer in
            XCTAssertTrue(buffer.isLeased)
            buffer.withFrame { frame in
                XCTAssertEqual(frame.plane(0).bytes.baseAddress, UnsafeRawPointer(lender.memory[0].baseAddress),
                               "a leased frame's plane is the driver's memory, not a copy")
                XCTAssertEqual(Array(frame.plane(0).bytes), Array(repeating: 7, count: 64))
            }
        }
        XCTAssertEqual(lender.leased, 1, "still leased until the sequence is asked again")
        lender.deliver(1, fill: 8, sequence: 2, into: queue)
        XCTAssertEqual(lender.giveBacks, 1, "the next frame's arrival gave the let-go buffer back")
        try await next(queue)
        queue.finish(error: nil)
        let end = try await queue.next()
        XCTAssertNil(end)
        XCTAssertEqual(lender.leased, 0)
        XCTAssertEqual(lender.giveBacks, 2)
        XCTAssertEqual(queue.figures.leased, 2)
        XCTAssertEqual(queue.figures.copied, 0)
    }

    func testALentFrameKeepsTheBuffersFormatWhenTheLendersFormatIDIsTheSame() {
        let lender = FakeLender(count: 1, size: 64, minimumQueued: 0)
        let buffer = VideoFrameBuffer(format: VideoFormat(pixelFormat: .grey, width: 1, height: 1))
        let line = VideoFormat(pixelFormat: .grey, width: 64, height: 1), square = VideoFormat(pixelFormat: .grey, width: 8, height: 8)
        let first = LendableBuffer.newFormatID(), second = LendableBuffer.newFormatID()
        XCTAssertNotEqual(first, second)
        func lend(_ format: VideoFormat, id: UInt64) -> VideoFormat {
            let lendable = LendableBuffer(lender: lender, index: 0, formatID: id)
            let frame = VideoFrame(format: format, timestamp: MonotonicInstant(nanoseconds: 0), sequence: 0, orientation: .up, captureDelay: .zero, planeCount: 1,
                                   bytesUsed: 64, plane0: FramePlane(bytes: UnsafeRawBufferPointer(lender.memory[0]), bytesPerRow: 64),
                                   plane1: .empty, plane2: .empty, dmaBuf: nil, lendable: lendable)
            XCTAssertTrue(lendable.lease())
            buffer.lend(frame, from: lendable)
            return buffer.format
        }
        XCTAssertEqual(lend(line, id: first), line)
        XCTAssertEqual(lend(line, id: first), line)
        XCTAssertEqual(lend(square, id: first), line, "the same ID is the lender's promise of the same format: not copied again")
        XCTAssertEqual(lend(square, id: second), square, "another ID (another run): its format")
        XCTAssertEqual(lend(line, id: 0), line, "no ID: always copied")
        XCTAssertEqual(lend(square, id: 0), square)
        XCTAssertEqual(lend(line, id: second), line, "after an unnamed format, a named one is copied")
        buffer.release()
        XCTAssertEqual(lender.leased, 0)
    }

    func testALeaseThatWouldStarveTheDriverIsACopy() async throws {
        let lender = FakeLender(count: 4, size: 16, minimumQueued: 2)
        let queue = FrameQueue(capacity: 4)
        // Nobody reads: frames pile up in the queue. Buffers 0 and 1 can be lent (3 then 2 stay
        // queued); lending buffer 2 would leave 1 queued: it is copied.
        for index in 0..<4 { lender.deliver(index, fill: UInt8(index + 1), sequence: UInt32(index), into: queue) }
        XCTAssertEqual(queue.figures.leased, 2)
        XCTAssertEqual(queue.figures.copied, 2)
        XCTAssertEqual(lender.leased, 2)
        for index in 0..<4 {
            try await next(queue) { buffer in
                XCTAssertEqual(buffer.isLeased, index < 2)
                buffer.withUnsafeBytes { XCTAssertEqual(Array($0), Array(repeating: UInt8(index + 1), count: 16), "frame \(index)") }
            }
        }
        queue.finish(error: nil)
        _ = try await queue.next()
        XCTAssertEqual(lender.leased, 0)
    }

    func testTheSourcesStatisticsCountFramesHandedOutLeasedAndCopied() async throws {
        let lender = FakeLender(count: 4, size: 16, minimumQueued: 2)
        let delivery = FrameDelivery()
        delivery.beginRun()
        let frames = delivery.makeFrames(bufferSize: 4)
        let other = delivery.makeFrames(bufferSize: 4)
        // As above, per sequence: two leased, then two copied (a lease would starve the driver).
        for index in 0..<4 { lender.deliver(index, fill: UInt8(index + 1), sequence: UInt32(index), into: frames.queue) }
        lender.deliver(3, fill: 9, sequence: 4, into: other.queue)
        XCTAssertEqual(frames.leasedFrames, 2)
        XCTAssertEqual(frames.copiedFrames, 2)
        XCTAssertEqual(other.leasedFrames + other.copiedFrames, 1)
        let statistics = delivery.statistics
        XCTAssertEqual(statistics.leasedFrames, frames.leasedFrames + other.leasedFrames, "the sum over the sequences")
        XCTAssertEqual(statistics.copiedFrames, frames.copiedFrames + other.copiedFrames)
        delivery.finish(error: nil)
        delivery.beginRun()
        XCTAssertEqual(delivery.statistics.leasedFrames, 0, "a new run counts from zero")
        XCTAssertEqual(delivery.statistics.copiedFrames, 0)
        while try await frames.queue.next() != nil {}
        while try await other.queue.next() != nil {}
    }

    func testTheSourcesStatisticsSayHowManyBuffersTheLenderCycles() {
        let lender = FakeLender(count: 5, size: 16, minimumQueued: 2)
        let delivery = FrameDelivery()
        delivery.beginRun()
        let unlent = VideoFrame(format: VideoFormat(pixelFormat: .grey, width: 16, height: 1), timestamp: MonotonicInstant(nanoseconds: 1), sequence: 0,
                                orientation: .up, captureDelay: .zero, planeCount: 1, bytesUsed: 16,
                                plane0: FramePlane(bytes: UnsafeRawBufferPointer(lender.memory[0]), bytesPerRow: 16), plane1: .empty, plane2: .empty)
        delivery.deliver(unlent)
        XCTAssertEqual(delivery.statistics.buffers, 0, "not known from a frame that is not lendable")
        let lent = VideoFrame(format: unlent.format, timestamp: MonotonicInstant(nanoseconds: 2), sequence: 1, orientation: .up, captureDelay: .zero,
                              planeCount: 1, bytesUsed: 16, plane0: unlent.plane(0), plane1: .empty, plane2: .empty, dmaBuf: nil,
                              lendable: LendableBuffer(lender: lender, index: 0))
        delivery.deliver(lent)
        XCTAssertEqual(delivery.statistics.buffers, 5, "the lender's buffers")
        delivery.finish(error: nil)
    }

    func testReleaseTwiceAndFromAnotherThreadGivesBackOnce() async throws {
        let lender = FakeLender(count: 4, size: 16, minimumQueued: 2)
        let queue = FrameQueue(capacity: 2)
        lender.deliver(0, fill: 1, sequence: 1, into: queue)
        guard let buffer = try await queue.next() else { return XCTFail("no frame") }
        XCTAssertEqual(buffer.dmaBuf?.plane(0).descriptor.rawValue, 100, "a leased frame offers its buffer's DMA-BUF")
        let done = expectation(description: "released on another thread")
        Thread.detachNewThread {
            buffer.release()
            buffer.release()
            done.fulfill()
        }
        await fulfillment(of: [done], timeout: 5)
        XCTAssertNil(buffer.dmaBuf, "a released frame's DMA-BUF descriptors are no longer offered")
        buffer.release()
        XCTAssertEqual(lender.giveBacks, 1)
        XCTAssertFalse(buffer.isLeased)
        buffer.withFrame { XCTAssertEqual($0.planeCount, 0, "a released frame reads as empty") }
        XCTAssertEqual(buffer.byteCount, 0)
    }

    func testReleaseWhileReadingWaitsForTheReadToEnd() async throws {
        let lender = FakeLender(count: 4, size: 16, minimumQueued: 2)
        let queue = FrameQueue(capacity: 2)
        lender.deliver(2, fill: 5, sequence: 1, into: queue)
        guard let buffer = try await queue.next() else { return XCTFail("no frame") }
        buffer.withFrame { frame in
            buffer.release()
            XCTAssertEqual(lender.giveBacks, 0, "not given back while being read")
            XCTAssertEqual(Array(frame.plane(0).bytes), Array(repeating: 5, count: 16))
        }
        XCTAssertEqual(lender.giveBacks, 1, "given back when the read ended")
    }

    func testDroppedFramesGiveTheirLeaseBackAtOnce() {
        let lender = FakeLender(count: 6, size: 8, minimumQueued: 1)
        let queue = FrameQueue(capacity: 1)
        for index in 0..<4 { lender.deliver(index, fill: 0, sequence: UInt32(index), into: queue) }
        XCTAssertEqual(queue.figures.dropped, 3)
        XCTAssertEqual(lender.leased, 1, "only the queued frame holds a buffer")
        XCTAssertEqual(lender.giveBacks, 3)
        queue.finish(error: nil)
    }

    func testAHeldLeaseOutlivesTheEndOfTheSequence() async throws {
        let lender = FakeLender(count: 4, size: 8, minimumQueued: 2)
        let queue = FrameQueue(capacity: 2)
        lender.deliver(0, fill: 9, sequence: 1, into: queue)
        guard let held = try await queue.next() else { return XCTFail("no frame") }
        queue.finish(error: nil)
        let end = try await queue.next()
        XCTAssertNil(end)
        XCTAssertTrue(held.isLeased, "stopping does not take a held frame away")
        held.withUnsafeBytes { XCTAssertEqual(Array($0), Array(repeating: 9, count: 8)) }
        held.release()
        XCTAssertEqual(lender.leased, 0)
    }

    func testSequencesThatDoNotLeaseCopy() async throws {
        let lender = FakeLender(count: 4, size: 8, minimumQueued: 2)
        let queue = FrameQueue(capacity: 2, leases: false)
        lender.deliver(0, fill: 3, sequence: 1, into: queue)
        XCTAssertEqual(lender.leased, 0)
        try await next(queue) { buffer in
            XCTAssertFalse(buffer.isLeased)
            XCTAssertNil(buffer.dmaBuf, "a copy has no DMA-BUF")
            buffer.withUnsafeBytes { XCTAssertEqual(Array($0), Array(repeating: 3, count: 8)) }
        }
        queue.finish(error: nil)
    }
}

extension FrameLeaseTests {
    /// A multi-planar `M` frame (NV12M: the luma and chroma planes in two driver buffers) is
    /// leased like a single-buffer one: both planes stay the driver's memory, the DMA-BUF keeps
    /// one descriptor per plane, and `withUnsafeBytes` gathers the planes one after another.
    func testPlanesInSeparateBuffersAreLeasedAndGatheredOnRequest() async throws {
        let lender = FakeLender(count: 4, size: 8, minimumQueued: 2)
        let queue = FrameQueue(capacity: 2)
        let (luma, chroma) = (lender.memory[2], lender.memory[3])
        for offset in 0..<8 { luma[offset] = 1; chroma[offset] = 2 }
        let format = VideoFormat(pixelFormat: .nv12m, width: 4, height: 2, bytesPerRow: [4, 4], bufferSizes: [8, 4])
        let dmaBuf = DMABufFrame(drmFourCC: FourCC("NV12"), planes: [
            DMABufPlane(descriptor: 102, offset: 0, bytesPerRow: 4, length: 8),
            DMABufPlane(descriptor: 103, offset: 0, bytesPerRow: 4, length: 8),
        ])
        let frame = VideoFrame(format: format, timestamp: MonotonicInstant(nanoseconds: 1), sequence: 1, orientation: .up, captureDelay: .zero, planeCount: 2,
                               bytesUsed: 8, plane0: FramePlane(bytes: UnsafeRawBufferPointer(luma), bytesPerRow: 4),
                               plane1: FramePlane(bytes: UnsafeRawBufferPointer(rebasing: chroma[0..<4]), bytesPerRow: 4),
                               plane2: .empty, dmaBuf: dmaBuf, lendable: LendableBuffer(lender: lender, index: 2))
        XCTAssertFalse(frame.planesAreContiguous)
        _ = queue.push(frame)
        XCTAssertEqual(queue.figures.leased, 1)
        try await next(queue) { buffer in
            XCTAssertTrue(buffer.isLeased)
            XCTAssertEqual(buffer.dmaBuf?.plane(1).descriptor.rawValue, 103)
            buffer.withFrame { frame in
                XCTAssertEqual(frame.plane(0).bytes.baseAddress, UnsafeRawPointer(luma.baseAddress))
                XCTAssertEqual(frame.plane(1).bytes.baseAddress, UnsafeRawPointer(chroma.baseAddress), "the chroma buffer, not a copy")
            }
            XCTAssertEqual(buffer.withUnsafeBytes { Array($0) }, Array(repeating: 1, count: 8) + Array(repeating: 2, count: 4))
            XCTAssertEqual(buffer.byteCount, 12)
        }
        queue.finish(error: nil)
        XCTAssertEqual(lender.leased, 0, "given back")
    }

    func testSpansReadTheLeasedBufferInPlaceAndAReleaseWaitsForThem() async throws {
        let lender = FakeLender(count: 4, size: 8, minimumQueued: 2)
        let queue = FrameQueue(capacity: 2)
        lender.deliver(1, fill: 9, sequence: 1, into: queue)
        guard let buffer = try await queue.next() else { return XCTFail("the sequence ended") }
        XCTAssertTrue(buffer.isLeased)
        lender.memory[1][3] = 42   // the driver's buffer itself: a copy would not see it
        let (count, fourth, sum) = buffer.withSpan { bytes in
            buffer.release()   // from inside the read: takes effect when the read ends
            XCTAssertEqual(lender.giveBacks, 0, "given back while a span is lent")
            var sum = 0
            for index in bytes.indices { sum += Int(bytes[index]) }
            return (bytes.count, bytes[3], sum)
        }
        XCTAssertEqual(count, 8)
        XCTAssertEqual(fourth, 42)
        XCTAssertEqual(sum, 7 * 9 + 42)
        XCTAssertEqual(lender.giveBacks, 1, "given back once the span's read ended")
        XCTAssertEqual(buffer.withSpan { $0.count }, 0, "empty after release")
        XCTAssertEqual(buffer.withRawSpan { $0.byteCount }, 0)
        struct Stop: Error {}
        XCTAssertThrowsError(try buffer.withSpan { (_) throws(Stop) in throw Stop() }) { XCTAssertTrue($0 is Stop, "the body's own error") }
        queue.finish(error: nil)
    }

    func testARawSpanGathersPlanesThatLieApartAsWithUnsafeBytes() {
        let luma = UnsafeMutableRawBufferPointer.allocate(byteCount: 8, alignment: 16)
        let chroma = UnsafeMutableRawBufferPointer.allocate(byteCount: 4, alignment: 16)
        defer { luma.deallocate(); chroma.deallocate() }
        for offset in 0..<8 { luma[offset] = UInt8(offset) }
        for offset in 0..<4 { chroma[offset] = UInt8(200 + offset) }
        let format = VideoFormat(pixelFormat: .nv12m, width: 4, height: 2, bytesPerRow: [4, 4], bufferSizes: [8, 4])
        let frame = VideoFrame(format: format, timestamp: MonotonicInstant(nanoseconds: 1), sequence: 1, orientation: .up, captureDelay: .zero,
                               planeCount: 2, bytesUsed: 8, plane0: FramePlane(bytes: UnsafeRawBufferPointer(luma), bytesPerRow: 4),
                               plane1: FramePlane(bytes: UnsafeRawBufferPointer(chroma), bytesPerRow: 4), plane2: .empty, dmaBuf: nil, lendable: nil)
        XCTAssertEqual(frame.withSpan(plane: 1) { $0[2] }, 202)
        XCTAssertEqual(frame.plane(0).withRawSpan { $0.unsafeLoad(fromByteOffset: 4, as: UInt8.self) }, 4)
        let buffer = VideoFrameBuffer(format: format)
        buffer.fill(from: frame)
        let gathered = buffer.withRawSpan { span in (0..<span.byteCount).map { span.unsafeLoad(fromByteOffset: $0, as: UInt8.self) } }
        XCTAssertEqual(gathered, buffer.withUnsafeBytes { Array($0) })
        XCTAssertEqual(gathered, (0..<8).map(UInt8.init) + (200..<204).map(UInt8.init))
    }
}
