import MediaDevicesCore
import CYUV

/// Blends a cursor image over a screen picture, for every screen backend: the cursor is
/// premultiplied 8-bit BGRA in memory (libyuv "ARGB"; KMS cursor planes and XFIXES cursor
/// images both are), the picture 8-bit BGRx/BGRA. Allocates nothing.
enum CursorOverlay {
    /// The part of a `width`×`height` cursor whose top-left corner is at (`x`, `y`) that lies
    /// on a `pictureWidth`×`pictureHeight` picture, in picture coordinates; `nil` when none does.
    static func visiblePart(x: Int, y: Int, width: Int, height: Int, pictureWidth: Int, pictureHeight: Int) -> Rect? {
        Rect(x: x, y: y, width: width, height: height).intersection(Rect(x: 0, y: 0, width: pictureWidth, height: pictureHeight))
    }

    /// Blends the cursor at `cursor` (rows `cursorBytesPerRow` apart, top-left corner at
    /// (`x`, `y`) of the picture) over the `visible` part (from `visiblePart`) of the picture
    /// at `picture` (rows `bytesPerRow` apart), in place (libyuv `ARGBBlend`).
    static func blend(cursor: UnsafeRawPointer, cursorBytesPerRow: Int, x: Int, y: Int, visible: Rect,
                      onto picture: UnsafeMutableRawPointer, bytesPerRow: Int) {
        let source = (cursor + (visible.y - y) * cursorBytesPerRow + (visible.x - x) * 4).assumingMemoryBound(to: UInt8.self)
        let under = (picture + visible.y * bytesPerRow + visible.x * 4).assumingMemoryBound(to: UInt8.self)
        ARGBBlend(source, Int32(cursorBytesPerRow), under, Int32(bytesPerRow), under, Int32(bytesPerRow),
                  Int32(visible.width), Int32(visible.height))
    }
}
