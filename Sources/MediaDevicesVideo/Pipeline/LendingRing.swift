/// The lease bookkeeping of the few buffers a source fills in turn and lends to sequences, as a
/// camera lends its driver buffers (the test pattern's drawn frames, an X11 screen's shared
/// segments): which buffer to fill next, and whether a lease on the one being delivered may be
/// taken. A buffer is filled only while no lease holds it, and a lease is refused (the frame is
/// copied) when it would leave no buffer to fill next. Buffers come into use one at a time, up
/// to `capacity`, only when every one in use is leased: a reader on the capture executor, which
/// gives each frame back before the next, keeps the source on its first. Beyond them one more,
/// the spare (index `capacity`), is never lent. Used under its owner's lock; allocates only when made.
struct LendingRing: ~Copyable {
    /// The most buffers lent in turn (the spare not counted).
    let capacity: Int
    /// The buffers in use so far (`1...capacity`); only grows.
    private(set) var inUse: Int
    /// Leases per buffer, `capacity` of them.
    private let leases: UnsafeMutablePointer<Int>
    /// The buffer being delivered (the only one a lease may be taken on), or -1.
    private var delivering = -1
    /// The buffer filled last, so buffers in use are filled in turn.
    private var last = -1

    /// A ring of up to `capacity` buffers (at least 2), `inUse` of them in use from the start.
    init(capacity: Int, inUse: Int = 1) {
        self.capacity = max(2, capacity)
        self.inUse = min(max(1, inUse), self.capacity)
        leases = UnsafeMutablePointer<Int>.allocate(capacity: self.capacity)
        leases.initialize(repeating: 0, count: self.capacity)
    }

    deinit { leases.deallocate() }

    /// The spare's index: a buffer filled when every one is leased, never lent.
    var spare: Int { capacity }

    /// On the filling thread: the next buffer no lease holds, now the one being delivered; a
    /// new one (`inUse - 1` after it grew) when every one in use is leased; the spare when all
    /// `capacity` are.
    mutating func next() -> Int {
        var step = 1
        while step <= inUse {
            let index = (last + step) % inUse
            if leases[index] == 0 { return deliver(index) }
            step += 1
        }
        if inUse < capacity {
            inUse += 1
            return deliver(inUse - 1)
        }
        delivering = -1
        return spare
    }

    private mutating func deliver(_ index: Int) -> Int {
        last = index
        delivering = index
        return index
    }

    /// On the filling thread: the frame was delivered; no lease is taken on it from now on.
    mutating func endDelivery() { delivering = -1 }

    /// A lease on buffer `index`, the one being delivered; refused when lending it would leave
    /// no buffer to fill next (none free, and no room to bring another into use).
    mutating func lease(_ index: Int) -> Bool {
        guard index >= 0, index < inUse, index == delivering else { return false }
        if leases[index] == 0 && inUse == capacity {
            var free = 0, other = 0
            while other < inUse {
                if other != index && leases[other] == 0 { free += 1 }
                other += 1
            }
            guard free > 0 else { return false }
        }
        leases[index] += 1
        return true
    }

    /// Gives one lease on buffer `index` back.
    mutating func giveBack(_ index: Int) {
        guard index >= 0, index < inUse, leases[index] > 0 else { return }
        leases[index] -= 1
    }
}
