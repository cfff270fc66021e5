import MediaDevicesCore
/// Voice processing for calls on the driver: echo cancellation with the render side as the
/// reference, noise suppression and automatic gain on what the capture side puts in the bus
/// (see `VoiceProcessor`). The processor runs at the capture's bus format on the capture
/// thread; the render thread hands it what it takes from the bus (converted to that format
/// when the render side's differs). The reference is aligned by time: each side stamps its
/// periods with the device's timestamps (when a played frame is heard, when a captured one was
/// recorded, converter delays included) and says when the device lost frames, so it stays
/// aligned across xruns, device switches, fallbacks, resampling and a capture thread that
/// falls seconds behind (the capture device's buffer holds what it has not read; the reference
/// line holds that much more). `mediadevices duplex --json` prints the re-alignments it counted. While the render side is stopped the canceller gets no
/// reference and passes the capture on (noise and gain go on).
extension AudioDriver {
    /// Opens the input (see ``initializeCapture(device:format:options:)-igqs``) and turns
    /// voice processing on at `format` with `voiceProcessing` (nil: off). Throws
    /// ``/MediaDevicesCore/MediaDevicesError/Code/unsupportedFormat`` naming the formats voice
    /// processing takes (``VoiceProcessor/sampleRates``, mono or stereo, S16_LE or FLOAT_LE; the
    /// driver converts the device's format to the one asked for).
    public func initializeCapture(device: AudioDevice, format: AudioFormat, options: AudioStreamOptions = AudioStreamOptions(),
                                  voiceProcessing: VoiceProcessingOptions?) throws(MediaDevicesError) {
        if let voiceProcessing { try VoiceProcessor.check(format, options: voiceProcessing) }
        try capture.initialize(device: device, format: format, options: options)
        try setVoiceProcessing(voiceProcessing)
    }

    /// Turns voice processing on with `options` at the capture side's format, replacing what
    /// ran (a new processor starts unconverged), or off (nil). The capture side must be
    /// initialized; either side may be running. To switch processors while running without
    /// starting over, set `voiceProcessor?.processing`.
    public func setVoiceProcessing(_ options: VoiceProcessingOptions?) throws(MediaDevicesError) {
        guard let options else {
            bus.voice.install(nil)
            return
        }
        guard let format = capture.format else {
            throw MediaDevicesError(.invalidState, device: nil, operation: "set voice processing",
                                    detail: "Initialize the capture side first: voice processing runs at its format")
        }
        // The reference line holds what the capture device may hold while its thread is behind.
        let captureBufferSeconds = Double(capture.bufferFrames ?? 0) / Double(capture.deviceFormat?.sampleRate ?? format.sampleRate)
        let processor = try VoiceProcessor(format: format, options: options, referenceSeconds: 2 + captureBufferSeconds)
        bus.voice.install(try VoiceSession(processor: processor, renderFormat: render.format))
    }

    /// The voice processor that runs (nil: none): its ``VoiceProcessor/processing`` switches parts while
    /// running, its ``VoiceProcessor/latency`` is what it adds to ``estimatedCaptureDelay``, its
    /// ``VoiceProcessor/echoMetrics`` what the canceller measured.
    public var voiceProcessor: VoiceProcessor? { bus.voice.session?.processor }

    /// After the render side initialized at another format: the running processor takes its
    /// reference at the new format.
    func renderFormatDidChange() throws(MediaDevicesError) {
        guard let session = bus.voice.session, session.renderFormat != render.format else { return }
        bus.voice.install(try VoiceSession(processor: session.processor, renderFormat: render.format))
    }
}
