import MediaDevicesCore
import Synchronization

/// Where a source keeps its current `CaptureRun`: readable from any thread (the capture thread
/// included) without waiting, and stopped from the control side.
final class RunSlot: Sendable {
    private let run: Mutex<CaptureRun?> = Mutex(nil)

    /// The current run, if any.
    var current: CaptureRun? {
        get { run.withLock { $0 } }
        set { run.withLock { $0 = newValue } }
    }

    /// Whether a run is delivering frames.
    var isRunning: Bool { current?.isRunning ?? false }

    /// Takes the run out of the slot, stops it and waits for its thread (see
    /// `CaptureRun.stop(restarting:)`); returns whether there was one.
    func stop(restarting: Bool) -> Bool {
        guard let run = run.withLock({ slot -> CaptureRun? in
            defer { slot = nil }
            return slot
        }) else { return false }
        run.stop(restarting: restarting)
        return true
    }
}
