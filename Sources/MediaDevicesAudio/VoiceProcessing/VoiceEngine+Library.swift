import MediaDevicesCore
#if VoiceProcessing
import CWebRTCAPM
#endif

extension VoiceProcessor {
    /// The engine of `options.library` for `format`. Without the package trait `VoiceProcessing`
    /// the build has neither library: that is a `.notFound` naming the trait and its packages.
    static func makeEngine(format: AudioFormat, options: VoiceProcessingOptions) throws(MediaDevicesError) -> any VoiceEngine {
        #if VoiceProcessing
        switch options.library {
        case .webRTC: return try WebRTCVoiceEngine(format: format, options: options)
        case .speexDSP: return try SpeexVoiceEngine(format: format, options: options)
        }
        #else
        throw MediaDevicesError(.notFound, device: nil, operation: "create voice processor",
                                detail: "This build of MediaDevices has no voice processing: build it with the package trait VoiceProcessing (on by default), which needs libwebrtc-audio-processing-dev")
        #endif
    }
}

extension VoiceProcessingLibrary {
    /// Whether ``webRTC`` is built on webrtc-audio-processing 1.x (Debian 13's 1.3), whose echo
    /// canceller is AEC3, rather than 0.3's AEC (Debian 12): the two differ in what the tests
    /// measure where the library's behaviour, not ours, differs (AEC3's own periodic allocations,
    /// its reconvergence after an echo path change). False without the trait VoiceProcessing.
    package static var webRTCIsAEC3: Bool {
        #if VoiceProcessing
        capm_api_major() >= 1
        #else
        false
        #endif
    }
}
