import MediaDevicesCore
import Synchronization

/// The test pattern's frames: drawn in a few buffers of its own, which it lends to `frames`
/// sequences as a camera lends its driver buffers, so a sequence reads the drawn frame in place
/// rather than a copy. A leased buffer is not drawn in again until its last lease is given back;
/// a lease is refused (the frame is copied) when it would leave no other buffer to draw the next
/// frame in. The buffers belong to this object, which every lease retains, so a lease outlives
/// the run. Allocates only when made.
// @unchecked Sendable: `memory` is allocated once, in init; a buffer's bytes are written by the
// drawing thread only while no lease holds it (`drawable()`), and read by lease holders after.
final class TestPatternBuffers: FrameBufferLender, @unchecked Sendable {
    /// The buffers lent, each `stride` bytes apart, plus one more never lent: drawn in should
    /// every lent one be leased (the refusal rule keeps that from happening).
    let count: Int
    private let stride: Int
    private let memory: UnsafeMutableRawPointer
    private let ring: Mutex<LendingRing>

    /// `count` lendable buffers of `size` bytes (and the spare), all drawn in turn.
    init(count: Int = 4, size: Int) {
        self.count = max(2, count)
        stride = (max(size, 8) + 63) & ~63
        memory = UnsafeMutableRawPointer.allocate(byteCount: stride * (self.count + 1), alignment: 64)
        ring = Mutex(LendingRing(capacity: self.count, inUse: self.count))
    }

    deinit { memory.deallocate() }

    /// The bytes of buffer `index` (`count`: the spare).
    func buffer(_ index: Int) -> UnsafeMutableRawPointer { memory + index * stride }

    /// On the drawing thread: the next buffer no lease holds, now the one being delivered, to
    /// draw in; the spare (`count`, never lent) if every buffer were leased.
    func drawable() -> Int { ring.withLock { $0.next() } }

    /// On the drawing thread: the frame was delivered; no lease is taken on it from now on.
    func endDelivery() { ring.withLock { $0.endDelivery() } }

    func lease(_ index: Int) -> Bool { ring.withLock { $0.lease(index) } }

    func giveBack(_ index: Int) { ring.withLock { $0.giveBack(index) } }

    var bufferCount: Int { count }
}
