import MediaDevicesCore
import Synchronization

/// A source whose frames live in buffers it can lend out past the delivery callback: a V4L2
/// run's mmap'd driver buffers. A leased buffer stays out of the driver's queue until every lease
/// on it is given back; the lender refuses a lease that would leave the driver short of buffers.
protocol FrameBufferLender: AnyObject, Sendable {
    /// Takes a lease on buffer `index` (the one being delivered, on the capture thread). Returns
    /// `false` when lending it would leave fewer buffers queued than the driver needs, or when
    /// the lender cannot lend at all: the caller copies the frame instead.
    func lease(_ index: Int) -> Bool
    /// Gives one lease on buffer `index` back, from any thread; the last one requeues the buffer
    /// (or, after the run ended, unmaps it).
    func giveBack(_ index: Int)
    /// The buffers the lender cycles now, lent or not (the driver's, the producer's); read on
    /// the capture thread for each lendable frame (`CaptureStatistics.buffers`), so it takes no lock.
    var bufferCount: Int { get }
}

/// Which lendable buffer a frame's planes are in.
struct LendableBuffer {
    /// The buffers' owner.
    let lender: any FrameBufferLender
    /// The buffer's index.
    let index: Int
    /// Names the format of every frame lent under it (one V4L2 run's frames share theirs), so a
    /// pooled buffer that already holds that format keeps it rather than copying it again (a
    /// copy retains and releases its arrays and strings: about 350 of the 3,000 instructions a
    /// leased frame cost, counted with callgrind); `0`: not known, copy it.
    var formatID: UInt64 = 0

    /// A new `formatID`, unique in the process.
    static func newFormatID() -> UInt64 { formatIDs.add(1, ordering: .relaxed).newValue }

    private static let formatIDs = Atomic<UInt64>(0)

    /// Takes a lease on this buffer (see `FrameBufferLender.lease`).
    func lease() -> Bool { lender.lease(index) }

    /// Gives one lease on this buffer back (see `FrameBufferLender.giveBack`).
    func giveBack() { lender.giveBack(index) }
}
