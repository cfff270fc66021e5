#if compiler(>=6.2)
import MediaDevicesCore

// Frame bytes as Swift's safe, non-escaping views (`Span`, `RawSpan`, Swift 6.2): the view
// cannot leave the closure it is lent to, so it cannot outlive the driver's buffer the way a
// copied-out `UnsafeRawBufferPointer` can. For C interop the unsafe pointers stay
// (``FramePlane/bytes``, ``VideoFrameBuffer/withUnsafeBytes(_:)``). Compiled with Swift 6.2 and
// later only; an older compiler builds the package without them.

extension FramePlane {
    /// Lends the plane's bytes as a `Span` of bytes (indexable, bounds-checked), valid only
    /// inside `body`: `plane.withSpan { $0[0] }` is the first pixel byte. Rows are
    /// ``bytesPerRow`` apart. Throws what `body` throws, with its type.
    public func withSpan<Result, Failure: Error>(_ body: (Span<UInt8>) throws(Failure) -> Result) throws(Failure) -> Result {
        try body(Span<UInt8>(_unsafeBytes: bytes))
    }

    /// Lends the plane's bytes as a `RawSpan` (typed loads at byte offsets:
    /// `unsafeLoadUnaligned(fromByteOffset:as:)` for 16-bit samples), valid only inside `body`.
    /// Throws what `body` throws, with its type.
    public func withRawSpan<Result, Failure: Error>(_ body: (RawSpan) throws(Failure) -> Result) throws(Failure) -> Result {
        try body(RawSpan(_unsafeBytes: bytes))
    }
}

extension VideoFrame {
    /// Lends plane `index` (0 ..< ``planeCount``) as a `Span` of bytes, valid only inside
    /// `body` (the frame itself is valid only inside the callback that was given it).
    public func withSpan<Result, Failure: Error>(plane index: Int, _ body: (Span<UInt8>) throws(Failure) -> Result) throws(Failure) -> Result {
        try plane(index).withSpan(body)
    }
}
#endif
