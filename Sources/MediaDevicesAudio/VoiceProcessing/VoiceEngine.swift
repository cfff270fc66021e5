import MediaDevicesCore
/// One library's voice processing on 10 ms blocks of interleaved 16-bit samples, as
/// `VoiceProcessor` drives it, on the capture thread: each captured block comes with the
/// reference block `EchoReferenceLine` aligned to it (heard `referenceLeadFrames` after the
/// block was recorded: its echo is in the block processed that much later). Allocation-free per block once made.
protocol VoiceEngine: AnyObject {
    /// Switches the processors to `processing`; throws when the library refuses.
    func apply(_ processing: VoiceProcessing) throws(MediaDevicesError)
    /// How long after a captured block was recorded the reference handed with it was heard: the
    /// delay the library is told and the margin (WebRTC, which keeps its own far-end buffer: 40 ms,
    /// APM told 32), or the margin alone (speexdsp, which takes the two blocks together: 8 ms).
    /// The devices' delays together must be at least this long, or the reference is not yet there.
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

extension VoiceEngine {
    /// How much earlier than its echo each engine takes the reference, beyond what its library
    /// is told: the line places the reference within `EchoReferenceLine.tolerance` (6 ms) of
    /// the devices' stamps, and a reference placed later than its echo is not cancelled at all.
    /// With it, a reference placed up to the tolerance late is still 2 ms early for APM and the
    /// linear stage (10 ms: whole blocks), and a few ms of each filter model silence.
    /// Measured in the simulated room (`VoiceProcessorRoomTests.testEchoIsCancelledWithTheReferenceOffItsStamps`):
    /// APM's AEC alone cancels (41 dB) with the reference up to 40 ms earlier than it is told
    /// or 4 ms later, and fails from 6 ms later on (21 dB; 13 dB at 24 ms); speexdsp's canceller
    /// cancels with it up to 32 ms early (19–26 dB) and not at all 4 ms late (0.6 dB). Both
    /// took it at that edge before: in the emulator a reference 6 ms late left 9 dB (stop 59's CI).
    /// The cost: an echo path that jumps 100 ms later is followed in 1.4 s, not 1.0 s
    /// (`VoiceProcessorRoomTests.testEchoPathJumpReconverges`).
    static var referenceMarginMilliseconds: Int { 8 }
}
