import XCTest
@testable import MediaDevices
@testable import MediaDevicesAudio
@testable import MediaDevicesVideo
@testable import MediaDevicesCore

final class FrameQueueTests: XCTestCase {
    private func push(_ queue: FrameQueue, _ sequence: UInt32) -> Int {
        withGreyFrame(sequence: sequence, timestamp: UInt64(sequence) * 1000, bytes: marker(sequence)) { queue.push($0) }
    }

    /// Takes the next frame and returns only what the test checks, so no reference outlives it.
    private func nextSequence(_ queue: FrameQueue) async throws -> UInt32? {
        guard let buffer = try await queue.next() else { return nil }
        return buffer.sequence
    }

    private func nextIdentity(_ queue: FrameQueue) async throws -> ObjectIdentifier? {
        guard let buffer = try await queue.next() else { return nil }
        return ObjectIdentifier(buffer)
    }

    func testOldestDroppedWhenFull() async throws {
        let queue = FrameQueue(capacity: 3)
        var drops: [Int] = []
        for sequence: UInt32 in 1...5 { drops.append(push(queue, sequence)) }
        XCTAssertEqual(drops, [0, 0, 0, 1, 1])
        XCTAssertEqual(queue.figures.dropped, 2)
        queue.finish(error: nil)
        var sequences: [UInt32] = []
        while let sequence = try await nextSequence(queue) { sequences.append(sequence) }
        XCTAssertEqual(sequences, [3, 4, 5])
    }

    func testCopiedBytesAndMetadataSurvive() async throws {
        let queue = FrameQueue(capacity: 2)
        _ = withGreyFrame(sequence: 42, timestamp: 123_456, bytes: [9, 8, 7, 6, 5], captureDelay: .microseconds(70)) {
            queue.push($0)
        }
        let buffer = try await queue.next()
        XCTAssertEqual(buffer.map { $0.withUnsafeBytes { Array($0) } }, [9, 8, 7, 6, 5])
        XCTAssertEqual(buffer?.sequence, 42)
        XCTAssertEqual(buffer?.timestamp, MonotonicInstant(nanoseconds: 123_456))
        XCTAssertEqual(buffer?.captureDelay, .microseconds(70))
        XCTAssertEqual(buffer?.bytesUsed, 5)
        XCTAssertEqual(buffer?.format.pixelFormat, .grey)
    }

    func testFinishWithoutErrorEndsWithNil() async throws {
        let queue = FrameQueue(capacity: 2)
        _ = push(queue, 1)
        queue.finish(error: nil)
        let first = try await nextSequence(queue)
        XCTAssertEqual(first, 1)  // queued frames are still delivered
        let end = try await nextSequence(queue)
        XCTAssertNil(end)
        XCTAssertEqual(push(queue, 2), 0)  // pushes after the end are ignored
        let stillEnded = try await nextSequence(queue)
        XCTAssertNil(stillEnded)
    }

    func testFinishWithErrorThrowsAfterQueuedFrames() async throws {
        let queue = FrameQueue(capacity: 2)
        _ = push(queue, 1)
        let failure = MediaDevicesError(.disconnected, device: "/dev/video3", operation: "VIDIOC_DQBUF", detail: "gone")
        queue.finish(error: failure)
        let first = try await nextSequence(queue)
        XCTAssertEqual(first, 1)
        do {
            _ = try await queue.next()
            XCTFail("expected the failure")
        } catch let error as MediaDevicesError {
            XCTAssertEqual(error, failure)
        }
        let end = try await nextSequence(queue)
        XCTAssertNil(end, "the error is thrown once, then the sequence ends")
    }

    func testWaitingIteratorGetsTheError() async throws {
        let queue = FrameQueue(capacity: 2)
        let frames = VideoFrames(queue: queue)
        let task = Task { () -> MediaDevicesError.Code? in
            do {
                for try await _ in frames {}
                return nil
            } catch let error as MediaDevicesError {
                return error.code
            } catch {
                return .invalidState
            }
        }
        try await Task.sleep(for: .milliseconds(50))  // let the iterator wait (either order is valid)
        queue.finish(error: MediaDevicesError(.busy, device: nil, operation: "VIDIOC_STREAMON", detail: ""))
        let code = await task.value
        XCTAssertEqual(code, .busy)
    }

    func testWaitingIteratorGetsAPushedFrame() async throws {
        let queue = FrameQueue(capacity: 2)
        let task = Task { try await queue.next()?.sequence }
        try await Task.sleep(for: .milliseconds(50))
        XCTAssertEqual(push(queue, 7), 0)
        let sequence = try await task.value
        XCTAssertEqual(sequence, 7)
    }

    func testBuffersAreReused() async throws {
        let queue = FrameQueue(capacity: 2)
        var rounds: [Set<ObjectIdentifier>] = []
        var sequence: UInt32 = 0
        for _ in 0..<5 {
            var identities = Set<ObjectIdentifier>()
            for _ in 0..<2 { sequence += 1; _ = push(queue, sequence) }
            for _ in 0..<2 {
                let identity = try await nextIdentity(queue)
                identities.insert(try XCTUnwrap(identity))
            }
            rounds.append(identities)
        }
        XCTAssertEqual(rounds[0].count, 2)
        for round in rounds.dropFirst() { XCTAssertEqual(round, rounds[0], "the pool grew") }
        XCTAssertEqual(queue.figures.dropped, 0)
    }

    func testPoolIsBoundedWhileDroppingUnconsumedFrames() async throws {
        let queue = FrameQueue(capacity: 2)
        for sequence: UInt32 in 1...50 { _ = push(queue, sequence) }
        XCTAssertEqual(queue.figures.dropped, 48)
        var identities = Set<ObjectIdentifier>()
        for _ in 0..<2 {
            let identity = try await nextIdentity(queue)
            identities.insert(try XCTUnwrap(identity))
        }
        for sequence: UInt32 in 51...100 { _ = push(queue, sequence) }
        for _ in 0..<2 {
            let identity = try await nextIdentity(queue)
            identities.insert(try XCTUnwrap(identity))
        }
        // At most one buffer per slot plus the one being filled: dropping never allocates more.
        XCTAssertLessThanOrEqual(identities.count, 3)
    }

    func testBufferHeldByApplicationIsNotOverwritten() async throws {
        let queue = FrameQueue(capacity: 1)
        _ = push(queue, 1)
        let next = try await queue.next()
        let held = try XCTUnwrap(next)
        for sequence: UInt32 in 2...10 { _ = push(queue, sequence) }
        XCTAssertEqual(held.sequence, 1)
        XCTAssertEqual(held.withUnsafeBytes { Array($0) }, marker(1))
        let latest = try await nextSequence(queue)
        XCTAssertEqual(latest, 10)
    }

    func testASecondConcurrentWaiterIsRefusedNotLost() async throws {
        let queue = FrameQueue(capacity: 2)
        let first = Task { try await queue.next() }
        // Wait until the first task is parked in next() (else the second would park instead).
        guard await parked(queue) else {
            queue.finish(error: nil)
            return XCTFail("the first task never parked in next()")
        }
        do {
            _ = try await queue.next()
            XCTFail("a second waiter must be refused")
        } catch let error as MediaDevicesError {
            XCTAssertEqual(error.code, .invalidState)
        }
        queue.finish(error: nil)
        let end = try await first.value
        XCTAssertNil(end, "the first waiter still gets the end")
    }

    func testAnActorReadsOnItsOwnIsolationAndWaits() async throws {
        // `for try await` on an actor calls `next(isolation:)` with that actor: the frames
        // already queued come without suspending, and an empty queue parks the actor's task
        // until the next push.
        let queue = FrameQueue(capacity: 4)
        for sequence: UInt32 in 1...2 { _ = push(queue, sequence) }
        let reader = SequenceReader()
        let task = Task { try await reader.read(VideoFrames(queue: queue), count: 3) }
        guard await parked(queue) else {
            queue.finish(error: nil)
            return XCTFail("the actor's task never waited for the third frame")
        }
        _ = push(queue, 3)
        let read = try await task.value
        XCTAssertEqual(read, [1, 2, 3])
    }

    func testCancellingAWaiterEndsItsIteration() async throws {
        let queue = FrameQueue(capacity: 2)
        let waiter = Task { try await queue.next() }
        guard await parked(queue) else {
            queue.finish(error: nil)
            return XCTFail("the task never parked in next()")
        }
        waiter.cancel()
        let result = try await waiter.value
        XCTAssertNil(result)
        XCTAssertFalse(queue.hasWaiter)
    }

    /// Waits (up to 5 s, not a number of yields: a busy machine may take longer to start a task)
    /// until a task is parked in `queue`'s `next()`.
    private func parked(_ queue: FrameQueue) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(5)
        while !queue.hasWaiter && ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(1)) }
        return queue.hasWaiter
    }
}

/// Reads frames on its own isolation (what `for try await` passes to `next(isolation:)`).
private actor SequenceReader {
    func read(_ frames: VideoFrames, count: Int) async throws -> [UInt32] {
        var sequences: [UInt32] = []
        for try await frame in frames {
            sequences.append(frame.sequence)
            if sequences.count == count { break }
        }
        return sequences
    }
}
