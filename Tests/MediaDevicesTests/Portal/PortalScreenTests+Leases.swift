import Foundation
import XCTest
import TestSupport
@testable import MediaDevicesVideo
@testable import MediaDevicesCore

/// A portal screen lends its PipeWire buffers to `frames` sequences, as a PipeWire camera does:
/// a sequence reads the compositor's buffer in place, a held frame's buffer stays out of the
/// stream (never refilled) until it is given back, and then goes back to the compositor; a
/// reader on the capture executor reads every frame in place. Against a headless Wayland
/// session per test; without it these tests fail (they never skip).
extension PortalScreenTests {
    private func leasingSource(_ session: WaylandSession, skipsUnchangedFrames: Bool = true) throws -> ScreenSource {
        let screens = try ScreenSource.portalScreens(busAddress: session.busAddress)
        let screen = try XCTUnwrap(screens.first { $0.name == "monitor" }, "no monitor among \(screens)")
        return ScreenSource(screen: screen, frameRate: FrameRate(30), skipsUnchangedFrames: skipsUnchangedFrames)
    }

    /// A session showing a 30 fps animation, and an initialized source of its monitor.
    private func movingPicture() throws -> (WaylandSession, ScreenSource) {
        let session = try WaylandSession(.screenCast)
        do {
            let source = try leasingSource(session)
            if try session.initializeWhileRedrawing(source).redraws > 0 { usleep(300_000) }
            try session.animate(fps: 30)
            return (session, source)
        } catch {
            try? session.stop()
            throw error
        }
    }

    func testSequenceFramesAreLentAndAHeldFrameKeepsItsPixelsWhileTheScreenMoves() async throws {
        let (session, source) = try movingPicture()
        defer { try? session.stop() }
        defer { source.release() }
        let frames = source.frameSequence(bufferSize: 16)  // the concrete sequence: its lease counters
        try source.start()
        var held: [(frame: VideoFrameBuffer, bytes: [UInt8])] = []
        var read = 0, differentFromHeld = 0
        for try await frame in frames {
            read += 1
            let bytes = frame.withFrame { Array($0.plane(0).bytes) }
            if frame.isLeased && held.count < 2 {
                held.append((frame, bytes))
            } else {
                if held.count == 2 && !held.contains(where: { $0.bytes == bytes }) { differentFromHeld += 1 }
                frame.release()
            }
            if read == 30 { break }
        }
        XCTAssertEqual(held.count, 2, "frames came on lease: \(frames.leasedFrames) of \(read), \(frames.copiedFrames) copied")
        XCTAssertEqual(frames.leasedFrames + frames.copiedFrames, read, "each frame read was leased or copied (none copied as not lendable)")
        XCTAssertGreaterThan(differentFromHeld, 0, "the animation went on while two frames were held")
        for (index, entry) in held.enumerated() {
            XCTAssertTrue(entry.frame.isLeased)
            XCTAssertEqual(entry.frame.withFrame { Array($0.plane(0).bytes) }, entry.bytes,
                           "held frame \(index) (sequence \(entry.frame.sequence)) unchanged while the screen moved")
        }
        XCTAssertEqual(Set(held.map { $0.frame.withFrame { $0.plane(0).bytes.baseAddress } }).count, 2, "two buffers held")
        // Given back, the buffers go back to the compositor: frames go on, on lease again.
        held.forEach { $0.frame.release() }
        let leasedBefore = frames.leasedFrames
        var more = 0
        for try await frame in frames {
            frame.release()
            more += 1
            if more == 20 { break }
        }
        let statistics = source.statistics
        source.stop()
        print("portal sequence: \(frames.leasedFrames) leased, \(frames.copiedFrames) copied of \(read + more); \(statistics)")
        XCTAssertEqual(more, 20, "frames go on after the held ones came back")
        XCTAssertGreaterThanOrEqual(frames.leasedFrames - leasedBefore, 15, "frames read and given back at once are leased: \(statistics)")
        XCTAssertEqual(statistics.droppedFrames, 0, "\(statistics)")
    }

    /// The quick start's way of reading, the `frames()` sequence in a task on the capture
    /// executor, reads every frame of a moving picture in place: each comes back before the next
    /// grab, so no buffer is taken out of the stream.
    func testAReaderOnTheCaptureExecutorReadsEveryFrameInPlace() async throws {
        let (session, source) = try movingPicture()
        defer { try? session.stop() }
        defer { source.release() }
        let frames = source.frameSequence(bufferSize: 4)
        try source.start()
        let (read, leased) = try await Task(executorPreference: source.captureExecutor) {
            var read = 0, leased = 0
            for try await frame in frames {
                read += 1
                if frame.isLeased { leased += 1 }
                frame.release()
                if read == 30 { break }
            }
            return (read, leased)
        }.value
        source.stop()
        XCTAssertEqual(read, 30)
        XCTAssertEqual(leased, 30, "every frame read in place")
        XCTAssertEqual(frames.copiedFrames, 0)
    }

    /// Delivering unchanged pictures again (`skipsUnchangedFrames: false`) on a still screen, the
    /// held buffer is lent again while a sequence holds its earlier frames: no sequence gap
    /// (nothing-to-show grab), every frame on lease, all the same picture.
    func testAStillPictureDeliveredAgainIsLentAgainWhileHeld() async throws {
        let session = try WaylandSession(.screenCast)
        defer { try? session.stop() }
        let source = try leasingSource(session, skipsUnchangedFrames: false)
        defer { source.release() }
        if try session.initializeWhileRedrawing(source).redraws > 0 { usleep(300_000) }
        let frames = source.frameSequence(bufferSize: 16)
        try source.start()
        var held: [VideoFrameBuffer] = []
        var sequences: [UInt32] = []
        for try await frame in frames {
            sequences.append(frame.sequence)
            held.append(frame)
            if held.count == 12 { break }
        }
        let statistics = source.statistics
        source.stop()
        let pictures = Set(held.map { $0.withFrame { Array($0.plane(0).bytes) } })
        let leased = held.filter(\.isLeased).count
        held.forEach { $0.release() }
        XCTAssertEqual(leased, 12, "each delivery of the held picture is on lease: \(frames.copiedFrames) copied")
        XCTAssertEqual(pictures.count, 1, "a still screen: one picture")
        XCTAssertEqual(sequences, Array(sequences[0]..<(sequences[0] + 12)), "no sequence gap while the picture is lent")
        XCTAssertEqual(statistics.droppedFrames, 0, "\(statistics)")
    }
}
