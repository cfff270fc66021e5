import MediaDevicesCore
import Synchronization

/// The framebuffers a KMS screen source lends to `frames` sequences (mapped, or exported with
/// `exportsDMABuf`): the one on screen now, and any earlier one a held frame still leases. A leased framebuffer stays
/// mapped and exported until its last lease is given back, even after the screen moved to
/// another framebuffer (a mode change, a page flip) or the source was released. Nothing to
/// starve: a lease is never refused while the framebuffer is known.
final class FramebufferLeases: FrameBufferLender, Sendable {
    private struct Slot {
        var framebuffer: Framebuffer?
        var leases = 0
        /// The framebuffer on screen now (kept while unleased).
        var current = false
    }

    private let slots = Mutex<[Slot]>([])

    /// Makes `framebuffer` the current one (`nil`: none) and returns its slot (-1 for `nil`).
    /// The previous current one is let go unless leased. Called on the capture thread when the
    /// screen shows another framebuffer; allocates only when every slot is leased.
    func adopt(_ framebuffer: Framebuffer?) -> Int {
        var dropped: Framebuffer?
        let index = slots.withLock { slots -> Int in
            var index = 0
            while index < slots.count {
                if slots[index].current {
                    slots[index].current = false
                    if slots[index].leases == 0 { dropped = slots[index].framebuffer; slots[index].framebuffer = nil }
                }
                index += 1
            }
            guard let framebuffer else { return -1 }
            index = 0
            while index < slots.count, slots[index].framebuffer != nil { index += 1 }
            let slot = Slot(framebuffer: framebuffer, leases: 0, current: true)
            if index < slots.count { slots[index] = slot } else { slots.append(slot) }
            return index
        }
        withExtendedLifetime(dropped) {}  // unmapped and closed here, outside the lock
        return index
    }

    func lease(_ index: Int) -> Bool {
        slots.withLock { slots in
            guard index >= 0, index < slots.count, slots[index].framebuffer != nil else { return false }
            slots[index].leases += 1
            return true
        }
    }

    /// The screen's one framebuffer on show: a KMS grab cycles none of its own.
    var bufferCount: Int { 1 }

    func giveBack(_ index: Int) {
        let dropped = slots.withLock { slots -> Framebuffer? in
            guard index >= 0, index < slots.count, slots[index].leases > 0 else { return nil }
            slots[index].leases -= 1
            guard slots[index].leases == 0, !slots[index].current else { return nil }
            defer { slots[index].framebuffer = nil }
            return slots[index].framebuffer
        }
        withExtendedLifetime(dropped) {}  // the last lease of a replaced framebuffer: unmapped and closed here
    }
}
