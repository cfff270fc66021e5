import CXCB
import Glibc

/// The test's own X client (plain xcb): draws known pictures into the root window, moves the
/// pointer, reads the cursor image, so that what the library grabs can be checked against it.
final class X11TestClient {
    let connection: OpaquePointer
    let root: xcb_window_t
    private let gc: UInt32

    /// Connects to `display`.
    init(display: String) throws {
        guard let connection = xcb_connect(display, nil), xcb_connection_has_error(connection) == 0 else {
            throw XvfbError("the test client cannot connect to \(display)")
        }
        self.connection = connection
        root = xcb_setup_roots_iterator(xcb_get_setup(connection)).data.pointee.root
        gc = xcb_generate_id(connection)
        _ = xcb_create_gc(connection, gc, root, 0, nil)
    }

    deinit { xcb_disconnect(connection) }

    /// The reference pattern: a different colour almost everywhere, 0x00RRGGBB.
    static func pattern(x: Int, y: Int) -> UInt32 {
        let r = UInt32((x * 7 ^ y * 3) & 0xFF), g = UInt32((x + 2 * y) & 0xFF), b = UInt32((x * y + 91) & 0xFF)
        return r << 16 | g << 8 | b
    }

    /// Draws `pixel(x, y)` over `area` of the root window (PutImage, in strips) and waits until
    /// the server has done it.
    func draw(_ area: (x: Int, y: Int, width: Int, height: Int), _ pixel: (Int, Int) -> UInt32) {
        let rowsPerStrip = max(1, 60_000 / (area.width * 4))
        var top = 0
        while top < area.height {
            let rows = min(rowsPerStrip, area.height - top)
            var strip = [UInt32](repeating: 0, count: area.width * rows)
            for row in 0..<rows {
                for column in 0..<area.width { strip[row * area.width + column] = pixel(area.x + column, area.y + top + row) }
            }
            strip.withUnsafeBytes { bytes in
                _ = xcb_put_image(connection, UInt8(XCB_IMAGE_FORMAT_Z_PIXMAP.rawValue), root, gc, UInt16(area.width), UInt16(rows),
                                  Int16(area.x), Int16(area.y + top), 0, 24, UInt32(bytes.count), bytes.baseAddress!.assumingMemoryBound(to: UInt8.self))
            }
            top += rows
        }
        sync()
    }

    /// Moves the pointer to (`x`, `y`) of the root window and waits until the server has.
    func warpPointer(x: Int, y: Int) {
        _ = xcb_warp_pointer(connection, 0, root, 0, 0, 0, 0, Int16(x), Int16(y))
        sync()
    }

    /// The cursor as XFIXES gives it: top-left corner on the root window, size, premultiplied ARGB pixels.
    func cursorImage() throws -> (x: Int, y: Int, width: Int, height: Int, pixels: [UInt32]) {
        _ = xcb_xfixes_query_version_reply(connection, xcb_xfixes_query_version(connection, 5, 0), nil).map { free($0) }
        guard let reply = xcb_xfixes_get_cursor_image_reply(connection, xcb_xfixes_get_cursor_image(connection), nil) else {
            throw XvfbError("XFixesGetCursorImage failed")
        }
        defer { free(reply) }
        let c = reply.pointee
        let pixels = Array(UnsafeBufferPointer(start: xcb_xfixes_get_cursor_image_cursor_image(reply), count: Int(c.width) * Int(c.height)))
        return (Int(c.x) - Int(c.xhot), Int(c.y) - Int(c.yhot), Int(c.width), Int(c.height), pixels)
    }

    /// A round trip: everything sent before is done when it returns.
    func sync() {
        free(xcb_get_input_focus_reply(connection, xcb_get_input_focus(connection), nil))
    }
}
