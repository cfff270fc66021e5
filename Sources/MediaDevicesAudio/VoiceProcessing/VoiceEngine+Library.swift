import MediaDevicesCore

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
