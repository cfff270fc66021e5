#if PipeWire
import MediaDevicesCore
import CPipeWire

/// The capturing thread's side of lending one PipeWire stream's buffers to `frames` sequences
/// (the bookkeeping every thread shares is `PipeWireBufferLeases`): a camera run's
/// (`PipeWireCameraPump`) and a portal screen's (`PortalScreenGrabber`). A delivered buffer a
/// sequence leased stays the stream's held buffer; before anything may give it back or remove it
/// (the next picture, an iteration of the stream's loop, closing) `lendIfStillLeased` takes it
/// out of the stream if a lease still holds it, so a reader that gives each frame back before
/// then (on the capture executor) costs no lend and no return. Buffers whose last lease came back
/// go back to the stream in `returnGivenBack`. Used by one thread at a time (the one that
/// iterates the capture); allocates nothing per frame.
// @unchecked Sendable: made for, and used by, the thread that iterates the capture.
final class PipeWireLending: @unchecked Sendable {
    /// The leases, which sequences take and give back from any thread.
    let leases: PipeWireBufferLeases
    private let capture: PipeWireCapture
    /// The slot of the frame delivered last, when a sequence leased it (see `lendIfStillLeased`).
    private var leasedSlot = -1

    /// Lends `capture`'s buffers under `leases`.
    init(capture: PipeWireCapture, leases: PipeWireBufferLeases) {
        self.capture = capture
        self.leases = leases
    }

    /// Lends the frame delivered last out of the stream (`cpw_capture_lend`) if a lease still
    /// holds it. Call before anything may give the held buffer back or remove it.
    func lendIfStillLeased() {
        guard leasedSlot >= 0 else { return }
        if leases.lendIfStillLeased(slot: leasedSlot) { capture.lend() }
        leasedSlot = -1
    }

    /// Returns to the stream the lent buffers whose last lease came back since the last call
    /// (one atomic read when none did). Call after `lendIfStillLeased`.
    func returnGivenBack() {
        if leases.takePendingReturns() { leases.returnGivenBack { capture.returnBuffer($0) } }
    }

    /// Calls `body` with what makes `picture` lendable (`nil` when its buffer is not in a mapping
    /// of ours: the frame is then copied), then notes whether a sequence leased it.
    func deliver(_ picture: cpw_frame, formatID: UInt64, _ body: (LendableBuffer?) -> Void) {
        let slot = Int(picture.slot)
        guard slot >= 0 else { return body(nil) }
        leases.beginDelivery(slot: slot, mapping: picture.mapping, withProducer: capture.buffersWithProducer, buffers: capture.bufferCount)
        body(LendableBuffer(lender: leases, index: slot, formatID: formatID))
        if leases.endDelivery(slot: slot) { leasedSlot = slot }
    }

    /// Closes the stream (after lending out the frame a lease still holds), then tells the leases
    /// it is over: lent buffers keep their mappings until their last give-back.
    func close() {
        lendIfStillLeased()
        capture.close()
        leases.endRun()
    }
}
#endif
