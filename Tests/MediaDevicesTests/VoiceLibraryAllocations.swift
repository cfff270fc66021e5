import MediaDevicesAudio

/// The heap allocations the voice-processing tests let the library make on the capture thread.
/// Our path (`VoiceProcessor`, the engines, the reference line, speexdsp) allocates nothing per
/// block, on any library: a call that allocates fails, with one exception that is the library's
/// own and periodic. webrtc-audio-processing 1.x (Debian 13's 1.3) reports AEC3's metrics once
/// every 10 s of capture it processed: `EchoRemoverMetrics::Update` hands each histogram's name to
/// the `RTC_HISTOGRAM_*` macros as a `std::string` (17-20 allocations per report, traced by
/// backtrace), compiled into Debian's library (built without `RTC_DISABLE_METRICS`), with no
/// setting that turns it off. So on AEC3, and only there, a call may allocate when the capture
/// blocks it processed reach a 10 s mark (within `aec3MarkSlackBlocks`), at most
/// `aec3ReportAllocations` times per mark. A per-block allocation of ours shows in every call,
/// nearly all of them far from a mark: it still fails. webrtc 0.3 and speexdsp: none, ever.
enum VoiceLibraryAllocations {
    /// Our 10 ms blocks between two AEC3 reports (its 2500 blocks of 4 ms).
    static let aec3ReportBlocks = 1000
    /// How far from our block count AEC3's own may run: it reports over its last 11 blocks (44 ms)
    /// before the mark, and counts from its first block, a few of ours after the processor's first.
    static let aec3MarkSlackBlocks = 10
    /// The most allocations one report may make: measured 17-20 (20 at 16 kHz in
    /// `VoiceProcessorTests`, 37 over two reports in `VoiceProcessingBusTests`), with room for
    /// a longer histogram name, not for a per-block allocation (a 10 s stretch has 1000 blocks).
    static let aec3ReportAllocations: UInt64 = 40

    /// Why `allocations`, made by a call of a processor on `library` that processed capture blocks
    /// `before..<after` (its `processedBlocks` before and after the call), are not allowed; nil
    /// when they are: none, or with WebRTC on AEC3 a report's worth at a 10 s mark.
    static func refusal(_ allocations: UInt64, library: VoiceProcessingLibrary, blocks before: Int, _ after: Int) -> String? {
        guard allocations > 0 else { return nil }
        guard library == .webRTC && VoiceProcessingLibrary.webRTCIsAEC3 else {
            return "\(allocations) allocations (\(library) on \(VoiceProcessingLibrary.webRTCIsAEC3 ? "webrtc 1.x" : "webrtc 0.3") allocates nothing per block)"
        }
        let low = max(0, before - aec3MarkSlackBlocks), high = after + aec3MarkSlackBlocks
        guard high / aec3ReportBlocks > low / aec3ReportBlocks, high >= aec3ReportBlocks else {
            return "\(allocations) allocations over blocks \(before)..<\(after), away from AEC3's 10 s reports (every \(aec3ReportBlocks) blocks): ours"
        }
        guard allocations <= aec3ReportAllocations * UInt64(high / aec3ReportBlocks - low / aec3ReportBlocks) else {
            return "\(allocations) allocations at AEC3's 10 s report (blocks \(before)..<\(after)): more than a report's \(aec3ReportAllocations)"
        }
        return nil
    }
}
