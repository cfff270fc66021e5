import MediaDevicesCore
import Synchronization

/// The device part of a source (a camera session, a screen grabber, the test pattern, a
/// PipeWire stream): what `SourceCore` calls to open, run and close the device. The core calls
/// it only with its control lock held, so one call at a time and never from the capture thread.
protocol SourceDevice: Sendable {
    /// Opens the device and negotiates the format; returns at once when it is open and usable.
    mutating func open() throws(MediaDevicesError)
    /// Starts a capture run of the open device that delivers into `delivery`.
    func startRun(delivery: FrameDelivery) throws(MediaDevicesError) -> CaptureRun
    /// Closes what `open` acquired (no run is using it any more).
    mutating func close()
}

/// The lifecycle every source shares, so that a source writes only its device part
/// (`SourceDevice`): initialize, start, stop and release; changes made while capturing (format,
/// device, orientation tracker), which pause the run and resume it within the same delivery run
/// so consumers stay subscribed; and the rules for calls made from the source's own capture
/// thread (its consumer callback, or a task on its `captureExecutor`):
///
/// - `stop()` there returns at once and capture ends when the callback returns;
/// - `release()` there only stops (the device closes at the next `release()` or with the source);
/// - every other control call there throws `.invalidState`: it would wait for the thread it runs on.
///
/// The capture thread is known by its mark (`CaptureThread.isOwned(by:)`), not by the run slot,
/// so the rules hold also while its run starts or stops: a consumer's `captureDidStop` that
/// calls `release()` while another thread's `stop()` waits for it returns at once. The consumer
/// hears of a failed start or restart after the control lock is released, so it may call the
/// source again.
///
/// Locks: the control lock (which holds the device part) is held while a run is stopped and
/// its thread joined; the capture thread never takes it. What readers and the capture thread
/// see lives elsewhere, behind short locks (`RunSlot`, the sources' published state).
final class SourceCore<Device: SourceDevice>: Sendable {
    /// Hands frames to the consumer and the sequences; outlives runs.
    let delivery = FrameDelivery()
    private let run = RunSlot()
    private let device: Mutex<Device>
    /// The failure that ended the delivery run under the control lock: the sequences and the
    /// consumer hear it once the lock is released (a consumer may call back into the source).
    private let pendingEnd = Mutex<MediaDevicesError?>(nil)

    /// A core for `device`, named `label` in errors (a device path or unique ID).
    init(device: consuming sending Device, label: String) {
        self.device = Mutex(device)
        delivery.deviceLabel = label
    }

    /// What errors call the device (`setLabel` changes it when the source switches devices);
    /// kept in `delivery`, whose dropped-frame errors name it too.
    var label: String { delivery.deviceLabel ?? "" }

    /// Changes the name errors give the device.
    func setLabel(_ label: String) {
        delivery.deviceLabel = label
    }

    /// Whether a run is delivering frames.
    var isCapturing: Bool { run.isRunning }

    /// Whether the caller is one of this source's capture threads (its consumer callback, a
    /// task on its capture executor), also while that thread's run is starting or stopping.
    var isOnCaptureThread: Bool { CaptureThread.isOwned(by: delivery) }

    /// Throws `.invalidState` when called on this source's capture thread, where waiting for
    /// the thread to stop would wait forever.
    func refuseOnCaptureThread(_ operation: String) throws(MediaDevicesError) {
        guard isOnCaptureThread else { return }
        throw MediaDevicesError(.invalidState, device: label, operation: operation,
                                detail: "Called from this source's frame callback (or a task on its capture executor), which runs on the capture thread that would have to stop; call it from another thread or task")
    }

    /// What a control call may do with the run while it holds the control lock.
    struct Control {
        fileprivate let core: SourceCore

        /// Whether a run is delivering frames.
        var isRunning: Bool { core.run.isRunning }

        /// Stops the run for a change and waits for its thread, keeping the delivery run open;
        /// returns whether there was a live run to resume (a run that ended by itself, unplugged
        /// say, finished its delivery run: `start()` begins a new one, a resume would deliver
        /// into the finished one).
        func pauseRun() -> Bool { core.run.stop(restarting: true) && core.delivery.isRunActive }

        /// Starts a new run of `device` within the open delivery run (after `pauseRun`). If it
        /// cannot start, the sequences end with the error, which is thrown.
        func resumeRun(_ device: Device) throws(MediaDevicesError) {
            core.delivery.streamRestarted()
            do {
                core.run.current = try device.startRun(delivery: core.delivery)
            } catch {
                core.finishDelivery(error, operation: "restart capture")
                throw error
            }
        }
    }

    /// Runs `body` with the device part and the run under the control lock; refused with
    /// `.invalidState` on the capture thread (see the rules above).
    func withControl<Result>(_ operation: String, _ body: (inout Device, Control) throws -> Result) throws(MediaDevicesError) -> Result {
        try refuseOnCaptureThread(operation)
        let control = Control(core: self)
        var result: Result?
        defer {
            if let failure = pendingEnd.withLock({ $0.take() }) { delivery.finish(error: failure) }
        }
        do {
            try device.withLock { device throws in result = try body(&device, control) }
        } catch {
            throw MediaDevicesError.converting(error, device: label, operation: operation)
        }
        return result!
    }

    /// Opens the device (`SourceDevice.open`).
    func initialize() throws(MediaDevicesError) {
        do {
            try withControl("initialize") { device, _ in try device.open() }
        } catch {
            delivery.log(.error, "could not open: \(error)", ["code": "\(error.code)"])
            throw error
        }
    }

    /// Starts a run, opening the device first if needed; does nothing while one runs. If it
    /// fails, the sequences end with the error, which is thrown.
    func start() throws(MediaDevicesError) {
        do {
            let started = try withControl("start") { device, control -> Bool in
                if control.isRunning { return false }
                _ = run.stop(restarting: false)  // a run that ended by itself: wait until it let go
                do {
                    try device.open()
                    delivery.beginRun()
                    run.current = try device.startRun(delivery: delivery)
                    return true
                } catch {
                    finishDelivery(error, operation: "start capture")
                    throw error
                }
            }
            // Logged after the control lock is released: a log handler is the application's code.
            if started { delivery.log(.info, "capture started") }
        } catch {
            delivery.log(.error, "could not start: \(error)", ["code": "\(error.code)"])
            throw error
        }
    }

    /// A new sequence of the source's frames (see `VideoCapturer.frames(bufferSize:)`).
    func frames(bufferSize: Int) -> VideoFrames { delivery.makeFrames(bufferSize: bufferSize) }

    /// A new sequence of the source's frames converted to `output` (see `VideoCapturer`).
    func frames(bufferSize: Int, output: OutputFormat) throws(MediaDevicesError) -> VideoFrames {
        do {
            return delivery.makeFrames(bufferSize: bufferSize, converter: try FrameConverter(output: output, device: label))
        } catch {
            throw MediaDevicesError.converting(error, device: label, operation: "frames(output:)")
        }
    }

    /// Stops the run and waits for its thread; ends every sequence and tells the consumer, once.
    /// On the capture thread it returns at once and the run ends when the callback returns.
    func stop() {
        if isOnCaptureThread {
            // The run's own thread asks it to end, also before `start()` has stored the run (a
            // first frame's callback can be that quick on a busy machine) and while a change
            // pauses it (the end wins: the change does not resume it).
            CaptureRun.stopOwnRun()
            return
        }
        let stopped = device.withLock { _ in run.stop(restarting: false) }
        if !stopped { delivery.finish(error: nil) }  // nothing ran: still end waiting sequences
    }

    /// Ends the delivery run with `error` (every sequence throws it; the consumer hears it)
    /// once the control lock is released (`withControl`).
    fileprivate func finishDelivery(_ error: any Error, operation: String) {
        let failure = MediaDevicesError.converting(error, device: label, operation: operation)
        pendingEnd.withLock { $0 = failure }
    }

    /// Stops and closes the device. On the capture thread it only stops: the device closes at
    /// the next `release()` or when the source is freed.
    func release() {
        stop()
        if isOnCaptureThread { return }
        device.withLock { $0.close() }
    }
}
