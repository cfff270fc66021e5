#if X11
import MediaDevicesCore
import CXCB
import Glibc

/// One connection to an X server through libxcb, with its first screen's root window. Owns the
/// connection: `deinit` disconnects (which also frees what the server held for it). Used by one
/// thread at a time.
final class X11Connection {
    /// The `xcb_connection_t`.
    let connection: OpaquePointer
    /// The display connected to, as given or from `DISPLAY` (`:0`).
    let display: String
    /// The root window of the connection's screen.
    let root: xcb_window_t
    /// The root window's size.
    let rootSize: Size
    /// Whether the root visual is 8-bit TrueColor in 32-bit little-endian pixels (BGRx in
    /// memory), the only layout the grabber lends as frames.
    let hasBGRxRoot: Bool

    /// Connects to `display`, or to `DISPLAY` when `nil`. Throws `.notFound` when there is no
    /// display to connect to or the server does not answer.
    init(display: String? = nil) throws(MediaDevicesError) {
        guard let name = display ?? getenv("DISPLAY").map({ String(cString: $0) }), !name.isEmpty else {
            throw MediaDevicesError(.notFound, device: nil, operation: "xcb_connect",
                                    detail: "No X server: DISPLAY is not set; set DISPLAY (e.g. DISPLAY=:0) or start X (or Xvfb)")
        }
        var screenNumber: Int32 = 0
        guard let connection = xcb_connect(name, &screenNumber) else {
            throw MediaDevicesError(.io, device: name, operation: "xcb_connect", detail: "libxcb could not allocate a connection")
        }
        let failure = xcb_connection_has_error(connection)
        if failure != 0 {
            xcb_disconnect(connection)
            throw MediaDevicesError(.notFound, device: name, operation: "xcb_connect",
                                    detail: "No X server answers on display \(name) (xcb error \(failure)); start X (or Xvfb) there or set DISPLAY to a running one")
        }
        self.connection = connection
        self.display = name
        let setup = xcb_get_setup(connection)!
        var roots = xcb_setup_roots_iterator(setup)
        for _ in 0..<max(Int(screenNumber), 0) where roots.rem > 1 { xcb_screen_next(&roots) }
        let screen = roots.data!.pointee
        root = screen.root
        rootSize = Size(width: Int(screen.width_in_pixels), height: Int(screen.height_in_pixels))
        hasBGRxRoot = X11Connection.isBGRx(setup: setup, screen: roots.data!)
    }

    deinit { xcb_disconnect(connection) }

    /// Whether `screen`'s root depth is stored as 32-bit pixels, least significant byte first,
    /// with an 8-bit TrueColor visual of masks 0xFF0000, 0xFF00, 0xFF.
    private static func isBGRx(setup: UnsafePointer<xcb_setup_t>, screen: UnsafeMutablePointer<xcb_screen_t>) -> Bool {
        let depth = screen.pointee.root_depth
        guard setup.pointee.image_byte_order == UInt8(XCB_IMAGE_ORDER_LSB_FIRST.rawValue) else { return false }
        var formats = xcb_setup_pixmap_formats_iterator(setup)
        var bitsPerPixel: UInt8 = 0
        while formats.rem > 0 {
            if formats.data.pointee.depth == depth { bitsPerPixel = formats.data.pointee.bits_per_pixel }
            xcb_format_next(&formats)
        }
        guard bitsPerPixel == 32 else { return false }
        var depths = xcb_screen_allowed_depths_iterator(screen)
        while depths.rem > 0 {
            var visuals = xcb_depth_visuals_iterator(depths.data)
            while visuals.rem > 0 {
                let visual = visuals.data.pointee
                if visual.visual_id == screen.pointee.root_visual {
                    return visual._class == UInt8(XCB_VISUAL_CLASS_TRUE_COLOR.rawValue)
                        && visual.red_mask == 0xFF_0000 && visual.green_mask == 0xFF00 && visual.blue_mask == 0xFF
                }
                xcb_visualtype_next(&visuals)
            }
            xcb_depth_next(&depths)
        }
        return false
    }

    /// Whether the server has the extension `id` (a `cxcb_*_extension()` descriptor), and the
    /// number of its first event.
    func extensionFirstEvent(_ id: OpaquePointer) -> UInt8? {
        guard let data = xcb_get_extension_data(connection, id), data.pointee.present != 0 else { return nil }
        return data.pointee.first_event
    }

    /// Sends a request with `request` and waits for its reply, which `body` reads (the reply is
    /// freed after). Throws `.io` naming `operation` for an X error, `.disconnected` when the
    /// server went away.
    func withReply<Reply, Result>(_ operation: String,
                                  _ request: (OpaquePointer, inout UnsafeMutablePointer<xcb_generic_error_t>?) -> UnsafeMutablePointer<Reply>?,
                                  _ body: (UnsafeMutablePointer<Reply>) throws(MediaDevicesError) -> Result) throws(MediaDevicesError) -> Result {
        var error: UnsafeMutablePointer<xcb_generic_error_t>?
        guard let reply = request(connection, &error) else { throw failure(operation, error) }
        defer { free(reply) }
        return try body(reply)
    }

    /// Waits for the outcome of a checked request without reply; throws as `withReply` does.
    func check(_ operation: String, _ cookie: xcb_void_cookie_t) throws(MediaDevicesError) {
        if let error = xcb_request_check(connection, cookie) { throw failure(operation, error) }
        if xcb_connection_has_error(connection) != 0 { throw failure(operation, nil) }
    }

    /// The error for a failed request: the X error (freed here) or the lost connection.
    func failure(_ operation: String, _ error: UnsafeMutablePointer<xcb_generic_error_t>?) -> MediaDevicesError {
        guard let error else {
            return MediaDevicesError(.disconnected, device: display, operation: operation,
                                     detail: "The X server on \(display) closed the connection (xcb error \(xcb_connection_has_error(connection))); start it again and reopen the screen")
        }
        defer { free(error) }
        let (code, major, minor) = (error.pointee.error_code, error.pointee.major_code, error.pointee.minor_code)
        return MediaDevicesError(.io, device: display, operation: operation,
                                 detail: "The X server on \(display) answered X error \(code) (request \(major).\(minor))")
    }

    /// Whether the connection is a Unix-domain socket, the only transport that passes file
    /// descriptors (MIT-SHM's `ShmAttachFd`); a TCP display is not.
    var isUnixSocket: Bool {
        var address = sockaddr()
        var length = socklen_t(MemoryLayout<sockaddr>.size)
        guard getsockname(xcb_get_file_descriptor(connection), &address, &length) == 0 else { return false }
        return Int32(address.sa_family) == AF_UNIX
    }

    /// Sends what is buffered.
    func flush() { _ = xcb_flush(connection) }

    /// Hands the type (`response_type` without the "sent" bit) of every event already received
    /// to `body`, without waiting and without allocating when there is none. An error for a
    /// request sent without waiting for it throws, naming `operation`; so does a lost connection.
    func drainEvents(operation: String, _ body: (UInt8) -> Void) throws(MediaDevicesError) {
        try drain(operation: operation, read: xcb_poll_for_event, body)
    }

    /// Like `drainEvents`, but only the events libxcb has already read (along with replies), not
    /// the socket: what sleeping on `descriptor` would not be woken for.
    func drainQueuedEvents(operation: String, _ body: (UInt8) -> Void) throws(MediaDevicesError) {
        try drain(operation: operation, read: xcb_poll_for_queued_event, body)
    }

    /// The connection's socket: readable when the server has sent events (or replies).
    var descriptor: Int32 { xcb_get_file_descriptor(connection) }

    private func drain(operation: String, read: (OpaquePointer?) -> UnsafeMutablePointer<xcb_generic_event_t>?,
                       _ body: (UInt8) -> Void) throws(MediaDevicesError) {
        while let event = read(connection) {
            let type = event.pointee.response_type & 0x7F
            // Type 0 is an error, and the event is the error (freed by `failure`).
            if type == 0 { throw failure(operation, UnsafeMutableRawPointer(event).assumingMemoryBound(to: xcb_generic_error_t.self)) }
            free(event)
            body(type)
        }
        if xcb_connection_has_error(connection) != 0 { throw failure("xcb_poll_for_event", nil) }
    }
}

extension X11Connection {
    /// Announces the XFIXES version the client speaks (the server requires it before any other
    /// XFIXES request). Throws `.unsupportedFormat` when the server has no XFIXES 2 or later.
    func requireXFixes() throws(MediaDevicesError) {
        let major = extensionFirstEvent(cxcb_xfixes_extension()) == nil ? 0
            : try withReply("XFixesQueryVersion", { xcb_xfixes_query_version_reply($0, xcb_xfixes_query_version($0, 5, 0), &$1) }) {
                Int($0.pointee.major_version)
            }
        guard major >= 2 else {
            throw MediaDevicesError(.unsupportedFormat, device: display, operation: "XFixesQueryVersion",
                                    detail: "The X server on \(display) has no XFIXES 2 (regions, cursor images); use an X.Org server or Xvfb of this century")
        }
    }
}
#endif
