#if X11
import MediaDevicesCore
import CXCB
import Glibc

/// The X server's cursor (XFIXES `GetCursorImage`: position, hot spot, premultiplied ARGB
/// image, serial), fetched once per grab, so that it can be blended into frames and a moved or
/// changed cursor counts as a change of the screen.
final class X11Cursor {
    private let x: X11Connection
    private var image: UnsafeMutablePointer<xcb_xfixes_get_cursor_image_reply_t>?
    private var placed: (x: Int, y: Int, serial: UInt32)?

    /// Prepares to read `x`'s cursor. Throws `.unsupportedFormat` without XFIXES.
    init(_ x: X11Connection) throws(MediaDevicesError) {
        try x.requireXFixes()
        self.x = x
    }

    deinit { free(image) }

    /// Fetches the cursor as it is now; returns whether its place or image changed since the
    /// last fetch.
    func refresh() throws(MediaDevicesError) -> Bool {
        var error: UnsafeMutablePointer<xcb_generic_error_t>?
        guard let next = xcb_xfixes_get_cursor_image_reply(x.connection, xcb_xfixes_get_cursor_image(x.connection), &error) else {
            throw x.failure("XFixesGetCursorImage", error)
        }
        free(image)
        image = next
        let cursor = next.pointee
        let now = (x: Int(cursor.x) - Int(cursor.xhot), y: Int(cursor.y) - Int(cursor.yhot), serial: cursor.cursor_serial)
        defer { placed = now }
        guard let placed else { return true }
        return placed != now
    }

    /// Blends the cursor last fetched over a picture of `area` (root coordinates) at `picture`,
    /// rows `bytesPerRow` apart; nothing when the cursor lies outside `area`.
    func blend(area: Rect, onto picture: UnsafeMutableRawPointer, bytesPerRow: Int) {
        guard let image, let placed else { return }
        let (width, height) = (Int(image.pointee.width), Int(image.pointee.height))
        let (left, top) = (placed.x - area.x, placed.y - area.y)
        guard let visible = CursorOverlay.visiblePart(x: left, y: top, width: width, height: height,
                                                      pictureWidth: area.width, pictureHeight: area.height),
              let pixels = xcb_xfixes_get_cursor_image_cursor_image(image) else { return }
        CursorOverlay.blend(cursor: UnsafeRawPointer(pixels), cursorBytesPerRow: width * 4, x: left, y: top,
                            visible: visible, onto: picture, bytesPerRow: bytesPerRow)
    }
}
#endif
