import Glibc
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
        /// Set by the run's own thread (`stopOwnRun`): the run ends for good even if a control
        /// call is pausing it for a change at the same moment.
        let endedByOwnThread = Atomic<Bool>(false)
    }

    /// What the run's own thread needs to end its run from a consumer callback.
    private final class Ending: Sendable {
        let flags: Flags
        let wake: WakeUpEvent
        init(flags: Flags, wake: WakeUpEvent) { self.flags = flags; self.wake = wake }

        func request(restarting: Bool) {
            flags.restarting.store(restarting, ordering: .releasing)
            flags.stopRequested.store(true, ordering: .releasing)
            wake.signal()
        }

        func requestFromOwnThread() {
            flags.endedByOwnThread.store(true, ordering: .releasing)
            flags.stopRequested.store(true, ordering: .releasing)
            wake.signal()
        }
    }

    /// Each capture thread's own `Ending`, for its whole life: the thread can end its run before
    /// whoever started it has stored the run anywhere (a first frame's callback may call
    /// `stop()` before `start()` returns; the source's run slot is still empty then).
    private static let ownEnding: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()

    private let flags = Flags()
    private let ending: Ending
    private let thread: CaptureThread

    /// Starts a thread named `name`, marked as a thread of `delivery`'s source
    /// (`CaptureThread.isOwned(by:)`), running `loop(wake, shouldStop)`; `loop` returns nil when
    /// asked to stop (`shouldStop()` true after a wake-up), or the failure that ended it. The
    /// wake-up event also wakes it for jobs of the delivery's ``CaptureExecutor``, if the loop
    /// attaches it.
    init(name: String, delivery: FrameDelivery,
         loop: @escaping @Sendable (WakeUpEvent, _ shouldStop: @escaping @Sendable () -> Bool) -> MediaDevicesError?,
         cleanup: @escaping @Sendable (MediaDevicesError?) -> Void) throws(MediaDevicesError) {
        let wake = try WakeUpEvent()
        let flags = self.flags
        let ending = Ending(flags: flags, wake: wake)
        self.ending = ending
        thread = try CaptureThread(name: name, owner: delivery) {
            // Unretained: this closure holds `ending` until the thread ends.
            pthread_setspecific(Self.ownEnding, Unmanaged.passUnretained(ending).toOpaque())
            defer { pthread_setspecific(Self.ownEnding, nil) }
            let failure = loop(wake) { flags.stopRequested.load(ordering: .acquiring) }
            cleanup(failure)
            flags.running.store(false, ordering: .releasing)
            if failure != nil || !flags.restarting.load(ordering: .acquiring) || flags.endedByOwnThread.load(ordering: .acquiring) {
                delivery.finish(error: failure)
            }
        }
    }

    /// Whether the thread is still running.
    var isRunning: Bool { flags.running.load(ordering: .acquiring) }

    /// Asks the thread to end and waits for it, unless called from the thread itself (from a
    /// consumer callback), in which case it ends when the callback returns. With `restarting`,
    /// the delivery stays open for the next run.
    func stop(restarting: Bool = false) {
        ending.request(restarting: restarting)
        thread.join()
    }

    /// Ends the run whose thread the caller is (a consumer callback, a task on the capture
    /// executor) when the callback returns, whether or not its source has stored the run yet;
    /// returns false when the caller is no run's thread.
    @discardableResult
    static func stopOwnRun() -> Bool {
        guard let pointer = pthread_getspecific(ownEnding) else { return false }
        Unmanaged<Ending>.fromOpaque(pointer).takeUnretainedValue().requestFromOwnThread()
        return true
    }
}
