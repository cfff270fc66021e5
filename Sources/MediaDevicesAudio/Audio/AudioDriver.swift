import Logging
import MediaDevicesCore
import Synchronization

/// One side of an ``AudioDriver``: capture (device → bus) or render (bus → device). Each side is
/// initialized (the device opened and configured), started (its own audio thread runs), and
/// stopped independently, as `OTAudioDevice`'s capture and rendering halves are.
public final class AudioDriverSide: Sendable {
    private struct State {
        var device: AudioDevice?
        var options = AudioStreamOptions()
        var stream: (any AudioBackendStream)?
        /// The stream's end of the bus (its converter when the bus's format is not the device's).
        var port: AudioBusPort?
        /// The current or last run (its thread, wake-up and end), as a video source's.
        var run: CaptureRun?
        var shortfallBaseline = 0
        var onStop: (@Sendable (MediaDevicesError?) -> Void)?
        var observer: AudioPeriodObserver?
        var workObserver: AudioWorkObserver?
        var fallback: AudioDevice?
        var onFallback: (@Sendable (AudioDeviceSwitch, MediaDevicesError) -> Void)?
    }

    /// ``AudioDevice/Direction/input`` for the capture side, ``AudioDevice/Direction/output`` for
    /// the render side.
    package let direction: AudioDevice.Direction
    private let bus: AudioBus
    private let state = Mutex(State())
    private let counters = AudioCounters()
    /// Whether the side runs: a run's own `isRunning`, but held true across a device switch.
    private let running = Atomic<Bool>(false)
    /// Set while `switchDevice` replaces the running stream: the old run's end is not an end.
    private let switching = Atomic<Bool>(false)
    private let lastFailure = Mutex<MediaDevicesError?>(nil)
    /// The application's logger (`AudioDriverSide+Logging.swift`); `nil`: nothing is logged.
    let loggerBox = Mutex<Logger?>(nil)

    /// Opens a device's backend stream: `AudioDriverSide.open`, or a stand-in in tests.
    typealias Opener = @Sendable (AudioDevice, AudioFormat, AudioStreamOptions) throws(MediaDevicesError) -> any AudioBackendStream
    private let opener: Opener

    init(direction: AudioDevice.Direction, bus: AudioBus, opener: @escaping Opener = AudioDriverSide.open) {
        self.direction = direction
        self.bus = bus
        self.opener = opener
    }

    deinit {
        stop()
        state.withLock { $0.stream?.close() }
    }

    private var sideName: String { direction == .input ? "capture" : "render" }

    /// Opens `device` and configures it for `format`, which the application then reads or writes
    /// through the bus. A device that does not take `format` exactly runs at the nearest format
    /// it takes (``deviceFormat``) and the audio thread converts (rate, channels, sample format;
    /// see ``AudioConverter``), unless `options.convertsFormat` is false: then the bus carries
    /// the device's format, the rate adjusted to the nearest. PulseAudio takes any format (the
    /// server converts). Replaces an earlier initialization.
    package func initialize(device: AudioDevice, format: AudioFormat, options: AudioStreamOptions = AudioStreamOptions()) throws(MediaDevicesError) {
        do {
            try open(device: device, format: format, options: options)
        } catch {
            log(.error, "could not open: \(error)", device: device, ["code": "\(error.code)"])
            throw error
        }
        log(.info, "opened", device: device, ["format": "\(deviceFormat.map { "\($0)" } ?? "")", "bus": "\(format)",
                                             "periodFrames": "\(periodFrames ?? 0)", "bufferFrames": "\(bufferFrames ?? 0)"])
    }

    /// `initialize`, unlogged.
    private func open(device: AudioDevice, format: AudioFormat, options: AudioStreamOptions) throws(MediaDevicesError) {
        guard device.direction == direction else {
            throw MediaDevicesError(.invalidState, device: device.uniqueID, operation: "initialize \(sideName)",
                                    detail: "\(device.name) is an \(device.direction.rawValue); the \(sideName) side needs an \(direction.rawValue)",
                                    remedy: "Pick one of AudioDevice.discover()'s \(direction == .input ? "inputs" : "outputs")")
        }
        guard !isStarted else {
            throw MediaDevicesError(.invalidState, device: device.uniqueID, operation: "initialize \(sideName)",
                                    detail: "The \(sideName) side is running; stop it first")
        }
        guard format.channels > 0, format.sampleRate > 0 else {
            throw MediaDevicesError(.unsupportedFormat, device: device.uniqueID, operation: "initialize \(sideName)",
                                    detail: "A format needs at least one channel and a positive rate; asked for \(format)")
        }
        terminate()
        let stream = try opener(device, format, options)
        let port: AudioBusPort
        do throws(MediaDevicesError) {
            port = try makePort(for: stream, busFormat: options.convertsFormat ? format : stream.format, options: options)
        } catch {
            stream.close()
            throw error
        }
        if direction == .input { bus.setCaptureFormat(port.busFormat) } else { bus.setRenderFormat(port.busFormat) }
        state.withLock {
            $0.device = device
            $0.options = options
            $0.stream = stream
            $0.port = port
        }
    }

    /// The bus end for `stream`: a converter from or to `busFormat` when the device runs at
    /// another format.
    private func makePort(for stream: any AudioBackendStream, busFormat: AudioFormat, options: AudioStreamOptions) throws(MediaDevicesError) -> AudioBusPort {
        try AudioBusPort(bus: bus, direction: direction, deviceFormat: stream.format, busFormat: busFormat,
                         library: options.resampler, periodFrames: stream.periodFrames, counters: counters)
    }

    /// Opens the backend stream for `device`.
    @Sendable static func open(_ device: AudioDevice, format: AudioFormat, options: AudioStreamOptions) throws(MediaDevicesError) -> any AudioBackendStream {
        switch device.backend {
        case .alsa: try ALSAStream(device: device, format: format, options: options)
        case .pulse: try PulseStream(device: device, format: format, options: options)
        }
    }

    /// Whether a device is open and configured.
    package var isInitialized: Bool { state.withLock { $0.stream != nil } }
    /// Whether the audio thread is running (false again once it ended on its own; see ``endError``).
    package var isStarted: Bool { running.load(ordering: .acquiring) }
    /// The device this side opened.
    public var device: AudioDevice? { state.withLock { $0.device } }
    /// The format the application reads (capture) or writes (render) through the bus: the one
    /// ``initialize(device:format:options:)-71hnd`` asked for (nil before
    /// ``initialize(device:format:options:)-71hnd``). See ``deviceFormat`` for the device's.
    package var format: AudioFormat? { state.withLock { $0.port?.busFormat } }
    /// The format the device runs at: the bus's (``AudioDriver/captureFormat``,
    /// ``AudioDriver/renderFormat``) when the device takes it, else the nearest it takes, converted
    /// from or to the bus's on the audio thread (nil before the side is initialized).
    public var deviceFormat: AudioFormat? { state.withLock { $0.stream?.format } }
    /// Whether the audio thread converts between ``deviceFormat`` and ``format``.
    package var isConverting: Bool { state.withLock { $0.port?.converter != nil } }
    /// The period the device chose, in device frames (at ``deviceFormat``'s rate).
    public var periodFrames: Int? { state.withLock { $0.stream?.periodFrames } }
    /// The device buffer the device chose, in device frames.
    public var bufferFrames: Int? { state.withLock { $0.stream?.bufferFrames } }
    /// Why the last run ended on its own (``/MediaDevicesCore/MediaDevicesError/Code/disconnected``
    /// when the device or server went away); nil while running or after a stop
    /// (``AudioDriver/stopCapture()``, ``AudioDriver/stopRendering()``).
    public var endError: MediaDevicesError? { lastFailure.withLock { $0 } }

    /// Called on the audio thread once a run has ended, with the failure that ended it (nil for
    /// a stop). It may read this side (``device``, ``statistics``) while another thread starts it
    /// again; starting or switching the side (``AudioDriver/startCapture()``,
    /// ``AudioDriver/switchCaptureDevice(to:options:)-9125`` and their render forms) called from it
    /// throws ``/MediaDevicesCore/MediaDevicesError/Code/invalidState`` (start again from another
    /// thread or task). Takes effect at the next start.
    public var onStop: (@Sendable (MediaDevicesError?) -> Void)? {
        get { state.withLock { $0.onStop } }
        set { state.withLock { $0.onStop = newValue } }
    }

    /// Where the side goes when its device is lost mid-run (a USB microphone unplugged, a Pulse
    /// sink removed): instead of ending with
    /// ``/MediaDevicesCore/MediaDevicesError/Code/disconnected``, the audio thread opens this
    /// device for the bus's format (converting if it takes another) and runs on, and ``onFallback``
    /// says so. If it cannot be opened (or is the device that was lost), the run ends as it would
    /// have. Nil (the default): no fallback. Read when the loss happens; pick it with
    /// ``AudioDevice/discover(pulseTimeout:)``, e.g. the default input.
    public var fallbackDevice: AudioDevice? {
        get { state.withLock { $0.fallback } }
        set { state.withLock { $0.fallback = newValue } }
    }

    /// Called on the audio thread once the side fell back to ``fallbackDevice``, with what moved
    /// (``AudioDeviceSwitch/gap`` nil: it is told before the new device runs) and the error that lost the old
    /// device. ``onStop`` is not called for it. Takes effect at the next start.
    public var onFallback: (@Sendable (AudioDeviceSwitch, MediaDevicesError) -> Void)? {
        get { state.withLock { $0.onFallback } }
        set { state.withLock { $0.onFallback = newValue } }
    }

    /// Called after every period on the thread that moved it (see ``AudioPeriodObserver``); takes effect
    /// at the next start. On the capture side it may drain the bus itself (then no other
    /// thread may read it): capture with one thread and one wake-up per period, as `record` does.
    public var periodObserver: AudioPeriodObserver? {
        get { state.withLock { $0.observer } }
        set { state.withLock { $0.observer = newValue } }
    }

    /// Called on the thread that moves the periods as a backend's own work for them begins (true)
    /// and ends (false), where that thread also runs a library's dispatch between periods
    /// (PulseAudio's loop thread); not called for ALSA, whose audio thread does only our work.
    /// For tests that count the heap allocations of our work alone. Takes effect at the next `start()`.
    package var periodWorkObserver: AudioWorkObserver? {
        get { state.withLock { $0.workObserver } }
        set { state.withLock { $0.workObserver = newValue } }
    }

    /// The delay measured last from the device (`snd_pcm_delay`, Pulse stream latency):
    /// capture delay for the capture side, render delay for the render side; plus the
    /// converter's delay when the side converts, and on the capture side the voice
    /// processing's latency when it runs (``VoiceProcessor/latency``).
    package var estimatedDelay: Duration {
        guard let port = state.withLock({ $0.port }) else { return .zero }
        let voiceFrames = direction == .input ? bus.voice.session.map { Double($0.processor.latencyFrames) / Double($0.processor.format.sampleRate) } : nil
        return .seconds(port.delaySeconds + (voiceFrames ?? 0))
    }

    /// What the current or last run measured.
    public var statistics: AudioStatistics {
        let baseline = state.withLock { $0.shortfallBaseline }
        let shortfall = (direction == .input ? bus.droppedCaptureSamples : bus.missingRenderSamples) - baseline
        let burst = direction == .output ? max(0, (bufferFrames ?? 0) - (periodFrames ?? 0)) : 0
        return counters.snapshot(rate: deviceFormat?.sampleRate ?? 0, shortfall: shortfall, burst: burst)
    }

    /// Starts the audio thread. The bus direction is emptied first (do not read or write it
    /// during the call). Throws ``/MediaDevicesCore/MediaDevicesError/Code/invalidState`` when
    /// called from this side's own audio thread (its ``onStop`` or period observer): start it again
    /// from another thread or task.
    package func start() throws(MediaDevicesError) {
        do {
            try startRun()
        } catch {
            log(.error, "could not start: \(error)", ["code": "\(error.code)"])
            throw error
        }
        log(.info, "started")
    }

    /// `start`, unlogged.
    private func startRun() throws(MediaDevicesError) {
        try refuseOnAudioThread("start \(sideName)")
        // A run that ended on its own may still be telling `onStop`, which may read this side:
        // wait for its thread with no lock held, then start under the lock.
        while true {
            let ended = state.withLock { state -> CaptureRun? in
                running.load(ordering: .acquiring) ? nil : state.run
            }
            ended?.join()
            let started = try state.withLock { (state) throws(MediaDevicesError) -> Bool in
                guard !running.load(ordering: .acquiring) else { return true }
                guard state.run === ended else { return false }  // another start came first: look again
                try launch(&state, continuingBus: false)
                return true
            }
            if started { return }
        }
    }

    /// Whether the caller runs on `run`'s thread (the side's audio thread) or on the thread the
    /// backend moves this run's periods on (PulseAudio's loop thread, where the period observer runs).
    private func isOwnThread(_ run: CaptureRun?) -> Bool {
        (run?.isCurrent ?? false) || counters.isOnCallbackThread
    }

    /// Throws `.invalidState` on this side's own audio thread, where waiting for the thread
    /// (to stop it or to start another) would wait for itself.
    private func refuseOnAudioThread(_ operation: String) throws(MediaDevicesError) {
        guard isOwnThread(state.withLock { $0.run }) else { return }
        throw MediaDevicesError(.invalidState, device: device?.uniqueID, operation: operation,
                                detail: "Called from the \(sideName) side's own audio thread (its onStop, onFallback or period observer); call it from another thread or task")
    }

    /// Starts a run of `state.stream` on a new audio thread. `continuingBus` (a device switch)
    /// keeps what the bus holds and its shortfall count, so the application reads on as before.
    /// The previous run's thread has ended (`start` and `switchDevice` wait for it, unlocked).
    private func launch(_ state: inout State, continuingBus: Bool) throws(MediaDevicesError) {
        guard let stream = state.stream, let port = state.port else {
            throw MediaDevicesError(.invalidState, device: state.device?.uniqueID, operation: "start \(sideName)",
                                    detail: "Initialize the \(sideName) side before starting it")
        }
        try port.reset()
        counters.reset()
        lastFailure.withLock { $0 = nil }
        if !continuingBus {
            if direction == .input { bus.captureRing.discardAll() }
            state.shortfallBaseline = direction == .input ? bus.droppedCaptureSamples : bus.missingRenderSamples
        }
        running.store(true, ordering: .releasing)
        let counters = self.counters
        let handler = state.onStop
        let observer = state.observer
        counters.workObserver = state.workObserver  // the previous run's thread has ended
        do throws(MediaDevicesError) {
            let onFallback = state.onFallback
            state.run = try CaptureRun(name: direction == .input ? "audio-capture" : "audio-render", owner: self, loop: { [self] wake, shouldStop in
                var stream = stream, port = port
                while true {
                    let failure = stream.run(port: port, counters: counters, wake: wake, observer: observer, shouldStop: shouldStop)
                    if self.direction == .output { self.bus.renderRunEnded() }
                    guard let lost = failure, lost.code == .disconnected, !shouldStop(),
                          let next = self.fallBack(from: stream, busFormat: port.busFormat, after: lost, report: onFallback) else { return failure }
                    (stream, port) = next
                }
            }, cleanup: { _ in }, finish: { [self] failure in
                // A run that a device switch ends is not an end: the side runs on, on the new device.
                guard !self.switching.load(ordering: .acquiring) else { return }
                if let failure { self.lastFailure.withLock { $0 = failure } }
                self.running.store(false, ordering: .releasing)
                // A reader blocked in `waitForCaptureData` learns of the end at once.
                if self.direction == .input { self.bus.wakeCaptureWaiter() }
                self.logEnd(failure)
                handler?(failure)
            })
        } catch {
            running.store(false, ordering: .releasing)
            throw error
        }
    }

    /// Moves this side to `device` without the application noticing more than a short gap: the
    /// bus, its format, ``onStop`` and the period observer stay, and a running side goes on
    /// running (ALSA ↔ PulseAudio included). The new device is opened first, while the old one
    /// still runs, asked for the format the bus has, with `options` (default: those of the last
    /// ``initialize(device:format:options:)-71hnd``); a device that takes another format gets a
    /// converter of its own (see ``initialize(device:format:options:)-71hnd``). Then the old run
    /// stops, the new one starts, and the old device closes. Returns once the new device moved its
    /// first period (at most a second), with the gap.
    ///
    /// The old run's end is not reported to ``onStop`` (if it ended on its own while the new device
    /// was opening, ``onStop`` heard that, and the side starts again on the new device, as the
    /// caller asked of a running side). If the new device cannot be opened (or, with
    /// ``AudioStreamOptions/convertsFormat`` false, does not take the bus's exact format), this
    /// throws and the old device runs on untouched. If the new device opened but its run cannot
    /// start (no thread, no descriptor left), the old device is closed, the side stays initialized
    /// on the new one and stopped, ``onStop`` hears the error, and this throws it. Frames
    /// the render side had queued in the old device and not yet played are dropped with it.
    @discardableResult
    package func switchDevice(to device: AudioDevice, options: AudioStreamOptions? = nil) throws(MediaDevicesError) -> AudioDeviceSwitch {
        let operation = "switch \(sideName) device"
        guard device.direction == direction else {
            throw MediaDevicesError(.invalidState, device: device.uniqueID, operation: operation,
                                    detail: "\(device.name) is an \(device.direction.rawValue); the \(sideName) side needs an \(direction.rawValue)",
                                    remedy: "Pick one of AudioDevice.discover()'s \(direction == .input ? "inputs" : "outputs")")
        }
        try refuseOnAudioThread(operation)
        let (current, oldDevice, oldOptions, wasRunning) = state.withLock { ($0.port?.busFormat, $0.device, $0.options, running.load(ordering: .acquiring)) }
        guard let current else {
            throw MediaDevicesError(.invalidState, device: device.uniqueID, operation: operation,
                                    detail: "Initialize the \(sideName) side before switching its device")
        }
        let openStarted = MonotonicInstant.now
        let newOptions = options ?? oldOptions
        let stream = try opener(device, current, newOptions)
        let port: AudioBusPort
        do throws(MediaDevicesError) {
            guard newOptions.convertsFormat || stream.format == current else {
                throw MediaDevicesError(.unsupportedFormat, device: device.uniqueID, operation: operation,
                                        detail: "\(device.name) runs at \(stream.format), the bus at \(current), and convertsFormat is off; the \(sideName) side stays on \(oldDevice?.name ?? "its device")")
            }
            port = try makePort(for: stream, busFormat: current, options: newOptions)
        } catch {
            stream.close()
            throw error
        }
        let opened = MonotonicInstant.now
        switching.store(true, ordering: .releasing)
        defer { switching.store(false, ordering: .releasing) }
        stop()
        let lastOldPeriod = counters.lastPeriodNanoseconds.load(ordering: .relaxed)
        var relaunchFailure: MediaDevicesError?
        let (old, onStop) = state.withLock { state -> ((any AudioBackendStream)?, (@Sendable (MediaDevicesError?) -> Void)?) in
            let old = state.stream
            state.stream = stream
            state.port = port
            state.device = device
            if let options { state.options = options }
            if wasRunning {
                do { try launch(&state, continuingBus: true) } catch {
                    relaunchFailure = MediaDevicesError.converting(error, device: device.uniqueID, operation: operation)
                }
            }
            return (old, state.onStop)
        }
        let restarted = MonotonicInstant.now
        old?.close()
        if let relaunchFailure {
            // The old run ended for the switch and the new one could not start: the run is over.
            // The side says so, keeps the new device (initialized, stopped) and tells `onStop`,
            // outside the lock, as for any end.
            running.store(false, ordering: .releasing)
            lastFailure.withLock { $0 = relaunchFailure }
            if direction == .input { bus.wakeCaptureWaiter() }
            onStop?(relaunchFailure)
            throw relaunchFailure
        }
        var firstNewPeriod: UInt64?
        if wasRunning {
            for _ in 0..<200 where isStarted {
                if counters.periods.load(ordering: .acquiring) > 0 { firstNewPeriod = counters.firstPeriodNanoseconds.load(ordering: .relaxed); break }
                MonotonicClock.sleep(until: MonotonicClock.now() + 5_000_000)
            }
        }
        let switched = AudioDeviceSwitch(from: oldDevice, to: device, open: openStarted.duration(to: opened),
                                         pause: opened.duration(to: restarted),
                                         gap: firstNewPeriod.flatMap { lastOldPeriod > 0 && $0 > lastOldPeriod ? .nanoseconds(Int64($0 - lastOldPeriod)) : nil })
        log(.info, "switched device", device: device, ["from": "\(oldDevice?.name ?? "")", "pause": "\(switched.pause)"])
        return switched
    }

    /// On the audio thread, after `lost` ended the run of `stream`: opens `fallbackDevice` for
    /// the bus's format (converting if it takes another, as `initialize` does), puts it in
    /// `stream`'s place, closes `stream` and reports; nil (and nothing changed) when there is
    /// no usable fallback. Opening a device allocates: this is not a period.
    private func fallBack(from stream: any AudioBackendStream, busFormat: AudioFormat, after lost: MediaDevicesError,
                          report: (@Sendable (AudioDeviceSwitch, MediaDevicesError) -> Void)?) -> (any AudioBackendStream, AudioBusPort)? {
        let (fallback, from, options) = state.withLock { ($0.fallback, $0.device, $0.options) }
        guard let fallback, fallback != from else { return nil }
        let started = MonotonicInstant.now
        guard let next = try? opener(fallback, busFormat, options) else { return nil }
        guard options.convertsFormat || next.format == busFormat,
              let port = try? makePort(for: next, busFormat: busFormat, options: options) else {
            next.close()
            return nil
        }
        let opened = MonotonicInstant.now
        state.withLock {
            $0.stream = next
            $0.port = port
            $0.device = fallback
        }
        stream.close()
        report?(AudioDeviceSwitch(from: from, to: fallback, open: started.duration(to: opened), pause: .zero, gap: nil), lost)
        log(.warning, "fell back to \(fallback.name) after: \(lost)", device: fallback, ["from": "\(from?.name ?? "")"])
        return (next, port)
    }

    /// Stops the audio thread and waits for it (at most a period). The device stays open. From
    /// the side's own audio thread (its ``onStop``, ``onFallback`` or period observer) it asks the
    /// run to end and returns at once: the run ends when that callback returns.
    package func stop() {
        guard let run = state.withLock({ $0.run }) else { return }
        // A device switch restarts; its old run's end is not reported (see `launch`).
        let restarting = switching.load(ordering: .acquiring)
        if isOwnThread(run) {  // waiting here would wait for this very thread
            run.requestStop(restarting: restarting)
            return
        }
        run.stop(restarting: restarting)
        state.withLock { if $0.run === run { $0.run = nil } }
    }

    /// Stops and closes the device; initialize it again
    /// (``AudioDriver/initializeCapture(device:format:options:)-igqs``,
    /// ``AudioDriver/initializeRendering(device:format:options:)-5yhyg``) to reuse the side. From
    /// the side's own audio thread it only stops (as a stop does there): the run
    /// still uses the device until the callback returns, so call ``terminate()`` again from another
    /// thread to close it.
    public func terminate() {
        stop()
        if isOwnThread(state.withLock { $0.run }) { return }
        let stream = state.withLock { state -> (any AudioBackendStream)? in
            defer { state.stream = nil; state.port = nil }
            return state.stream
        }
        stream?.close()
    }
}

/// The audio-device contract of `OTAudioDevice` on Linux: a capture side and a render side, each
/// initialized, started and stopped on its own, exchanging samples with the application through
/// an ``AudioBus``, with delays measured from the device rather than assumed.
///
/// ```swift
/// let microphone = await AudioDevice.discover().inputs[0]
/// let driver = AudioDriver()
/// try driver.initializeCapture(device: microphone, format: AudioFormat(sampleRate: 48000, channels: 1))
/// try driver.startCapture()
/// // on any thread: driver.bus.readCaptureData(into: samples)
/// ```
public final class AudioDriver: Sendable {
    /// The bus both sides and the application share.
    public let bus: AudioBus
    /// Device → bus.
    public let capture: AudioDriverSide
    /// Bus → device.
    public let render: AudioDriverSide

    /// Creates a driver with its bus (`busCapacityBytes` per direction).
    public init(busCapacityBytes: Int = 1 << 20) {
        bus = AudioBus(capacityBytes: busCapacityBytes)
        capture = AudioDriverSide(direction: .input, bus: bus)
        render = AudioDriverSide(direction: .output, bus: bus)
    }

    /// The format captured samples have in the bus (the one asked for; the device's is
    /// `capture.deviceFormat`).
    public var captureFormat: AudioFormat? { capture.format }
    /// The format the application writes samples to play in (the one asked for; the device's is
    /// `render.deviceFormat`).
    public var renderFormat: AudioFormat? { render.format }

    /// Opens `device` and configures it for `format`, which the application then reads through
    /// the bus. A device that does not take `format` exactly runs at the nearest format it takes
    /// (``AudioDriverSide/deviceFormat``) and the audio thread converts (rate, channels, sample
    /// format; see ``AudioConverter``), unless `options.convertsFormat` is false: then the bus
    /// carries the device's format, the rate adjusted to the nearest. PulseAudio takes any format
    /// (the server converts). Replaces an earlier initialization.
    public func initializeCapture(device: AudioDevice, format: AudioFormat, options: AudioStreamOptions = AudioStreamOptions()) throws(MediaDevicesError) {
        try capture.initialize(device: device, format: format, options: options)
    }
    /// Whether the capture side is initialized.
    public var isCaptureInitialized: Bool { capture.isInitialized }
    /// Starts capturing.
    public func startCapture() throws(MediaDevicesError) { try capture.start() }
    /// Stops capturing.
    public func stopCapture() { capture.stop() }
    /// Whether capture runs.
    public var isCapturing: Bool { capture.isStarted }
    /// The capture delay measured last from the device (`snd_pcm_delay`, Pulse stream latency),
    /// plus the converter's delay when the side converts and the voice processing's latency when
    /// it runs (``VoiceProcessor/latency``).
    public var estimatedCaptureDelay: Duration { capture.estimatedDelay }

    /// Opens and configures the output, as ``initializeCapture(device:format:options:)-igqs`` does
    /// the input (the application writes `format` to the bus). Voice processing, if on, takes
    /// its echo reference at the new format.
    public func initializeRendering(device: AudioDevice, format: AudioFormat, options: AudioStreamOptions = AudioStreamOptions()) throws(MediaDevicesError) {
        try render.initialize(device: device, format: format, options: options)
        try renderFormatDidChange()
    }
    /// Whether the render side is initialized.
    public var isRenderingInitialized: Bool { render.isInitialized }
    /// Starts rendering.
    public func startRendering() throws(MediaDevicesError) { try render.start() }
    /// Stops rendering.
    public func stopRendering() { render.stop() }
    /// Whether rendering runs.
    public var isRendering: Bool { render.isStarted }
    /// The render delay measured last from the device, plus the converter's delay when the side
    /// converts (see ``estimatedCaptureDelay``).
    public var estimatedRenderDelay: Duration { render.estimatedDelay }

    /// Moves capture to `device` without the application noticing more than a short gap: the bus,
    /// its format, ``AudioDriverSide/onStop`` and the period observer stay, and a running side goes
    /// on running (ALSA ↔ PulseAudio included). The new device is opened first, while the old one
    /// still runs, asked for the format the bus has, with `options` (default: those of the last
    /// initialization); a device that takes another format gets a converter of its own. Then the
    /// old run stops, the new one starts, and the old device closes. Returns once the new device
    /// moved its first period (at most a second), with the gap.
    ///
    /// The old run's end is not reported to ``AudioDriverSide/onStop`` (if it ended on its own
    /// while the new device was opening, `onStop` heard that, and the side starts again on the
    /// new device). If the new device cannot be opened (or, with
    /// ``AudioStreamOptions/convertsFormat`` false, does not take the bus's exact format), this
    /// throws and the old device runs on untouched. If the new device opened but its run cannot
    /// start (no thread, no descriptor left), the old device is closed, the side stays initialized
    /// on the new one and stopped, `onStop` hears the error, and this throws it.
    @discardableResult
    public func switchCaptureDevice(to device: AudioDevice, options: AudioStreamOptions? = nil) throws(MediaDevicesError) -> AudioDeviceSwitch {
        try capture.switchDevice(to: device, options: options)
    }
    /// Moves rendering to another output while it runs, as
    /// ``switchCaptureDevice(to:options:)-9125`` moves capture. Frames queued in the old device and
    /// not yet played are dropped with it.
    @discardableResult
    public func switchRenderDevice(to device: AudioDevice, options: AudioStreamOptions? = nil) throws(MediaDevicesError) -> AudioDeviceSwitch {
        try render.switchDevice(to: device, options: options)
    }
}
