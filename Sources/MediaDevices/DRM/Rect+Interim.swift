// INTERIM: issue 3 (Pixels, on main) adds `Rect` to Model/FrameSize.swift. This copy lets the
// screen branch build before that lands; delete this file when merging main's "Pixels:" commit.

/// A rectangle in pixels: origin (x, y) from the top left, and size.
public struct Rect: Sendable, Hashable {
    /// Left edge.
    public var x: Int
    /// Top edge.
    public var y: Int
    /// Width.
    public var width: Int
    /// Height.
    public var height: Int

    /// A rectangle.
    public init(x: Int, y: Int, width: Int, height: Int) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }
}
