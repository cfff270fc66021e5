import MediaDevicesCore
// The calls of the audio driver that can wait on a sound server, for Swift concurrency: each runs
// the synchronous call on a thread of its own (`runBlocking`), so it holds no thread of the
// cooperative pool, and cancelling the calling task ends a wait on the server at once with
// `.cancelled`, leaving nothing open and the side as it was. The synchronous forms stay for
// callers that have no task (the audio-device callbacks of video-chat SDKs); ALSA devices open
// at ioctl speed either way.

extension AudioDriverSide {
    /// ``initialize(device:format:options:)-71hnd``, cancellable while it waits for a sound server
    /// (up to `options.serverTimeout`).
    /// - Throws: what the synchronous form throws;
    ///   ``/MediaDevicesCore/MediaDevicesError/Code/cancelled`` when the task was cancelled.
    package func initialize(device: AudioDevice, format: AudioFormat,
                           options: AudioStreamOptions = AudioStreamOptions()) async throws(MediaDevicesError) {
        try await runBlocking(name: "md-audio-open", device: device.uniqueID, operation: "initialize") {
            try self.initialize(device: device, format: format, options: options)
        }
    }

    /// ``switchDevice(to:options:)-iqo``, cancellable while it waits for a sound server.
    /// - Throws: what the synchronous form throws;
    ///   ``/MediaDevicesCore/MediaDevicesError/Code/cancelled`` when the task was cancelled (the
    ///   side stays on its device).
    @discardableResult
    package func switchDevice(to device: AudioDevice, options: AudioStreamOptions? = nil) async throws(MediaDevicesError) -> AudioDeviceSwitch {
        try await runBlocking(name: "md-audio-switch", device: device.uniqueID, operation: "switchDevice") {
            try self.switchDevice(to: device, options: options)
        }
    }
}

extension AudioDriver {
    /// ``initializeCapture(device:format:options:)-igqs``, cancellable while it waits for a sound server.
    /// - Throws: what the synchronous form throws;
    ///   ``/MediaDevicesCore/MediaDevicesError/Code/cancelled`` when the task was cancelled.
    public func initializeCapture(device: AudioDevice, format: AudioFormat,
                                  options: AudioStreamOptions = AudioStreamOptions()) async throws(MediaDevicesError) {
        try await capture.initialize(device: device, format: format, options: options)
    }

    /// ``initializeCapture(device:format:options:voiceProcessing:)-7zg9l``, cancellable while it waits
    /// for a sound server.
    /// - Throws: what the synchronous form throws;
    ///   ``/MediaDevicesCore/MediaDevicesError/Code/cancelled`` when the task was cancelled.
    public func initializeCapture(device: AudioDevice, format: AudioFormat, options: AudioStreamOptions = AudioStreamOptions(),
                                  voiceProcessing: VoiceProcessingOptions?) async throws(MediaDevicesError) {
        try await runBlocking(name: "md-audio-open", device: device.uniqueID, operation: "initializeCapture") {
            try self.initializeCapture(device: device, format: format, options: options, voiceProcessing: voiceProcessing)
        }
    }

    /// ``initializeRendering(device:format:options:)-5yhyg``, cancellable while it waits for a sound
    /// server.
    /// - Throws: what the synchronous form throws;
    ///   ``/MediaDevicesCore/MediaDevicesError/Code/cancelled`` when the task was cancelled.
    public func initializeRendering(device: AudioDevice, format: AudioFormat,
                                    options: AudioStreamOptions = AudioStreamOptions()) async throws(MediaDevicesError) {
        try await runBlocking(name: "md-audio-open", device: device.uniqueID, operation: "initializeRendering") {
            try self.initializeRendering(device: device, format: format, options: options)
        }
    }

    /// ``switchCaptureDevice(to:options:)-9125``, cancellable while it waits for a sound server.
    /// - Throws: what the synchronous form throws;
    ///   ``/MediaDevicesCore/MediaDevicesError/Code/cancelled`` when the task was cancelled.
    @discardableResult
    public func switchCaptureDevice(to device: AudioDevice, options: AudioStreamOptions? = nil) async throws(MediaDevicesError) -> AudioDeviceSwitch {
        try await capture.switchDevice(to: device, options: options)
    }

    /// ``switchRenderDevice(to:options:)-1mlc9``, cancellable while it waits for a sound server.
    /// - Throws: what the synchronous form throws;
    ///   ``/MediaDevicesCore/MediaDevicesError/Code/cancelled`` when the task was cancelled.
    @discardableResult
    public func switchRenderDevice(to device: AudioDevice, options: AudioStreamOptions? = nil) async throws(MediaDevicesError) -> AudioDeviceSwitch {
        try await render.switchDevice(to: device, options: options)
    }
}
