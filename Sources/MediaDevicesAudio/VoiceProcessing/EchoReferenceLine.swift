import MediaDevicesCore
import Synchronization

/// The echo reference on a time line: the render thread appends what it hands to the device
/// with the time its first frame is heard; the capture thread takes, for each captured block,
/// the frames heard when that block was recorded. Times are in frames at the processor's rate
/// (from any clock both sides share: the device timestamps, or a frame count).
///
/// The line follows each side's own continuity (`SideContinuity`): a piece that starts where the
/// one before ended (within `tolerance`) is taken as continuous, and so is one whose stamp
/// strays for a while (a late timer puts a period's stamp several ms, at worst 100 ms, off and
/// the next back), so timestamp jitter never moves the alignment. A side re-aligns at its
/// stamps at once after a gap the device reported (an xrun or underrun, a restart, a device
/// switch or fallback, a capture thread that fell behind and lost frames), and when its stamps
/// keep one new offset for `confirmFrames`; each re-alignment that moved the side is counted
/// in `renderJumps` and `captureJumps`. A time with nothing played is silence, and so is a
/// time a render run ended before (`cut(at:)`: the device dropped what it held, never heard). Lock-free (two `AudioRingBuffer`s: the
/// samples, and one stamp per appended piece), allocation-free once made.
// @unchecked Sendable: one writer (the render thread) and one reader (the capture thread), through lock-free ring buffers.
final class EchoReferenceLine: @unchecked Sendable {
    /// One appended piece: the time its first frame is heard and its length.
    private struct Stamp {
        var time: Double
        var frames: Int32
        var afterGap: Bool
    }

    private let samples: AudioRingBuffer
    private let stamps: AudioRingBuffer
    private let channels: Int
    private let frameBytes: Int
    /// Frames by which a side may stray from its continuation before it counts as a jump.
    let tolerance: Double
    // Capture thread only.
    private var current = Stamp(time: 0, frames: 0, afterGap: false)
    private var render: SideContinuity
    private var capture: SideContinuity
    private let renderJumpCount = Atomic<Int>(0)
    private let captureJumpCount = Atomic<Int>(0)
    private let droppedFrames = Atomic<Int>(0)
    /// Pieces appended so far (render thread) and taken so far (capture thread).
    private let appendedPieces = Atomic<Int>(0)
    private var takenPieces = 0
    /// The last `cut(at:)`: pieces appended before `cutPiece` are not heard from `cutTime` on.
    private let cutPiece = Atomic<Int>(0)
    private let cutTime = Atomic<UInt64>(0)

    /// A line holding up to `capacityFrames` of `channels` 16-bit samples, in up to `pieces`
    /// appended pieces; a side straying more than `tolerance` frames for `confirmFrames` jumps.
    init(channels: Int, capacityFrames: Int, pieces: Int = 4096, tolerance: Double, confirmFrames: Int) {
        self.channels = channels
        self.tolerance = tolerance
        render = SideContinuity(tolerance: tolerance, confirmFrames: confirmFrames)
        capture = SideContinuity(tolerance: tolerance, confirmFrames: confirmFrames)
        frameBytes = channels * 2
        samples = AudioRingBuffer(minimumCapacity: capacityFrames * frameBytes)
        stamps = AudioRingBuffer(minimumCapacity: pieces * MemoryLayout<Stamp>.size)
    }

    /// Times the render side's pieces jumped from their continuation (underruns, restarts, switches).
    var renderJumps: Int { renderJumpCount.load(ordering: .relaxed) }
    /// Times the captured blocks jumped from their continuation (overruns, restarts, switches).
    var captureJumps: Int { captureJumpCount.load(ordering: .relaxed) }
    /// How far each side's last stamp lay from where the line placed it, in frames (a
    /// diagnostic: large and steady means the alignment missed a move of that side's stamps).
    /// Capture thread.
    var lastDeviations: (render: Double, capture: Double) { (render.lastDeviation, capture.lastDeviation) }
    /// Played frames the line had no room for (the capture side took none for a while).
    var dropped: Int { droppedFrames.load(ordering: .relaxed) }

    /// Render thread: appends `frames` played frames heard from `time` on (dropped, and
    /// counted, when the capture side has stopped taking them); `afterGap`: the device did not
    /// play all it was given before.
    func append(_ block: UnsafePointer<Int16>, frames: Int, time: Double, afterGap: Bool) {
        let bytes = frames * frameBytes
        guard frames > 0 else { return }
        guard samples.availableToWrite >= bytes, stamps.availableToWrite >= MemoryLayout<Stamp>.size else {
            droppedFrames.add(frames, ordering: .relaxed)
            return
        }
        samples.write(block, count: bytes, granularity: frameBytes)
        var stamp = Stamp(time: time, frames: Int32(frames), afterGap: afterGap)
        withUnsafeBytes(of: &stamp) { _ = stamps.write($0.baseAddress!, count: $0.count) }
        appendedPieces.add(1, ordering: .releasing)
    }

    /// Render thread: a render run ended at `time` and its device dropped what it still held:
    /// of the frames appended so far, those heard from `time` on never were. The capture side
    /// takes silence for them (a device switch, a stop, a fallback), not frames that were
    /// never played; the next run's pieces re-align at their own stamps (they come after a gap).
    func cut(at time: Double) {
        cutTime.store(time.bitPattern, ordering: .relaxed)
        cutPiece.store(appendedPieces.load(ordering: .relaxed), ordering: .releasing)
    }

    /// Of the current piece, the frames heard: all of them, or those before the last cut when
    /// the piece was appended before it.
    private func heardFrames() -> Int {
        guard takenPieces - 1 < cutPiece.load(ordering: .acquiring) else { return Int(current.frames) }
        let cut = Double(bitPattern: cutTime.load(ordering: .relaxed))
        return max(0, min(Int(current.frames), Int((cut - current.time).rounded())))
    }

    /// Capture thread: fills `reference` with the `frames` frames heard from `time` on (the
    /// recording time of the capture block, plus the canceller's lead); `afterGap`: the device
    /// lost frames before the block. Returns how many of the frames were played ones (the rest
    /// is silence: nothing was played then).
    @discardableResult
    func take(into reference: UnsafeMutablePointer<Int16>, frames: Int, time: Double, afterGap: Bool) -> Int {
        let (time, jumped) = capture.place(time, frames: frames, afterGap: afterGap)
        if jumped { captureJumpCount.add(1, ordering: .relaxed) }
        var filled = 0, played = 0
        while filled < frames {
            let wanted = time + Double(filled)
            if current.frames == 0, !nextStamp() { break }
            let heard = heardFrames()
            if heard == 0 || current.time + Double(heard) <= wanted + 0.5 {
                skip(Int(current.frames))
                continue
            }
            if current.time > wanted + 0.5 {
                let silent = min(frames - filled, max(1, Int((current.time - wanted).rounded())))
                (reference + filled * channels).initialize(repeating: 0, count: silent * channels)
                filled += silent
                continue
            }
            let late = max(0, Int((wanted - current.time).rounded()))
            if late > 0 { skip(late) }
            let count = min(heard - late, frames - filled)
            guard count > 0 else {
                skip(Int(current.frames))
                continue
            }
            _ = samples.read(into: UnsafeMutableRawPointer(reference + filled * channels), count: count * frameBytes, granularity: frameBytes)
            current.time += Double(count)
            current.frames -= Int32(count)
            filled += count
            played += count
        }
        if filled < frames { (reference + filled * channels).initialize(repeating: 0, count: (frames - filled) * channels) }
        return played
    }

    /// Makes the next appended piece current; false when none is waiting.
    private func nextStamp() -> Bool {
        var stamp = Stamp(time: 0, frames: 0, afterGap: false)
        let got = withUnsafeMutableBytes(of: &stamp) { stamps.read(into: $0.baseAddress!, count: $0.count) }
        guard got == MemoryLayout<Stamp>.size else { return false }
        takenPieces += 1
        let (time, jumped) = render.place(stamp.time, frames: Int(stamp.frames), afterGap: stamp.afterGap)
        if jumped { renderJumpCount.add(1, ordering: .relaxed) }
        stamp.time = time
        current = stamp
        return true
    }

    /// Drops `count` frames of the current piece.
    private func skip(_ count: Int) {
        let count = min(count, Int(current.frames))
        _ = samples.read(count: count * frameBytes, granularity: frameBytes) { _, _ in }
        current.time += Double(count)
        current.frames -= Int32(count)
    }
}

/// Where one side's pieces go on the line: where the piece before ended while the stamps agree
/// (within `tolerance`) or stray only for a while; at their stamps after a gap, or once they
/// have kept one new offset for `confirmFrames`.
struct SideContinuity {
    let tolerance: Double
    let confirmFrames: Int
    private var end: Double?
    private var pending: Double = 0
    private var pendingFrames = 0
    /// How far the last piece's stamp lay from where the side placed it (frames; diagnostics).
    private(set) var lastDeviation: Double = 0

    init(tolerance: Double, confirmFrames: Int) {
        self.tolerance = tolerance
        self.confirmFrames = confirmFrames
    }

    /// Places a piece of `frames` stamped `time` (`afterGap`: the device reported a gap before
    /// it); returns its time on the line and whether the side jumped there.
    mutating func place(_ time: Double, frames: Int, afterGap: Bool) -> (time: Double, jumped: Bool) {
        if afterGap, let end {
            pendingFrames = 0
            lastDeviation = 0
            self.end = time + Double(frames)
            return (time, abs(time - end) > tolerance)
        }
        guard let end else {
            self.end = time + Double(frames)
            return (time, false)
        }
        let deviation = time - end
        lastDeviation = deviation
        if abs(deviation) <= tolerance {
            pendingFrames = 0
        } else {
            if pendingFrames > 0 && abs(deviation - pending) <= tolerance { pendingFrames += frames } else { (pending, pendingFrames) = (deviation, frames) }
            if pendingFrames >= confirmFrames {
                pendingFrames = 0
                self.end = time + Double(frames)
                return (time, true)
            }
        }
        self.end = end + Double(frames)
        return (end, false)
    }
}
