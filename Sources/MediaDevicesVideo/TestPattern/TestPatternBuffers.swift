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
    private struct State: @unchecked Sendable {  // its pointer is only followed under the lock
        /// Leases per buffer, `count` of them, allocated once.
        let leases: UnsafeMutablePointer<Int>
        /// The buffer being delivered (the only one a lease may be taken on), or -1.
        var delivering = -1
        /// The buffer drawn last, so buffers are drawn in turn.
        var last = -1
    }

    /// The buffers lent, each `stride` bytes apart, plus one more never lent: drawn in should
    /// every lent one be leased (the refusal rule keeps that from happening).
    let count: Int
    private let stride: Int
    private let memory: UnsafeMutableRawPointer
    private let state: Mutex<State>

    /// `count` lendable buffers of `size` bytes (and the spare).
    init(count: Int = 4, size: Int) {
        self.count = max(2, count)
        stride = (max(size, 8) + 63) & ~63
        memory = UnsafeMutableRawPointer.allocate(byteCount: stride * (self.count + 1), alignment: 64)
        let leases = UnsafeMutablePointer<Int>.allocate(capacity: self.count)
        leases.initialize(repeating: 0, count: self.count)
        state = Mutex(State(leases: leases))
    }

    deinit {
        state.withLock { $0.leases.deallocate() }
        memory.deallocate()
    }

    /// The bytes of buffer `index` (`count`: the spare).
    func buffer(_ index: Int) -> UnsafeMutableRawPointer { memory + index * stride }

    /// On the drawing thread: the next buffer no lease holds, now the one being delivered, to
    /// draw in; the spare (`count`, never lent) if every buffer were leased.
    func drawable() -> Int {
        state.withLock { state in
            var step = 1
            while step <= count {
                let index = (state.last + step) % count
                if state.leases[index] == 0 {
                    state.last = index
                    state.delivering = index
                    return index
                }
                step += 1
            }
            state.delivering = -1
            return count
        }
    }

    /// On the drawing thread: the frame was delivered; no lease is taken on it from now on.
    func endDelivery() { state.withLock { $0.delivering = -1 } }

    func lease(_ index: Int) -> Bool {
        state.withLock { state in
            guard index >= 0, index < count, index == state.delivering else { return false }
            if state.leases[index] == 0 {
                // Lending this one must leave another to draw the next frame in.
                var free = 0, other = 0
                while other < count {
                    if other != index && state.leases[other] == 0 { free += 1 }
                    other += 1
                }
                guard free > 0 else { return false }
            }
            state.leases[index] += 1
            return true
        }
    }

    func giveBack(_ index: Int) {
        state.withLock { state in
            guard index >= 0, index < count, state.leases[index] > 0 else { return }
            state.leases[index] -= 1
        }
    }

    var bufferCount: Int { count }
}
