import MediaDevicesCore
import Synchronization

/// The buffers of an ``ApplicationSource``: the application fills one (`fill`, on its own
/// thread), which becomes the *staged* frame; the source's capture thread takes the staged
/// frame (`take`) into one of a few buffers it lends to sequences as a camera lends its driver
/// buffers (the bookkeeping is `LendingRing`'s), and delivers it. Buffers move by swapping
/// their numbers, never by copying: the one filled, the one staged and the ring's free one trade
/// places. A frame staged while the previous one was not taken yet replaces it (the newest
/// wins, as a camera's driver drops a frame nobody dequeued), and shows as a sequence gap.
/// Frames are taken only between `startAccepting` and `stopAccepting`, and only by the run they
/// were filled in: a frame begun in one run and finished after it ended is discarded, not
/// delivered in the next. Allocates only when made.
// @unchecked Sendable: `memory` is allocated once, in init; a buffer is written only by the
// sender that checked it out (`Slots.filling`: a buffer no other party has), read by the capture thread and by
// lease holders after `take` moved it into the ring, and filled again only once the ring says no
// lease holds it.
final class ApplicationFrameBuffers: FrameBufferLender, @unchecked Sendable {
    /// The buffers lent in turn (the ring's; its spare not counted).
    let count: Int
    private let memory: UnsafeMutableRawPointer
    private let stride: Int

    /// The ring's buffers and the staged frame, under one lock the capture thread takes briefly.
    private struct Slots: ~Copyable {
        var ring: LendingRing
        /// Ring index → buffer number (`count + 1` of them, the spare last).
        let buffers: UnsafeMutablePointer<Int>
        /// The buffer of the frame waiting for the capture thread, when `hasStaged`.
        var staged: Int
        var hasStaged = false
        var stagedTimestamp: UInt64 = 0
        var stagedSequence: UInt32 = 0
        /// Whether a run takes frames now.
        var accepting = false
        /// Counts runs, so a frame filled across a run's end is known.
        var run: UInt64 = 0
        /// The buffer a sender fills next; `nil` while a sender has it (checked out, filled
        /// with no lock held, so the application's drawing never runs under this lock).
        var filling: Int?
        /// The next staged frame's number.
        var sequence: UInt32 = 0
    }

    private let slots: Mutex<Slots>

    /// `count` lendable buffers of `size` bytes, with the ring's spare, the staged one and the
    /// one being filled.
    init(count: Int = 4, size: Int) {
        self.count = max(2, count)
        stride = (max(size, 8) + 63) & ~63
        memory = UnsafeMutableRawPointer.allocate(byteCount: stride * (self.count + 3), alignment: 64)
        let buffers = UnsafeMutablePointer<Int>.allocate(capacity: self.count + 1)
        for index in 0...self.count { (buffers + index).initialize(to: index) }
        slots = Mutex(Slots(ring: LendingRing(capacity: self.count, inUse: self.count), buffers: buffers, staged: self.count + 1,
                            filling: self.count + 2))
    }

    deinit {
        slots.withLock { $0.buffers.deallocate() }
        memory.deallocate()
    }

    /// The bytes of buffer number `number`.
    private func address(_ number: Int) -> UnsafeMutableRawPointer { memory + number * stride }

    /// What a `fill` came to.
    enum Fill: Equatable {
        /// No run takes frames (or the run ended while `body` ran): nothing staged.
        case refused
        /// Another thread is filling a frame now: `body` was not called, nothing staged.
        case busy
        /// Staged; `replaced`: over a frame the capture thread had not taken yet.
        case staged(replaced: Bool)
    }

    /// On the sender's thread: `body` fills a free buffer (checked out: no other party has it,
    /// and no lock is held while `body` runs), which then becomes the staged frame at
    /// `timestamp`, if a run takes frames from before `body` until after it. `body` is not called
    /// when no run takes frames, or while another thread fills one.
    func fill(timestamp: UInt64, _ body: (UnsafeMutableRawPointer) -> Void) -> Fill {
        let checkedOut = slots.withLock { slots -> (buffer: Int, run: UInt64)? in
            guard slots.accepting, let buffer = slots.filling else { return nil }
            slots.filling = nil
            return (buffer, slots.run)
        }
        guard let checkedOut else { return slots.withLock { $0.accepting } ? .busy : .refused }
        body(address(checkedOut.buffer))
        return slots.withLock { slots in
            guard slots.accepting, slots.run == checkedOut.run else {
                slots.filling = checkedOut.buffer
                return .refused
            }
            slots.filling = slots.staged
            slots.staged = checkedOut.buffer
            defer { slots.hasStaged = true }
            slots.stagedTimestamp = timestamp
            slots.stagedSequence = slots.sequence
            slots.sequence &+= 1
            return .staged(replaced: slots.hasStaged)
        }
    }

    /// A run starts taking frames (none staged before it is delivered).
    func startAccepting() {
        slots.withLock { slots in
            slots.run &+= 1
            slots.accepting = true
            slots.hasStaged = false
        }
    }

    /// The run ended: sends are refused, and a frame staged is forgotten.
    func stopAccepting() {
        slots.withLock { slots in
            slots.accepting = false
            slots.hasStaged = false
        }
    }

    /// On the capture thread: the staged frame, moved into the ring's next free buffer (now the
    /// one being delivered: `endDelivery` after), with its ring index, instant and number; `nil`
    /// when none is staged.
    func take() -> (index: Int, buffer: UnsafeMutableRawPointer, timestamp: UInt64, sequence: UInt32)? {
        slots.withLock { slots in
            guard slots.hasStaged else { return nil }
            let index = slots.ring.next()
            let staged = slots.staged
            slots.staged = slots.buffers[index]
            slots.buffers[index] = staged
            slots.hasStaged = false
            return (index, address(staged), slots.stagedTimestamp, slots.stagedSequence)
        }
    }

    /// On the capture thread: the frame was delivered; no lease is taken on it from now on.
    func endDelivery() { slots.withLock { $0.ring.endDelivery() } }

    func lease(_ index: Int) -> Bool { slots.withLock { $0.ring.lease(index) } }

    func giveBack(_ index: Int) { slots.withLock { $0.ring.giveBack(index) } }

    var bufferCount: Int { count }
}
