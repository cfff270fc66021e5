import MediaDevicesCore
import CPulse
import Glibc

/// One connection to a PulseAudio server, driven by its own `pa_threaded_mainloop` thread.
///
/// Nobody waits with `pa_threaded_mainloop_wait` (which has no timeout): every context and
/// stream callback signals `events`, an eventfd that a waiting thread polls with a deadline and
/// beside its own wake-up, so a server that stops answering can never hold a caller. Owns the
/// main loop and the context; `deinit` disconnects and frees them, on every path.
// @unchecked Sendable: the context is touched only under the threaded main loop's lock (`withLock`).
final class PulseConnection: @unchecked Sendable {
    /// The label errors name (`pulse:<device>`).
    let device: String
    /// Signalled from the main loop thread on every context or stream event.
    let events: WakeUpEvent
    private let loop: OpaquePointer
    /// The context; use only with the lock held (`withLock`).
    let context: OpaquePointer

    /// The callback every context and stream event goes through: wakes whoever polls `events`.
    /// `userdata` is `events`, unretained (the connection outlives every callback: `deinit`
    /// clears them under the lock before it lets go).
    static let signalEvents: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> Void = { _, userdata in
        guard let userdata else { return }
        Unmanaged<WakeUpEvent>.fromOpaque(userdata).takeUnretainedValue().signal()
    }

    /// `events` as callback user data.
    var eventsUserdata: UnsafeMutableRawPointer { Unmanaged.passUnretained(events).toOpaque() }

    /// Starts the main loop and connects (no autospawn), waiting at most `timeout` for
    /// the server to accept the client.
    init(device: String, timeout: Duration) throws(MediaDevicesError) {
        self.device = device
        events = try WakeUpEvent()
        guard let loop = pa_threaded_mainloop_new() else {
            throw MediaDevicesError(.io, device: device, operation: "pa_threaded_mainloop_new", detail: "Out of memory")
        }
        guard let context = pa_context_new(pa_threaded_mainloop_get_api(loop), "mediadevices") else {
            pa_threaded_mainloop_free(loop)
            throw MediaDevicesError(.io, device: device, operation: "pa_context_new", detail: "Out of memory")
        }
        self.loop = loop
        self.context = context
        // From here on `deinit` releases the loop and the context whatever fails.
        pa_context_set_state_callback(context, Self.signalEvents, eventsUserdata)
        guard pa_threaded_mainloop_start(loop) >= 0 else {
            throw MediaDevicesError(.io, device: device, operation: "pa_threaded_mainloop_start", detail: "Could not start the PulseAudio main loop thread")
        }
        try withLock { () throws(MediaDevicesError) in
            guard pa_context_connect(context, nil, PA_CONTEXT_NOAUTOSPAWN, nil) >= 0 else {
                throw PulseError.make(pa_context_errno(context), device: device, operation: "pa_context_connect")
            }
        }
        try wait(timeout: timeout, operation: "pa_context_connect") { () throws(MediaDevicesError) in try contextIsReady(operation: "pa_context_connect") }
    }

    deinit {
        pa_threaded_mainloop_lock(loop)
        pa_context_set_state_callback(context, nil, nil)
        pa_context_disconnect(context)
        pa_context_unref(context)
        pa_threaded_mainloop_unlock(loop)
        pa_threaded_mainloop_stop(loop)
        pa_threaded_mainloop_free(loop)
    }

    /// The main loop's API (for timers; use with the lock held).
    var api: UnsafeMutablePointer<pa_mainloop_api> { pa_threaded_mainloop_get_api(loop) }

    func lock() { pa_threaded_mainloop_lock(loop) }
    func unlock() { pa_threaded_mainloop_unlock(loop) }

    /// Runs `body` with the main loop's lock held (libpulse objects are only touched so).
    func withLock<T, Failure: Error>(_ body: () throws(Failure) -> T) throws(Failure) -> T {
        pa_threaded_mainloop_lock(loop)
        defer { pa_threaded_mainloop_unlock(loop) }
        return try body()
    }

    /// Whether the context is ready; throws why when it failed or ended. Call with the lock held.
    func contextIsReady(operation: String) throws(MediaDevicesError) -> Bool {
        switch pa_context_get_state(context) {
        case PA_CONTEXT_READY: return true
        case PA_CONTEXT_FAILED, PA_CONTEXT_TERMINATED: throw failure(operation: operation)
        default: return false
        }
    }

    /// The error the context reports (`pa_context_errno`), as a `.disconnected` when the
    /// context has failed without saying why. Call with the lock held.
    func failure(operation: String) -> MediaDevicesError {
        let code = pa_context_errno(context)
        if code == 0 {
            return PulseError.make(Int32(PA_ERR_CONNECTIONTERMINATED.rawValue), device: device, operation: operation)
        }
        return PulseError.make(code, device: device, operation: operation)
    }

    /// Waits until `isDone` (run with the lock held) says so, polling `events` outside the lock;
    /// throws what `isDone` throws, `.timeout` after `timeout`, `.cancelled` when the thread's
    /// `WaitCancellation` is set (looked at every `WaitCancellation.slice`).
    func wait(timeout: Duration, operation: String, until isDone: () throws(MediaDevicesError) -> Bool) throws(MediaDevicesError) {
        let deadline = MonotonicClock.now() + UInt64(max(timeout.nanosecondCount, 0))
        while try !withLock(isDone) {
            try WaitCancellation.check(device: device, operation: operation, waitingFor: "the PulseAudio server")
            let now = MonotonicClock.now()
            guard now < deadline else {
                throw MediaDevicesError(.timeout, device: device, operation: operation,
                                        detail: "The PulseAudio server did not answer within \(timeout); check it (`pactl info`), or give a slow server longer (`AudioStreamOptions.serverTimeout`)")
            }
            var descriptor = pollfd(fd: events.descriptor, events: Int16(POLLIN), revents: 0)
            _ = poll(&descriptor, 1, Int32(min(UInt64(WaitCancellation.slice.millisecondCount), (deadline - now) / 1_000_000 + 1)))
            events.reset()
        }
    }
}
