import Glibc
import Synchronization

/// One run of a media thread, shared by every video source and both sides of an audio driver:
/// the thread, the wake-up event, and the rules for ending. The thread runs `loop` until it is
/// woken or fails, then `cleanup` (release buffers, close a failed device), then reports itself
/// not running, and then — unless the run is being restarted for a format change or device
/// switch — calls `finish` exactly once (a video source ends its delivery there; an audio side
/// tells its `onStop`). So once `isRunning` is false, everything the run held is released, and
/// code hearing of the end already sees it false. A new run joins this thread first
/// (`RunSlot.stop`, `AudioDriverSide.start`), so the late `finish` cannot end the next run.
package final class CaptureRun: Sendable {
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

    /// Starts a thread named `name`, marked as a thread of `owner` (`CaptureThread.isOwned(by:)`),
    /// running `loop(wake, shouldStop)`; `loop` returns nil when asked to stop (`shouldStop()`
    /// true after a wake-up), or the failure that ended it. The wake-up event also wakes it for
    /// jobs of a video source's `CaptureExecutor`, if the loop attaches it. `finish` hears the
    /// end (see the type's comment); `owner` must outlive the thread.
    package init(name: String, owner: AnyObject,
                 loop: @escaping @Sendable (WakeUpEvent, _ shouldStop: @escaping @Sendable () -> Bool) -> MediaDevicesError?,
                 cleanup: @escaping @Sendable (MediaDevicesError?) -> Void,
                 finish: @escaping @Sendable (MediaDevicesError?) -> Void) throws(MediaDevicesError) {
        let wake = try WakeUpEvent()
        let flags = self.flags
        let ending = Ending(flags: flags, wake: wake)
        self.ending = ending
        thread = try CaptureThread(name: name, owner: owner) {
            // Unretained: this closure holds `ending` until the thread ends.
            pthread_setspecific(Self.ownEnding, Unmanaged.passUnretained(ending).toOpaque())
            defer { pthread_setspecific(Self.ownEnding, nil) }
            let failure = loop(wake) { flags.stopRequested.load(ordering: .acquiring) }
            cleanup(failure)
            flags.running.store(false, ordering: .releasing)
            if failure != nil || !flags.restarting.load(ordering: .acquiring) || flags.endedByOwnThread.load(ordering: .acquiring) {
                finish(failure)
            }
        }
    }

    /// Whether the thread is still running.
    package var isRunning: Bool { flags.running.load(ordering: .acquiring) }

    /// Whether the caller is this run's thread.
    package var isCurrent: Bool { thread.isCurrent }

    /// Asks the thread to end and waits for it, unless called from the thread itself (from a
    /// consumer callback), in which case it ends when the callback returns. With `restarting`,
    /// `finish` is not called (the source or side goes on with a next run), unless the run
    /// failed or ended itself.
    package func stop(restarting: Bool = false) {
        requestStop(restarting: restarting)
        thread.join()
    }

    /// Asks the thread to end and returns at once: for a thread the run's work also runs on
    /// besides its own (PulseAudio's loop thread), where waiting would wait for itself.
    package func requestStop(restarting: Bool = false) {
        ending.request(restarting: restarting)
    }

    /// Waits for a run that has ended (or was asked to) to let go of its thread.
    package func join() { thread.join() }

    /// Ends the run whose thread the caller is (a consumer callback, a task on the capture
    /// executor) when the callback returns, whether or not its source has stored the run yet;
    /// returns false when the caller is no run's thread.
    @discardableResult
    package static func stopOwnRun() -> Bool {
        guard let pointer = pthread_getspecific(ownEnding) else { return false }
        Unmanaged<Ending>.fromOpaque(pointer).takeUnretainedValue().requestFromOwnThread()
        return true
    }
}
