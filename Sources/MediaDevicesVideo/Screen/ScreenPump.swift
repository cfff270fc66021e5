import MediaDevicesCore

/// One screen run's capture loop, a step at a time, as `CameraPump` is a camera's: wait for
/// the next deadline (or, on a still screen whose backend says when it changes, for that), grab,
/// deliver. A grab with nothing to show (output off) leaves a sequence gap; an unchanged screen
/// (X11 damage, the portal's stream), when skipped, is counted and numbers no frame, so it
/// leaves none. The capture thread steps it in a loop, running the ``CaptureExecutor``'s jobs
/// between steps; a reader on that executor whose sequence is empty steps it too, instead of
/// suspending (`CaptureExecutor.stepForReader`), so a sequence read there costs what a
/// consumer callback does. A wake-up (a job, a stop) ends a step without running jobs inside
/// it. Used only on the capture thread; allocates nothing per step of its own.
// @unchecked Sendable: made on the capture thread and used by that thread alone.
final class ScreenPump: CaptureExecutor.Loop, @unchecked Sendable {
    private let grabber: any ScreenGrabbing
    private let skipsUnchanged: Bool
    private let delivery: FrameDelivery
    private let shouldStop: () -> Bool
    private var pacer: FramePacer
    /// Deadlines that passed on an unchanged screen, which number no frame.
    private var unchanged: UInt64 = 0
    private var hasDelivered = false
    private var lastOutcome = ScreenGrabOutcome.nothingToShow
    /// After a frame or an unchanged grab, the next step sleeps until the backend says the
    /// screen may have changed (this descriptor), not until the next deadline.
    private var waitingForChange: Int32?
    /// The failure that ended the loop; `nil` while it runs, and when it was asked to stop.
    private(set) var failure: MediaDevicesError?

    init(grabber: any ScreenGrabbing, rate: FrameRate, skipsUnchanged: Bool, wake: WakeUpEvent,
         shouldStop: @escaping () -> Bool, delivery: FrameDelivery) {
        self.grabber = grabber
        self.skipsUnchanged = skipsUnchanged
        self.delivery = delivery
        self.shouldStop = shouldStop
        pacer = FramePacer(rate: rate, wake: wake, shouldStop: shouldStop, executor: delivery.executor)
    }

    /// Steps until asked to stop (returns `nil`) or until a grab fails (returns the error),
    /// running the executor's jobs after each step; `attached` is called once they come to
    /// this thread.
    func run(wake: WakeUpEvent, attached: () -> Void) -> MediaDevicesError? {
        grabber.attachRun(wake: wake)
        defer { grabber.attachRun(wake: nil) }
        delivery.executor.drive(self, wake: wake, attached: attached)
        return failure
    }

    /// Waits (for the deadline, or for a change) and grabs at most once. `.leave` once asked to
    /// stop or after a failure (`failure` then says which), and from then on.
    func step() -> CaptureExecutor.Step {
        // A stop seen by a reader's step (which reset the wake-up) is seen here again.
        if failure != nil || shouldStop() { return .leave }
        // Frames given back since the last step (a wake-up from another thread, or none).
        grabber.settleLeases()
        if let changes = waitingForChange {
            switch pacer.waitOnceForChange(on: changes, timeoutMilliseconds: 1000) {
            case .stop: return .leave
            case .woken: return .stepped
            case .changed, .due: break
            }
            waitingForChange = nil
            countStillDeadlines()
            return .stepped
        }
        switch pacer.waitOnceForNextFrame() {
        case .stop: return .leave
        case .woken, .changed: return .stepped
        case .due: break
        }
        do {
            let sequence = UInt32(truncatingIfNeeded: pacer.sequence &- unchanged)
            // Each run begins with a frame, however long the screen has been still.
            let outcome = try grabber.grab(timestamp: .now, sequence: sequence, onlyIfChanged: skipsUnchanged && hasDelivered) {
                delivery.deliver($0)
            }
            lastOutcome = outcome
            if outcome == .delivered { hasDelivered = true }
            if outcome == .unchanged {
                unchanged += 1
                delivery.recordUnchangedFrame()
            }
            // A backend that says when the screen may have changed (the portal, X11): after a
            // frame or an unchanged grab, sleep until it says so (or a second passed, a safety
            // net for a notice that never comes), so a still screen costs one wake-up a second,
            // not one per deadline. The deadlines that pass meanwhile are unchanged frames (no
            // sequence gap), and the next grab waits for no deadline already past. With nothing
            // to show (a format change under way) grabs stay paced.
            if skipsUnchanged, hasDelivered, lastOutcome != .nothingToShow, let changes = grabber.changeDescriptor {
                if try grabber.hasQueuedChange() {
                    countStillDeadlines()
                } else {
                    waitingForChange = changes
                }
                return .stepped
            }
        } catch {
            failure = error
            return .leave
        }
        pacer.frameDone()
        return .stepped
    }

    /// Moves past the frame just grabbed, counting the deadlines that passed since as unchanged.
    private func countStillDeadlines() {
        let before = pacer.sequence
        pacer.frameDone()
        let still = pacer.sequence - before - 1
        unchanged += still
        delivery.recordUnchangedFrames(Int(still))
    }
}
