import Synchronization

/// The device part of a source (a camera session, a screen grabber, the test pattern, a
/// PipeWire stream): what `SourceCore` calls to open, run and close the device. The core calls
/// it only with its control lock held, so one call at a time and never from the capture thread.
protocol SourceDevice: Sendable {
    /// Opens the device and negotiates the format; returns at once when it is open and usable.
    mutating func open() throws
    /// Starts a capture run of the open device that delivers into `delivery`.
    func startRun(delivery: FrameDelivery) throws -> CaptureRun
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
/// Locks: the control lock (which holds the device part) is held while a run is stopped and
/// its thread joined; the capture thread never takes it. What readers and the capture thread
/// see lives elsewhere, behind short locks (`RunSlot`, the sources' published state).
final class SourceCore<Device: SourceDevice>: Sendable {
    /// Hands frames to the consumer and the sequences; outlives runs.
    let delivery = FrameDelivery()
    private let run = RunSlot()
    private let device: Mutex<Device>
    private let name: Mutex<String>

    /// A core for `device`, named `label` in errors (a device path or unique ID).
    init(device: consuming sending Device, label: String) {
        self.device = Mutex(device)
        name = Mutex(label)
    }

    /// What errors call the device (`setLabel` changes it when the source switches devices).
    var label: String { name.withLock { $0 } }

    /// Changes the name errors give the device.
    func setLabel(_ label: String) { name.withLock { $0 = label } }

    /// Whether a run is delivering frames.
    var isCapturing: Bool { run.isRunning }

    /// Whether the caller is the current run's capture thread.
    var isOnCaptureThread: Bool { run.isCurrentThread }

    /// Throws `.invalidState` when called on the current run's capture thread.
    func refuseOnCaptureThread(_ operation: String) throws {
        try run.refuseOnCaptureThread(device: label, operation: operation)
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
        func resumeRun(_ device: Device) throws {
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
    func withControl<Result>(_ operation: String, _ body: (inout Device, Control) throws -> Result) throws -> Result {
        try refuseOnCaptureThread(operation)
        let control = Control(core: self)
        var result: Result?
        try device.withLock { device throws in result = try body(&device, control) }
        return result!
    }

    /// Opens the device (`SourceDevice.open`).
    func initialize() throws {
        try withControl("initialize") { device, _ in try device.open() }
    }

    /// Starts a run, opening the device first if needed; does nothing while one runs. If it
    /// fails, the sequences end with the error, which is thrown.
    func start() throws {
        try withControl("start") { device, control in
            if control.isRunning { return }
            _ = run.stop(restarting: false)  // a run that ended by itself: wait until it let go
            do {
                try device.open()
                delivery.beginRun()
                run.current = try device.startRun(delivery: delivery)
            } catch {
                finishDelivery(error, operation: "start capture")
                throw error
            }
        }
    }

    /// Stops the run and waits for its thread; ends every sequence and tells the consumer, once.
    /// On the capture thread it returns at once and the run ends when the callback returns.
    func stop() {
        if let current = run.current, current.isCurrentThread {
            current.stop()
            return
        }
        let stopped = device.withLock { _ in run.stop(restarting: false) }
        if !stopped { delivery.finish(error: nil) }  // nothing ran: still end waiting sequences
    }

    /// Ends the delivery run with `error` (every sequence throws it; the consumer hears it).
    fileprivate func finishDelivery(_ error: any Error, operation: String) {
        delivery.finish(error: error as? MediaDevicesError
            ?? MediaDevicesError(.io, device: label, operation: operation, detail: "\(error)"))
    }

    /// Stops and closes the device. On the capture thread it only stops: the device closes at
    /// the next `release()` or when the source is freed.
    func release() {
        stop()
        if run.isCurrentThread { return }
        device.withLock { $0.close() }
    }
}
