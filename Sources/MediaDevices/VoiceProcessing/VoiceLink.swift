import Synchronization

/// Where an `AudioBus` finds the voice processing its driver configured: the session the audio
/// threads run (taken under a short lock that only swaps a reference: no thread waits on
/// processing) and the delays each side measured last, so that the capture thread aligns the
/// reference by render delay + capture delay without reading the other side's state. Sides and
/// devices may change under it: each new run writes its delays here; the session stays.
final class VoiceLink: Sendable {
    private let slot = Mutex<VoiceSession?>(nil)
    private let renderDelayNanoseconds = Atomic<Int>(0)
    private let captureDelayNanoseconds = Atomic<Int>(0)

    /// The session the audio threads run now (nil: no voice processing).
    var session: VoiceSession? { slot.withLock { $0 } }

    /// Puts `session` in place (nil: off); the old one is freed once both threads let go.
    func install(_ session: VoiceSession?) {
        let old = slot.withLock { slot in
            defer { slot = session }
            return slot
        }
        _ = old
    }

    /// Render thread: the render side's delay, seconds from taking frames off the bus to hearing them.
    func setRenderDelay(_ seconds: Double) { renderDelayNanoseconds.store(Int(seconds * 1e9), ordering: .relaxed) }
    /// Capture thread: the capture side's delay, seconds from the microphone to the bus.
    func setCaptureDelay(_ seconds: Double) { captureDelayNanoseconds.store(Int(seconds * 1e9), ordering: .relaxed) }

    /// From a render tap to the capture tap that holds its echo: render delay + capture delay.
    var echoDelay: Double {
        Double(renderDelayNanoseconds.load(ordering: .relaxed) + captureDelayNanoseconds.load(ordering: .relaxed)) / 1e9
    }
}
