#if PipeWire
import MediaDevicesCore
import CPipeWire
import Glibc

/// A PipeWire video stream from one node (`cpw_capture` of the CPipeWire shim): a portal's
/// screen cast (raw BGRx/RGBx/BGRA/RGBA in memfd or plain memory, over the portal's connection)
/// or a camera node (the format chosen from its EnumFormat entries; memfd, plain memory or
/// DMA-BUF), with its own loop that the caller iterates (no thread; a camera's stream is also
/// processed on the caller's thread: see `wait`). Holds the newest buffer
/// until a newer one arrives. Owns the capture: `close()` (or `deinit`) gives the buffer back
/// and disconnects. Used by one thread at a time (handed to a capture thread whole: hence
/// `@unchecked Sendable`).
final class PipeWireCapture: @unchecked Sendable {
    private var capture: OpaquePointer?
    private let device: String
    private let isCamera: Bool

    /// Connects over `fd` (taken) to the screen-cast node `nodeID`. Throws `.io` when PipeWire refuses.
    init(fd: Int32, nodeID: UInt32, device: String) throws(MediaDevicesError) {
        self.device = device
        isCamera = false
        var message = [CChar](repeating: 0, count: 256)
        let capture = cpw_capture_open(fd, nodeID, &message, message.count)
        self.capture = try Self.opened(capture, message, device: device)
    }

    /// Connects to the default PipeWire remote (or over `fd`, taken) and asks camera node
    /// `nodeID` for `request`'s format. Throws `.io` when PipeWire refuses.
    init(cameraNode nodeID: UInt32, request: cpw_stream_request, fd: Int32 = -1, device: String) throws(MediaDevicesError) {
        self.device = device
        isCamera = true
        var message = [CChar](repeating: 0, count: 256)
        var request = request
        let capture = cpw_capture_open_camera(fd, nodeID, &request, &message, message.count)
        self.capture = try Self.opened(capture, message, device: device)
    }

    private static func opened(_ capture: OpaquePointer?, _ message: [CChar], device: String) throws(MediaDevicesError) -> OpaquePointer {
        guard let capture else {
            throw MediaDevicesError(.io, device: device, operation: "pw_stream_connect",
                                    detail: "\(String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)); is PipeWire running in the session?")
        }
        return capture
    }

    deinit { close() }

    /// Gives the held buffer back and disconnects; later calls do nothing.
    func close() {
        if let capture { cpw_capture_close(capture) }
        capture = nil
    }

    /// A screen cast's: readable when a buffer arrived since `newest()` last looked (-1 once
    /// closed). A camera's thread sleeps in `wait` instead.
    var descriptor: Int32 { capture.map { cpw_capture_fd($0) } ?? -1 }

    /// What a camera's `wait` saw.
    struct Readiness: OptionSet {
        let rawValue: UInt32
        /// A buffer arrived: `newest()` takes it.
        static let buffer = Readiness(rawValue: CPW_READY_BUFFER.rawValue)
        /// The stream's loop has something (state changes, the node going away): `iterate`.
        static let loop = Readiness(rawValue: CPW_READY_LOOP.rawValue)
        /// The descriptor given to `watch` is readable.
        static let watched = Readiness(rawValue: CPW_READY_WATCHED.rawValue)
    }

    /// A camera's `wait` also wakes when `descriptor` becomes readable (one descriptor a capture).
    func watch(_ descriptor: Int32) {
        if let capture { _ = cpw_capture_watch(capture, descriptor) }
    }

    /// A camera's: sleeps at most `timeoutMilliseconds` until a graph cycle of the stream is due
    /// (run here, on the calling thread: the only thread that wakes per frame), its loop has
    /// something or the watched descriptor is readable. Empty when the time ran out.
    func wait(timeoutMilliseconds: Int32) -> Readiness {
        Readiness(rawValue: capture.map { cpw_capture_wait($0, timeoutMilliseconds) } ?? 0)
    }

    /// Dispatches what PipeWire sent, waiting at most `timeoutMilliseconds` for it, and throws
    /// `.disconnected` when the stream has ended (the node went away, the connection broke).
    func iterate(timeoutMilliseconds: Int32) throws(MediaDevicesError) {
        guard let capture else { throw ended("closed") }
        _ = cpw_capture_iterate(capture, timeoutMilliseconds)
        try throwIfEnded()
    }

    /// Throws `.disconnected` when the stream has ended (the node went away, the connection broke).
    func throwIfEnded() throws(MediaDevicesError) {
        guard let capture else { throw ended("closed") }
        if cpw_capture_state(capture) == CPW_STATE_ENDED { throw ended(String(cString: cpw_capture_error(capture))) }
    }

    /// The newest picture and whether it arrived since the last call (`data` is `nil` while
    /// there has been none).
    func newest() -> (frame: cpw_frame, isNew: Bool) {
        var frame = cpw_frame()
        guard let capture else { return (frame, false) }
        let isNew = cpw_capture_newest(capture, &frame) == 1
        return (frame, isNew)
    }

    /// Lends the held buffer out of the stream (a sequence leased its frame): it stays out
    /// until `returnBuffer` (see `PipeWireBufferLeases`). Returns its slot, or -1.
    @discardableResult
    func lend() -> Int32 { capture.map { cpw_capture_lend($0) } ?? -1 }

    /// Gives lent buffer `slot` back to the stream, or frees its mapping when the stream let it
    /// go meanwhile (see `cpw_capture_return`).
    func returnBuffer(_ slot: Int) {
        if let capture { _ = cpw_capture_return(capture, Int32(slot)) }
    }

    /// How many buffers the producer has (neither held nor lent).
    var buffersWithProducer: Int { capture.map { Int(cpw_capture_with_producer($0)) } ?? 0 }

    /// How many buffers the stream negotiated (held, lent or with the producer).
    var bufferCount: Int { capture.map { Int(cpw_capture_buffer_count($0)) } ?? 0 }

    /// What the stream had negotiated when `renegotiation()` last looked.
    private var noted = cpw_negotiations()

    /// The stream's negotiation counts when they changed since the last call after its first
    /// format and buffer set (which start every run): the producer or the graph renegotiated,
    /// and the stream's buffers were replaced. `nil` otherwise. Three integers read: call it
    /// after each iteration of the capture's loop, where the stream handles those events.
    func renegotiation() -> cpw_negotiations? {
        guard let capture else { return nil }
        let now = cpw_capture_negotiations(capture)
        defer { noted = now }
        let changed = now.formats > max(noted.formats, 1) || (now.buffers_removed > noted.buffers_removed && now.formats > 0)
        return changed ? now : nil
    }

    /// Buffers given back unread (a newer one followed within one grab, or they held no picture).
    var skipped: UInt64 { capture.map { cpw_capture_skipped($0) } ?? 0 }

    /// Waits until a picture has arrived, for at most `timeout`. Throws `.timeout` without one,
    /// `.disconnected` when the stream ends first.
    func waitForPicture(timeout: Duration) throws(MediaDevicesError) {
        let deadline = MonotonicClock.now() &+ UInt64(max(timeout.nanosecondCount, 0))
        while true {
            if newest().frame.data != nil { return }
            try WaitCancellation.check(device: device, operation: "pw_stream_dequeue_buffer", waitingFor: "the stream's first picture")
            let now = MonotonicClock.now()
            if now >= deadline {
                throw MediaDevicesError(.timeout, device: device, operation: "pw_stream_dequeue_buffer", errno: ETIMEDOUT,
                                        detail: "No picture from the screen-cast stream within \(timeout) (stream \(stateName), \(skipped) buffers without a picture); the compositor may not be drawing (a locked or powered-off output)")
            }
            try iterate(timeoutMilliseconds: Int32(min((deadline - now) / 1_000_000 + 1, 100)))
        }
    }

    private var stateName: String {
        guard let capture else { return "closed" }
        return switch cpw_capture_state(capture) {
        case CPW_STATE_CONNECTING: "connecting"
        case CPW_STATE_PAUSED: "paused"
        case CPW_STATE_STREAMING: "streaming"
        default: "ended"
        }
    }

    private func ended(_ why: String) -> MediaDevicesError {
        MediaDevicesError(.disconnected, device: device, operation: "pw_stream",
                          detail: isCamera
                              ? "The PipeWire camera stream ended (\(why)): the camera was unplugged or removed, or PipeWire quit; pick another camera or wait for it to come back"
                              : "The screen-cast stream ended (\(why)): the shared screen or window went away, sharing was stopped, or PipeWire quit; start a new capture")
    }
}
#endif
