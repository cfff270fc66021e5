#if PipeWire
import MediaDevicesCore
import CPipeWire
import Synchronization

/// The buffers one PipeWire stream lends to `frames` sequences (`FrameBufferLender`), as a
/// V4L2 run lends its driver buffers (a camera run's stream, or a portal screen's, which lives
/// across the source's runs; `PipeWireLending` is the capturing thread's side): a leased buffer stays out of the stream (not given back to
/// the producer) until its last lease is given back, from whichever thread; the capture thread
/// then gives it back (`pw_stream_queue_buffer` runs only on the thread that iterates the
/// stream, so a give-back from elsewhere marks the buffer and wakes that thread; one on the
/// capture thread itself, by a reader on the capture executor or a consumer callback, only marks
/// it, and the thread's next step returns it before waiting: no wake-up, no extra pass; with no
/// run attached, the next grab returns it). A buffer
/// whose last lease comes back before that next step was never lent out of the stream (see
/// `lendIfStillLeased`): its give-back only clears its slot, on any thread, with no mark and no
/// wake-up (a reader on the capture executor gives each frame back so). The same
/// policy as V4L2's: a lease is refused (the frame is copied instead) when it would leave the
/// producer fewer than `minimumWithProducer` buffers. The pixels live in the capture's own
/// mapping of each buffer (`cpw_mapping`: memfd and DMA-BUF over a descriptor of its own; plain
/// memory, `SPA_DATA_MemPtr`, as a second mapping of the same shared pages of PipeWire's pool), so
/// a lease outlives its buffer set and the stream with no copy: after the run ended, the last
/// give-back frees the mapping. Allocates nothing per frame.
// @unchecked Sendable: the slots live in `state` behind its lock.
final class PipeWireBufferLeases: FrameBufferLender, @unchecked Sendable {
    /// What the run knows of one buffer slot (`cpw_frame.slot`).
    private struct Slot {
        /// Leases outstanding (several sequences can lease the same frame).
        var leases = 0
        /// Being delivered by the capture thread, which lends it afterwards if leased.
        var delivering = false
        /// Lent out of the stream (`cpw_capture_lend`), with its mapping ours to keep.
        var lent = false
        /// Its last lease was given back: the capture thread returns it to the stream.
        var returning = false
        /// The buffer's mapping, to free when the run ended before it came back.
        var mapping: OpaquePointer?
    }

    // `@unchecked Sendable`: its pointer is only followed under the lock.
    private struct State: @unchecked Sendable {
        /// One entry per slot, allocated once (no array: no uniqueness checks per change).
        let slots = UnsafeMutablePointer<Slot>.allocate(capacity: Int(CPW_MAX_SLOTS))
        /// The producer's buffers when the frame being delivered arrived.
        var withProducer = 0
        /// The stream is closed: nothing goes back to it any more.
        var ended = false
        /// Wakes the capturing thread for a give-back from another thread (`nil`: no run, the
        /// next grab returns it).
        var wake: WakeUpEvent?
    }

    /// The stream's buffers when the last frame was delivered (`bufferCount`), without the lock.
    private let streamBuffers = Atomic<Int>(0)

    /// Buffers kept with the producer however many frames are leased.
    let minimumWithProducer: Int
    /// The run's capture threads are marked as this object's (`CaptureThread.isOwned(by:)`).
    private let owner: AnyObject
    /// A give-back on the capture thread marked a buffer to return (`takePendingReturns`).
    private let returnsPending = Atomic<Bool>(false)
    private let state = Mutex(State())

    /// Leases for a stream whose capture thread (a thread of `owner`'s) sleeps on `wake`
    /// (signalled when a give-back from another thread needs it; see `attach`).
    init(minimumWithProducer: Int = 2, wake: WakeUpEvent?, owner: AnyObject) {
        self.minimumWithProducer = max(1, minimumWithProducer)
        self.owner = owner
        state.withLock {
            $0.slots.initialize(repeating: Slot(), count: Int(CPW_MAX_SLOTS))
            $0.wake = wake
        }
    }

    /// A run's capture thread now sleeps on `wake` (`nil`: the run ended; give-backs wait for the
    /// next grab). A portal screen's stream outlives its source's runs.
    func attach(wake: WakeUpEvent?) { state.withLock { $0.wake = wake } }

    deinit { state.withLock { $0.slots.deallocate() } }

    /// The capture thread delivers the buffer in `slot` (whose mapping is `mapping`) while the
    /// producer has `withProducer` of the stream's `buffers`.
    func beginDelivery(slot: Int, mapping: OpaquePointer?, withProducer: Int, buffers: Int) {
        streamBuffers.store(buffers, ordering: .relaxed)
        state.withLock { state in
            state.slots[slot].delivering = true
            state.slots[slot].mapping = mapping
            state.withProducer = withProducer
        }
    }

    /// The delivery of `slot` is over: true when a sequence leased it. The buffer stays the
    /// stream's held one; before the capture thread next lets the stream give it back or remove
    /// it, it calls `lendIfStillLeased`.
    func endDelivery(slot: Int) -> Bool {
        state.withLock { state in
            state.slots[slot].delivering = false
            return state.slots[slot].leases > 0
        }
    }

    /// On the capture thread, before the stream may give back or remove the held buffer in
    /// `slot`, delivered leased: true when a lease still holds it (then it is lent, and the
    /// caller takes it out of the stream, `cpw_capture_lend`); false when every lease came back
    /// meanwhile (the stream gives it back as any held buffer).
    func lendIfStillLeased(slot: Int) -> Bool {
        state.withLock { state in
            guard slot >= 0, slot < Int(CPW_MAX_SLOTS), state.slots[slot].leases > 0 else { return false }
            state.slots[slot].lent = true
            state.slots[slot].returning = false
            return true
        }
    }

    func lease(_ index: Int) -> Bool {
        state.withLock { state in
            guard !state.ended, index >= 0, index < Int(CPW_MAX_SLOTS), state.slots[index].delivering else { return false }
            // Lending this one leaves the producer the buffers it has now: enough of them?
            if state.slots[index].leases == 0 && state.withProducer < minimumWithProducer { return false }
            state.slots[index].leases += 1
            return true
        }
    }

    var bufferCount: Int { streamBuffers.load(ordering: .relaxed) }

    func giveBack(_ index: Int) {
        let (marked, wake) = state.withLock { state -> (Bool, WakeUpEvent?) in
            guard index >= 0, index < Int(CPW_MAX_SLOTS), state.slots[index].leases > 0 else { return (false, nil) }
            state.slots[index].leases -= 1
            guard state.slots[index].leases == 0, !state.slots[index].delivering else { return (false, nil) }
            if state.ended || !state.slots[index].lent {
                // The run is over: nothing to give back to; the pixels go with their mapping. Or
                // the buffer was never lent out of the stream (still its held buffer: the capture
                // thread's next step finds no lease on it and the stream gives it back as any
                // held one): nothing for the capture thread to do, so no mark and no wake-up.
                if state.slots[index].lent { cpw_mapping_free(state.slots[index].mapping) }
                state.slots[index] = Slot()
                return (false, nil)
            }
            state.slots[index].returning = true
            return (true, state.wake)
        }
        guard marked else { return }
        // The capturing thread's next step (or grab) returns it; from another thread, wake it.
        returnsPending.store(true, ordering: .releasing)
        if let wake, !CaptureThread.isOwned(by: owner) { wake.signal() }
    }

    /// On the capture thread, before it waits: whether give-backs marked buffers to return
    /// (`returnGivenBack`) since the last call; clears the mark.
    func takePendingReturns() -> Bool {
        returnsPending.exchange(false, ordering: .acquiringAndReleasing)
    }

    /// On the capture thread: gives every buffer whose last lease came back to `giveBack` (which
    /// returns it to the stream, `cpw_capture_return`, freeing its mapping if the stream had let
    /// it go meanwhile). A buffer leased again since (a portal screen delivers its newest picture
    /// again while no newer one comes) stays lent until its next last give-back.
    func returnGivenBack(_ giveBack: (Int) -> Void) {
        state.withLock { state in
            var index = 0
            while index < Int(CPW_MAX_SLOTS) {
                if state.slots[index].returning && (state.slots[index].leases > 0 || state.slots[index].delivering) {
                    state.slots[index].returning = false
                } else if state.slots[index].returning {
                    if state.slots[index].lent { giveBack(index) }
                    state.slots[index] = Slot()
                }
                index += 1
            }
        }
    }

    /// The stream is closed (after `cpw_capture_close`): the mappings of lent buffers no lease
    /// holds any more are freed now, the others by their last give-back.
    func endRun() {
        state.withLock { state in
            state.ended = true
            var index = 0
            while index < Int(CPW_MAX_SLOTS) {
                if state.slots[index].lent && state.slots[index].leases == 0 {
                    cpw_mapping_free(state.slots[index].mapping)
                    state.slots[index] = Slot()
                }
                index += 1
            }
        }
    }
}
#endif
