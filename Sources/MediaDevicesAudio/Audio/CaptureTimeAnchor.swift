import MediaDevicesCore
import Synchronization

/// The capture direction's clock: which byte position of the capture ring was recorded when
/// (monotonic nanoseconds), as the capture side last said. The reader of the ring turns its own
/// read position into a recording time from it: `time + (readPosition − position) / bytes per
/// second`, exact while no frames were lost between the two positions.
///
/// One writer (the capture side), any number of readers; a sequence lock, so neither waits,
/// locks nor allocates: the writer makes the sequence odd, stores, makes it even; a reader
/// retries while it is odd or moved under it.
final class CaptureTimeAnchor: Sendable {
    private let sequence = Atomic<Int>(0)
    private let position = Atomic<Int>(0)
    private let time = Atomic<Int64>(0)

    /// Capture side: the ring's byte `position` holds the frame recorded at `time` (ns).
    func store(position newPosition: Int, time newTime: Int64) {
        let current = sequence.load(ordering: .relaxed)
        sequence.store(current &+ 1, ordering: .relaxed)
        atomicMemoryFence(ordering: .releasing)
        position.store(newPosition, ordering: .relaxed)
        time.store(newTime, ordering: .relaxed)
        sequence.store(current &+ 2, ordering: .releasing)
    }

    /// The last anchor stored, nil before the first.
    func load() -> (position: Int, time: Int64)? {
        while true {
            let before = sequence.load(ordering: .acquiring)
            if before == 0 { return nil }
            let anchor = (position: position.load(ordering: .relaxed), time: time.load(ordering: .relaxed))
            atomicMemoryFence(ordering: .acquiring)
            if before & 1 == 0, sequence.load(ordering: .relaxed) == before { return anchor }
        }
    }

    /// When the frame at byte `readPosition` was recorded, extrapolated from the last anchor at
    /// `bytesPerSecond`; nil before the first anchor.
    func time(atPosition readPosition: Int, bytesPerSecond: Int) -> Int64? {
        guard let anchor = load(), bytesPerSecond > 0 else { return nil }
        return Self.time(at: readPosition, anchor: anchor, bytesPerSecond: bytesPerSecond)
    }

    /// `anchor.time` moved by the bytes from `anchor.position` to `readPosition` (earlier for a
    /// position before the anchor), rounded to the nanosecond.
    static func time(at readPosition: Int, anchor: (position: Int, time: Int64), bytesPerSecond: Int) -> Int64 {
        let bytes = Int64(readPosition - anchor.position)
        // bytes × 1e9 overflows Int64 only past 9.2 GB between anchor and reader: split it.
        let seconds = bytes / Int64(bytesPerSecond), rest = bytes % Int64(bytesPerSecond)
        return anchor.time + seconds * 1_000_000_000 + rest * 1_000_000_000 / Int64(bytesPerSecond)
    }
}
