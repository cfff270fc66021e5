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

    /// What a failed `applyFormat` is rolled back to (the request and what was negotiated).
    associatedtype SavedFormat
    /// The format as it is now, saved before `applyFormat` changes it.
    var savedFormat: SavedFormat { get }
    /// Makes `request` the format asked for and negotiates it (opening the device when it is
    /// not open), with the run paused or none running (`SourceCore.setFormat`).
    mutating func applyFormat(_ request: FormatRequest) throws(MediaDevicesError) -> FormatNegotiation
    /// Puts back `saved` after `applyFormat` failed.
    mutating func restoreFormat(_ saved: SavedFormat)

    /// What the part of `open` that waits (for a person, a server) makes, for `install`.
    associatedtype Prepared: Sendable = Never
    /// The name of the thread `prepareOpen` runs on.
    static var preparingThreadName: String { get }
    /// The part of `open` that waits for a person or a server, made without the control lock on
    /// a thread of its own (`SourceCore.prepare()`), on the copy of the device part the core
    /// was made with: it reads only configuration and published state. `nil`: nothing to wait
    /// for (already open).
    func prepareOpen() throws(MediaDevicesError) -> Prepared?
    /// Publishes what `prepareOpen` made, unless the device was opened meanwhile.
    mutating func install(_ prepared: Prepared)
}

extension SourceDevice where Prepared == Never {
    /// No thread: a device whose `open` waits for nothing is opened by `initialize()`.
    static var preparingThreadName: String { "md-open" }
    /// Nothing waits: `open` does it all.
    func prepareOpen() -> Never? { nil }
    /// Nothing to install.
    func install(_ prepared: Never) {}
}

/// The published state of a source that negotiates in `open()` from the request alone (the
/// test pattern over its own formats, a PipeWire camera over its node's).
protocol RequestedFormat: Sendable {
    /// The format asked for.
    var request: FormatRequest { get set }
    /// The outcome of its negotiation; `nil` until `open()` (and after `close()`).
    var negotiation: FormatNegotiation? { get set }
}

/// The request and its negotiation as they were, which a failed format change puts back.
struct SavedRequest: Sendable {
    /// The format asked for.
    let request: FormatRequest
    /// What was negotiated for it, if anything.
    let negotiation: FormatNegotiation?
}

/// A device part with nothing to open but a format to choose from a list (the test pattern
/// from its own formats, a PipeWire camera from its node's): `open()` negotiates `state`'s
/// request when it has no negotiation yet, `close()` forgets it, and a format change
/// negotiates the new request before it replaces the old one.
protocol RequestNegotiating: SourceDevice where SavedFormat == SavedRequest {
    associatedtype State: RequestedFormat
    /// The published state holding the request and its negotiation.
    var state: PublishedState<State> { get }
    /// Chooses the format `request` asks for (with the state's other fields as they are now).
    func negotiate(_ request: FormatRequest) throws(MediaDevicesError) -> FormatNegotiation
}

extension RequestNegotiating {
    /// Negotiates the request, unless it is negotiated already.
    func open() throws(MediaDevicesError) {
        guard let asked = state.withLock({ $0.negotiation == nil ? $0.request : nil }) else { return }
        let negotiation = try negotiate(asked)
        state.withLock { $0.negotiation = negotiation }
    }

    /// Forgets the negotiation.
    func close() { state.withLock { $0.negotiation = nil } }

    /// The request and its negotiation now.
    var savedFormat: SavedRequest { state.withLock { SavedRequest(request: $0.request, negotiation: $0.negotiation) } }

    /// Negotiates `request` and makes it the request in force; a request that fails changes nothing.
    func applyFormat(_ request: FormatRequest) throws(MediaDevicesError) -> FormatNegotiation {
        let negotiation = try negotiate(request)
        state.withLock { $0.request = request; $0.negotiation = negotiation }
        return negotiation
    }

    /// Puts back the request and its negotiation.
    func restoreFormat(_ saved: SavedRequest) {
        state.withLock { $0.request = saved.request; $0.negotiation = saved.negotiation }
    }
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
    let delivery: FrameDelivery
    private let run = RunSlot()
    private let device: Mutex<Device>
    /// The device part as the core was made with it, for `prepare()`, which waits outside the
    /// control lock (`SourceDevice.prepareOpen`).
    private let template: Device
    /// The failure that ended the delivery run under the control lock: the sequences and the
    /// consumer hear it once the lock is released (a consumer may call back into the source).
    private let pendingEnd = Mutex<MediaDevicesError?>(nil)

    /// A core for `device`, named `label` in errors (a device path or unique ID), delivering
    /// through `delivery` (made here unless the device part needs it too, e.g. for its logger).
    init(device: consuming sending Device, label: String, delivery: FrameDelivery = FrameDelivery()) {
        self.delivery = delivery
        template = copy device
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

        /// The one "change while running" sequence: pauses the run (if one is live), makes
        /// `change` to the device part and resumes the run with it. If `change` throws,
        /// `rollBack` puts back what it changed, the run resumes as it was, and the error is
        /// thrown. A run that cannot resume ends the sequences with that error (`resumeRun`),
        /// which is thrown.
        func whilePaused<Result>(_ device: inout Device, _ change: (inout Device) throws(MediaDevicesError) -> Result,
                                 rollBack: (inout Device) -> Void = { _ in }) throws(MediaDevicesError) -> Result {
            let wasRunning = pauseRun()
            let result: Result
            do {
                result = try change(&device)
            } catch {
                rollBack(&device)
                if wasRunning { try resumeRun(device) }
                throw error
            }
            if wasRunning { try resumeRun(device) }
            return result
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
            delivery.logHeldLines()
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

    /// Opens the device as `initialize()` does, making the part of the opening that waits (for
    /// a person, a server: `SourceDevice.prepareOpen`) on a thread of its own, without the
    /// control lock and cancellable (`runBlocking`), then publishing it under the lock.
    func prepare() async throws(MediaDevicesError) {
        if Device.Prepared.self != Never.self {
            let template = self.template
            let prepared: Device.Prepared?
            do {
                prepared = try await runBlocking(name: Device.preparingThreadName, device: label, operation: "initialize") {
                    () throws(MediaDevicesError) -> Device.Prepared? in try template.prepareOpen()
                }
            } catch {
                delivery.logHeldLines()  // what the opening said before it failed (no lock was held)
                throw error
            }
            if let prepared { try withControl("prepare") { device, _ in device.install(prepared) } }
        }
        try initialize()
    }

    /// Changes the format (`SourceDevice.applyFormat`), also while running, within the same
    /// delivery run; on failure the old format is put back and the run resumes with it.
    func setFormat(_ request: FormatRequest) throws(MediaDevicesError) -> FormatNegotiation {
        try withControl("setFormat") { device, control in
            let saved = device.savedFormat
            return try control.whilePaused(&device) { device throws(MediaDevicesError) in
                try device.applyFormat(request)
            } rollBack: { device in
                device.restoreFormat(saved)
            }
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

    /// A new sequence of the source's frames (see `VideoSource.frames(bufferSize:)`).
    func frames(bufferSize: Int) -> VideoFrames { delivery.makeFrames(bufferSize: bufferSize) }

    /// A new sequence of the source's frames converted to `output` (see ``VideoSource``).
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
