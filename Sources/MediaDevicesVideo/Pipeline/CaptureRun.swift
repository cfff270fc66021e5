import MediaDevicesCore
import Synchronization

/// One run of a source's capture thread, shared by every source: the thread, the wake-up event,
/// and the rules for ending. The thread runs `loop` until it is woken or fails, then `cleanup`
/// (release buffers, close a failed device), then reports itself not running, and then —
/// unless the run is being restarted for a format change or device switch — ends the delivery
/// exactly once. So once `isRunning` is false, everything the run held is released, and a
/// consumer hearing `captureDidStop` (or a sequence ending) already sees it false. A new run
/// joins this thread first (`RunSlot.stop`), so the late `finish` cannot end the next run.
final class CaptureRun: Sendable {
    private final class Flags: Sendable {
        let running = Atomic<Bool>(true)
        let stopRequested = Atomic<Bool>(false)
        let restarting = Atomic<Bool>(false)
    }

    private let flags = Flags()
    private let wake: WakeUpEvent
    private let thread: CaptureThread

    /// Starts a thread named `name`, marked as a thread of `delivery`'s source
    /// (`CaptureThread.isOwned(by:)`), running `loop(wake, shouldStop)`; `loop` returns nil when
    /// asked to stop (`shouldStop()` true after a wake-up), or the failure that ended it. The
    /// wake-up event also wakes it for jobs of the delivery's `CaptureExecutor`, if the loop
    /// attaches it.
    init(name: String, delivery: FrameDelivery,
         loop: @escaping @Sendable (WakeUpEvent, _ shouldStop: @escaping @Sendable () -> Bool) -> MediaDevicesError?,
         cleanup: @escaping @Sendable (MediaDevicesError?) -> Void) throws {
        let wake = try WakeUpEvent()
        self.wake = wake
        let flags = self.flags
        thread = try CaptureThread(name: name, owner: delivery) {
            let failure = loop(wake) { flags.stopRequested.load(ordering: .acquiring) }
            cleanup(failure)
            flags.running.store(false, ordering: .releasing)
            if failure != nil || !flags.restarting.load(ordering: .acquiring) { delivery.finish(error: failure) }
        }
    }

    /// Whether the thread is still running.
    var isRunning: Bool { flags.running.load(ordering: .acquiring) }

    /// Asks the thread to end and waits for it, unless called from the thread itself (from a
    /// consumer callback), in which case it ends when the callback returns. With `restarting`,
    /// the delivery stays open for the next run.
    func stop(restarting: Bool = false) {
        flags.restarting.store(restarting, ordering: .releasing)
        flags.stopRequested.store(true, ordering: .releasing)
        wake.signal()
        thread.join()
    }

    /// Whether the caller is this run's thread (a consumer callback of this source).
    var isCurrentThread: Bool { thread.isCurrent }
}
