/// One library's voice processing on 10 ms blocks of interleaved 16-bit samples, as
/// `VoiceProcessor` drives it: `processRender` on the render thread, everything else on the
/// capture thread (or one thread for both). Allocation-free per block once made.
protocol VoiceEngine: AnyObject {
    /// Switches the processors to `processing`; throws when the library refuses.
    func apply(_ processing: VoiceProcessing) throws
    /// Takes one block of what is played as the echo reference.
    func processRender(_ block: UnsafePointer<Int16>)
    /// Processes one captured block in place; `delayFrames` is the time from a render block's
    /// `processRender` to the capture block holding its echo.
    func processCapture(_ block: UnsafeMutablePointer<Int16>, delayFrames: Int)
    /// The frames by which the library delays the capture with `processing` on, beyond the
    /// processor's own block.
    func delayFrames(for processing: VoiceProcessing) -> Int
    /// What the echo canceller measured, where the library measures it.
    var echoMetrics: EchoMetrics? { get }
}
