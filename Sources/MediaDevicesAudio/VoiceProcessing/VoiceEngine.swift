import MediaDevicesCore
/// One library's voice processing on 10 ms blocks of interleaved 16-bit samples, as
/// `VoiceProcessor` drives it, on the capture thread: each captured block comes with the
/// reference block `EchoReferenceLine` aligned to it (heard `referenceLeadFrames` after the
/// block was recorded: its echo is in the block processed that much later). Allocation-free per block once made.
protocol VoiceEngine: AnyObject {
    /// Switches the processors to `processing`; throws when the library refuses.
    func apply(_ processing: VoiceProcessing) throws(MediaDevicesError)
    /// How long after a captured block was recorded the reference handed with it was heard: the
    /// delay the library is told (WebRTC, which keeps its own far-end buffer) or 0 (speexdsp,
    /// which takes the two blocks together).
    var referenceLeadFrames: Int { get }
    /// Processes one captured block in place with `reference`, the block heard
    /// `referenceLeadFrames` after it was recorded.
    func processCapture(_ block: UnsafeMutablePointer<Int16>, reference: UnsafePointer<Int16>)
    /// The frames by which the library delays the capture with `processing` on, beyond the
    /// processor's own block.
    func delayFrames(for processing: VoiceProcessing) -> Int
    /// What the echo canceller measured, where the library measures it.
    var echoMetrics: EchoMetrics? { get }
}
