#if X11
import MediaDevicesCore
import Synchronization

/// An X11 screen's shared segments, lent to `frames` sequences as a camera lends its driver
/// buffers: each grab goes into a segment no lease holds, so a sequence reads the grabbed
/// picture in place rather than a copy, and a held frame is never grabbed over. The first
/// segment is made with the grabber; more only when every one is leased as the next grab comes
/// (a reader on the capture executor gives each frame back before then, so it needs one), up
/// to `capacity`, plus a spare never lent. The segments belong to this object, which every
/// lease retains: a lease outlives the grabber (its segment stays attached until given back).
// @unchecked Sendable: `segments` is read and changed only by the grabbing thread (one at a
// time, as `ScreenGrabbing` says) and at deinit; lease holders touch only `ring`, under its lock.
final class X11SegmentRing: FrameBufferLender, @unchecked Sendable {
    /// The segments by index (`capacity`: the spare), made as they come into use.
    private var segments: [X11SharedMemory?]
    private let ring: Mutex<LendingRing>
    /// The segments in use, for `bufferCount` (read per frame without the lock).
    private let inUse = Atomic<Int>(1)
    /// How the segments are shared with the server (the first one's way, kept for all).
    let sharing: X11SharedMemory.Sharing

    /// A ring whose first segment is `first`; up to `capacity` are lent in turn.
    init(first: X11SharedMemory, capacity: Int = 4) {
        let ring = LendingRing(capacity: capacity)
        segments = Array(repeating: nil, count: ring.capacity + 1)
        segments[0] = first
        sharing = first.sharing
        self.ring = Mutex(ring)
    }

    /// On the grabbing thread: the segment to grab the next frame into, at least `byteCount`
    /// bytes (made, or made again larger after a resize, on `x`), and its index (`spareIndex`:
    /// not lendable).
    func next(byteCount: Int, on x: X11Connection) throws(MediaDevicesError) -> (index: Int, memory: X11SharedMemory) {
        let (index, count) = ring.withLock { ring in (ring.next(), ring.inUse) }
        inUse.store(count, ordering: .relaxed)
        if let memory = segments[index], memory.byteCount >= byteCount { return (index, memory) }
        do {
            let memory = try X11SharedMemory(x, byteCount: byteCount, sharing: sharing)
            segments[index] = memory
            return (index, memory)
        } catch {
            endDelivery()
            throw error
        }
    }

    /// The index of the spare segment, which is never lent.
    var spareIndex: Int { segments.count - 1 }

    /// On the grabbing thread: the frame was delivered; no lease is taken on it from now on.
    func endDelivery() { ring.withLock { $0.endDelivery() } }

    func lease(_ index: Int) -> Bool { ring.withLock { $0.lease(index) } }

    func giveBack(_ index: Int) { ring.withLock { $0.giveBack(index) } }

    var bufferCount: Int { inUse.load(ordering: .relaxed) }
}
#endif
