import MediaDevicesCore
import CPulse
import Glibc

/// A PulseAudio playback or record stream through the asynchronous API: a `pa_stream` on a
/// connection of its own (`PulseConnection`, a `pa_threaded_mainloop`), connected with
/// `PA_STREAM_ADJUST_LATENCY | PA_STREAM_INTERPOLATE_TIMING | PA_STREAM_AUTO_TIMING_UPDATE`, so
/// that the server sizes the device's own latency to the requested buffer (`PulseBufferPlan`).
///
/// During a run, data moves on the connection's loop thread, in libpulse's read and write
/// callbacks (record: `pa_stream_peek`/`pa_stream_drop`; playback: `pa_stream_begin_write`/
/// `pa_stream_write` into the server's own memory block), as `pacat` and `parec` move theirs. The
/// side's audio thread never blocks inside libpulse: it polls the connection's event descriptor
/// (which the state callbacks and a failing pass signal) beside its wake-up event. So `stop()` returns at
/// once, a server that goes away ends the run with `.disconnected` as soon as its socket closes,
/// and one that stops answering without disconnecting ends it with `.timeout` after
/// `stallTimeout`. The stream is corked while no run is going, so nothing piles up between
/// `initialize` and `start`.
// @unchecked Sendable: libpulse objects are touched only under the main loop's lock; the rest is the audio thread's.
final class PulseStream: AudioBackendStream, @unchecked Sendable {
    let name: String
    let direction: AudioDevice.Direction
    let format: AudioFormat
    let periodFrames: Int
    let bufferFrames: Int
    let fillsSilence: Bool
    /// Seconds the server may leave a running stream without data (record) or without asking
    /// for any (playback) before the run ends with `.timeout`: 8 buffers, at least 4 s. A live
    /// server may legitimately go quiet for up to 2 s: an idle null sink (or a timer-scheduled
    /// ALSA sink) renders its 2 s maximum latency ahead, and a stream that connects then waits
    /// until that block has played before the server asks it for data.
    let stallTimeout: Double
    /// The connection (nil once closed). Touched only by `init`, the audio thread and `close()`,
    /// which `AudioDriverSide` never runs at the same time.
    private var connection: PulseConnection?
    private var stream: OpaquePointer?

    /// What one pass over the stream did.
    private enum Step {
        /// Moved data; the server is alive.
        case moved
        /// Nothing to move until the server sends or asks for data.
        case waitingForServer
        /// Playback only: the server wants data and the application has none (no silence fill).
        case applicationIdle
        /// The stream or the connection failed.
        case failed(MediaDevicesError)
    }

    init(device: AudioDevice, format requested: AudioFormat, options: AudioStreamOptions) throws(MediaDevicesError) {
        name = "pulse:\(device.name)"
        direction = device.direction
        fillsSilence = options.fillsSilenceOnUnderrun
        let operation = device.direction == .input ? "pa_stream_connect_record" : "pa_stream_connect_playback"
        guard (1...32).contains(requested.channels), (1...384_000).contains(requested.sampleRate) else {
            throw MediaDevicesError(.unsupportedFormat, device: name, operation: operation,
                                    detail: "PulseAudio takes 1…32 channels at 1…384000 Hz; asked for \(requested)")
        }
        format = requested
        let plan = PulseBufferPlan(direction: device.direction, periodFrames: max(16, options.periodFrames),
                                   periods: options.periods, bytesPerFrame: requested.bytesPerFrame)
        let connection = try PulseConnection(device: name, timeout: options.serverTimeout)
        let spec = pa_sample_spec(format: requested.sampleFormat.pulse, rate: UInt32(requested.sampleRate), channels: UInt8(requested.channels))
        let stream = try Self.open(device: device, spec: spec, plan: plan, on: connection, timeout: options.serverTimeout, operation: operation)
        // What the server chose (it may round the request to its own granularity).
        let chosen = connection.withLock { pa_stream_get_buffer_attr(stream)?.pointee } ?? plan.attributes
        periodFrames = max(1, PulseBufferPlan.periodBytes(of: chosen, direction: device.direction) / requested.bytesPerFrame)
        bufferFrames = max(periodFrames, PulseBufferPlan.bufferBytes(of: chosen, direction: device.direction, periods: options.periods) / requested.bytesPerFrame)
        stallTimeout = max(4, 8 * Double(bufferFrames) / Double(requested.sampleRate))
        self.connection = connection
        self.stream = stream
    }

    deinit { close() }

    func close() {
        guard let connection else { return }
        if let stream { connection.withLock { Self.release(stream) } }
        stream = nil
        self.connection = nil  // its deinit disconnects the context and stops the main loop
    }

    /// Creates the stream on `connection`, connects it corked and waits (up to `timeout`)
    /// until it is ready; releases it on every failure.
    private static func open(device: AudioDevice, spec: pa_sample_spec, plan: PulseBufferPlan,
                             on connection: PulseConnection, timeout: Duration, operation: String) throws(MediaDevicesError) -> OpaquePointer {
        var spec = spec, attributes = plan.attributes
        let stream: OpaquePointer = try connection.withLock { () throws(MediaDevicesError) in
            guard let stream = pa_stream_new(connection.context, device.direction == .input ? "capture" : "render", &spec, nil) else {
                throw connection.failure(operation: "pa_stream_new")
            }
            let userdata = connection.eventsUserdata
            pa_stream_set_state_callback(stream, PulseConnection.signalEvents, userdata)
            pa_stream_set_read_callback(stream, signalingRequest, userdata)
            pa_stream_set_write_callback(stream, signalingRequest, userdata)
            let flags = pa_stream_flags_t(rawValue: PA_STREAM_ADJUST_LATENCY.rawValue | PA_STREAM_INTERPOLATE_TIMING.rawValue
                                          | PA_STREAM_AUTO_TIMING_UPDATE.rawValue | PA_STREAM_START_CORKED.rawValue)
            let target: String? = device.name.hasPrefix("@DEFAULT_") ? nil : device.name
            let result = device.direction == .input
                ? pa_stream_connect_record(stream, target, &attributes, flags)
                : pa_stream_connect_playback(stream, target, &attributes, flags, nil, nil)
            guard result >= 0 else {
                let error = connection.failure(operation: operation)
                release(stream)
                throw error
            }
            return stream
        }
        do throws(MediaDevicesError) {
            try connection.wait(timeout: timeout, operation: operation) { () throws(MediaDevicesError) in
                switch pa_stream_get_state(stream) {
                case PA_STREAM_READY: return true
                case PA_STREAM_FAILED, PA_STREAM_TERMINATED: throw connection.failure(operation: operation)
                default:
                    _ = try connection.contextIsReady(operation: operation)  // throws if the connection failed meanwhile
                    return false
                }
            }
        } catch {
            connection.withLock { release(stream) }
            throw error
        }
        return stream
    }

    /// Clears the callbacks, disconnects and unrefs `stream` (lock held).
    private static func release(_ stream: OpaquePointer) {
        pa_stream_set_state_callback(stream, nil, nil)
        pa_stream_set_read_callback(stream, nil, nil)
        pa_stream_set_write_callback(stream, nil, nil)
        let state = pa_stream_get_state(stream)
        if state == PA_STREAM_READY || state == PA_STREAM_CREATING { pa_stream_disconnect(stream) }
        pa_stream_unref(stream)
    }

    /// Uncorks for a run (record: dropping what the server kept from before) or corks after one
    /// (playback: dropping what was not played). Lock held; the operations are not waited for.
    private func setRunning(_ running: Bool, _ stream: OpaquePointer) {
        func detach(_ operation: OpaquePointer?) { if let operation { pa_operation_unref(operation) } }
        if running && direction == .input { detach(pa_stream_flush(stream, nil, nil)) }
        detach(pa_stream_cork(stream, running ? 0 : 1, nil, nil))
        if !running && direction == .output { detach(pa_stream_flush(stream, nil, nil)) }
    }

    /// What a run shares between the audio thread and libpulse's loop thread (touched only with
    /// the connection's lock held; nil while no run is going).
    private struct ActiveRun {
        let port: AudioBusPort
        let counters: AudioCounters
        let observer: AudioPeriodObserver?
        /// When the server last sent data (record) or took some (playback), or the application
        /// last had none to give: what the stall timeout counts from.
        var lastActivity: UInt64
        /// Why the run cannot go on, set by the loop thread for the audio thread to return.
        var failure: MediaDevicesError?
        /// The timer that moves data when the server will not ask: at the run's start and, while
        /// the application has nothing to play, every period.
        var retry: OpaquePointer?
    }
    private var active: ActiveRun?

    /// libpulse's read or write callback while a run is going: `userdata` is the stream, unretained
    /// (the callbacks are taken back under the lock before `run` returns).
    private static let serverRequest: @convention(c) (OpaquePointer?, Int, UnsafeMutableRawPointer?) -> Void = { _, _, userdata in
        guard let userdata else { return }
        Unmanaged<PulseStream>.fromOpaque(userdata).takeUnretainedValue().serve()
    }
    /// The run's retry timer, on the loop thread like `serverRequest`.
    private static let retryTimer: @convention(c) (UnsafeMutablePointer<pa_mainloop_api>?, OpaquePointer?, UnsafePointer<timeval>?, UnsafeMutableRawPointer?) -> Void = { _, _, _, userdata in
        guard let userdata else { return }
        Unmanaged<PulseStream>.fromOpaque(userdata).takeUnretainedValue().serve()
    }

    /// The run. Data moves on libpulse's loop thread, in the read or write callback of the request
    /// that asks for it, as `pacat` and `parec` move theirs: one thread woken per period, not the
    /// loop thread and then this one (that hand-off doubled our 10 ms round trip against pacat's on
    /// a busy machine). This thread only watches: for `stop()`, for the stream or connection failing,
    /// and for a server that has not asked for or sent anything for `stallTimeout`.
    func run(port: AudioBusPort, counters: AudioCounters, wake: WakeUpEvent, observer: AudioPeriodObserver?, shouldStop: () -> Bool) -> MediaDevicesError? {
        guard let connection, let stream else {
            return MediaDevicesError(.invalidState, device: name, operation: "start", detail: "The stream is closed; initialize it again")
        }
        let me = Unmanaged.passUnretained(self).toOpaque()
        connection.withLock {
            active = ActiveRun(port: port, counters: counters, observer: observer, lastActivity: MonotonicClock.now())
            if direction == .input { pa_stream_set_read_callback(stream, Self.serverRequest, me) } else { pa_stream_set_write_callback(stream, Self.serverRequest, me) }
            // The first pass runs on the loop thread too, at once: what the server asked for
            // before the run (a playback stream's first buffer) is not asked for again.
            active?.retry = pa_context_rttime_new(connection.context, pa_rtclock_now(), Self.retryTimer, me)
            setRunning(true, stream)
        }
        defer {
            connection.withLock {
                counters.callbackThread.store(0, ordering: .releasing)
                setRunning(false, stream)
                let events = connection.eventsUserdata
                if direction == .input { pa_stream_set_read_callback(stream, PulseStream.signalingRequest, events) } else { pa_stream_set_write_callback(stream, PulseStream.signalingRequest, events) }
                if let retry = active?.retry { connection.api.pointee.time_free(retry) }
                active = nil
            }
        }
        let descriptors = UnsafeMutablePointer<pollfd>.allocate(capacity: 2)
        defer { descriptors.deallocate() }
        let stallNanoseconds = UInt64(stallTimeout * 1e9)
        while !shouldStop() {
            connection.lock()
            connection.events.reset()  // any event from here on is news after this look
            let failure = active?.failure ?? self.failure(of: stream, connection: connection)
            let lastActivity = active?.lastActivity ?? MonotonicClock.now()
            connection.unlock()
            if let failure { return failure }
            let waited = MonotonicClock.now() &- lastActivity
            if waited >= stallNanoseconds && waited < UInt64.max / 2 {
                return PulseError.stalled(device: name, operation: direction == .input ? "pa_stream_peek" : "pa_stream_writable_size", seconds: stallTimeout)
            }
            let timeout = Int32((stallNanoseconds - min(waited, stallNanoseconds)) / 1_000_000 + 1)
            descriptors[0] = pollfd(fd: wake.descriptor, events: Int16(POLLIN), revents: 0)
            descriptors[1] = pollfd(fd: connection.events.descriptor, events: Int16(POLLIN), revents: 0)
            if poll(descriptors, 2, timeout) > 0 && descriptors[0].revents != 0 { break }
        }
        return nil
    }

    /// The read and write callbacks outside a run: they wake whoever waits on the connection.
    static let signalingRequest: @convention(c) (OpaquePointer?, Int, UnsafeMutableRawPointer?) -> Void = { stream, _, userdata in
        PulseConnection.signalEvents(stream, userdata)
    }

    /// One pass on the loop thread (lock held): moves what the server sent or asks for, reports the
    /// latency, and keeps the run's account (activity, failure, the retry timer).
    private func serve() {
        guard let run = active, let connection, let stream else { return }
        run.counters.markCallbackThread()
        let work = run.counters.workObserver
        work?(true)
        let step = direction == .input
            ? receive(stream, connection: connection, port: run.port, counters: run.counters, observer: run.observer)
            : send(stream, connection: connection, port: run.port, counters: run.counters, observer: run.observer)
        reportLatency(stream, counters: run.counters)
        work?(false)
        switch step {
        case .moved:
            active?.lastActivity = MonotonicClock.now()
        case .waitingForServer:
            break
        case .applicationIdle:
            // The server asked and the application had nothing: the server will not ask again for
            // that room, so look again in a period; idle time is not a stall.
            active?.lastActivity = MonotonicClock.now()
            if let retry = run.retry {
                pa_context_rttime_restart(connection.context, retry, pa_rtclock_now() + pa_usec_t(periodFrames) * 1_000_000 / pa_usec_t(format.sampleRate))
            }
        case .failed(let error):
            active?.failure = error
            connection.events.signal()
        }
    }

    /// Record: hands everything the server has delivered to the bus (lock held).
    private func receive(_ stream: OpaquePointer, connection: PulseConnection, port: AudioBusPort, counters: AudioCounters, observer: AudioPeriodObserver?) -> Step {
        if let failure = failure(of: stream, connection: connection) { return .failed(failure) }
        let frameBytes = format.bytesPerFrame
        var moved = false
        while true {
            var data: UnsafeRawPointer?
            var size = 0
            guard pa_stream_peek(stream, &data, &size) == 0 else { return .failed(connection.failure(operation: "pa_stream_peek")) }
            if size == 0 { break }
            if let data {  // nil: a hole in the server's buffer; dropped
                let start = counters.timesNextPeriod ? MonotonicClock.now() : nil
                port.writeCapture(data, bytes: size, time: nil, afterGap: false)
                let timed = counters.periodWorkEnds(start)
                counters.period(frames: size / frameBytes, now: timed?.now ?? MonotonicClock.now(), cost: timed?.cost)
                observer?(counters.periods.load(ordering: .relaxed))
            }
            pa_stream_drop(stream)
            moved = true
        }
        return moved ? .moved : .waitingForServer
    }

    /// Playback: fills, a period at a time, the room the server asked for (lock held).
    private func send(_ stream: OpaquePointer, connection: PulseConnection, port: AudioBusPort, counters: AudioCounters, observer: AudioPeriodObserver?) -> Step {
        if let failure = failure(of: stream, connection: connection) { return .failed(failure) }
        let frameBytes = format.bytesPerFrame, periodBytes = periodFrames * frameBytes
        var writable = pa_stream_writable_size(stream)
        guard writable >= 0 else { return .failed(connection.failure(operation: "pa_stream_writable_size")) }
        var moved = false
        while writable >= periodBytes {
            var target: UnsafeMutableRawPointer?
            var size = periodBytes
            guard pa_stream_begin_write(stream, &target, &size) == 0, let target else {
                return .failed(connection.failure(operation: "pa_stream_begin_write"))
            }
            let start = counters.timesNextPeriod ? MonotonicClock.now() : nil
            let chunk = min(size, periodBytes) / frameBytes * frameBytes
            let bytes = chunk == 0 ? 0 : port.renderPeriod(into: target, periodBytes: chunk, fillsSilence: fillsSilence, time: nil, afterGap: false)
            guard bytes > 0 else {
                pa_stream_cancel_write(stream)
                return moved ? .moved : .applicationIdle
            }
            let timed = counters.periodWorkEnds(start)
            guard pa_stream_write(stream, target, bytes, nil, 0, PA_SEEK_RELATIVE) == 0 else {
                return .failed(connection.failure(operation: "pa_stream_write"))
            }
            counters.period(frames: bytes / frameBytes, now: timed?.now ?? MonotonicClock.now(), cost: timed?.cost)
            observer?(counters.periods.load(ordering: .relaxed))
            writable -= bytes
            moved = true
        }
        return moved ? .moved : .waitingForServer
    }

    /// Why the stream cannot go on, if it cannot: the server went away or killed the stream (lock held).
    /// States compared by raw value: `!=` on an imported C enum instantiates its type metadata on
    /// first use, a heap allocation (see `ALSAStream`); this runs on the audio thread.
    private func failure(of stream: OpaquePointer, connection: PulseConnection) -> MediaDevicesError? {
        guard pa_stream_get_state(stream).rawValue != PA_STREAM_READY.rawValue
                || pa_context_get_state(connection.context).rawValue != PA_CONTEXT_READY.rawValue else { return nil }
        return connection.failure(operation: direction == .input ? "pa_stream (record)" : "pa_stream (playback)")
    }

    /// The stream's latency as the server and the interpolated clock give it
    /// (`pa_stream_get_latency`): for playback, how long a sample written now takes to be
    /// heard; for record, how long ago the oldest unread sample was captured (lock held).
    private func reportLatency(_ stream: OpaquePointer, counters: AudioCounters) {
        var microseconds: pa_usec_t = 0
        var negative: Int32 = 0
        guard pa_stream_get_latency(stream, &microseconds, &negative) == 0 else { return }  // no timing yet
        counters.delay(negative != 0 ? 0 : Int(microseconds * UInt64(format.sampleRate) / 1_000_000))
    }
}
