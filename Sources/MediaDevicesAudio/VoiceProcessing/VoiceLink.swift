import MediaDevicesCore
import Synchronization

/// Where an `AudioBus` finds the voice processing its driver configured: the session the audio
/// threads run (taken under a short lock that only swaps a reference: no thread waits on
/// processing). Sides and devices may change under it; the session stays. Each side stamps
/// what it hands over with the device's time (see `AudioBusPort`), which aligns the reference.
final class VoiceLink: Sendable {
    private let slot = Mutex<VoiceSession?>(nil)

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
}
