#if compiler(>=6.2)
import MediaDevicesCore

extension VideoFrameBuffer {
    /// Lends plane `index` of the frame as a `Span` of bytes, valid only inside `body`, so a
    /// view of a leased driver buffer cannot outlive the lease (a ``release()`` made meanwhile
    /// gives the buffer back once `body` returns). Empty after `release()`. Rows are
    /// the plane's `bytesPerRow` apart (``withFrame(_:)`` gives the layout). Throws what `body`
    /// throws, with its type.
    public func withSpan<Result, Failure: Error>(plane index: Int = 0, _ body: (Span<UInt8>) throws(Failure) -> Result) throws(Failure) -> Result {
        try withFrame { (frame) throws(Failure) in try frame.withSpan(plane: index, body) }
    }

    /// Lends all bytes, the planes one after another, as a `RawSpan` valid only inside `body`
    /// (as ``withUnsafeBytes(_:)``, which gathers planes that lie apart into a temporary copy).
    /// Throws what `body` throws, with its type.
    public func withRawSpan<Result, Failure: Error>(_ body: (RawSpan) throws(Failure) -> Result) throws(Failure) -> Result {
        try withUnsafeBytes { (bytes) throws(Failure) in try body(RawSpan(_unsafeBytes: bytes)) }
    }
}
#endif
