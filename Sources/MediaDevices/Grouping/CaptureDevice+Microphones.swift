extension CaptureDevice {
    /// The audio inputs among `devices` that are part of this camera: a webcam's own microphone,
    /// found by ``/MediaDevicesVideo/CaptureDevice/group`` as browsers find it by `groupId`. Empty when the camera
    /// has no group (v4l2loopback, a PipeWire node with no device behind it) or no microphone.
    ///
    /// Every way to reach the microphone is returned, in the order of `devices`: its ALSA `hw:`
    /// and `plughw:` PCMs and its Pulse (or PipeWire) source when a server runs. For example:
    ///
    /// ```swift
    /// import MediaDevices
    ///
    /// func webcamMicrophone() async -> AudioDevice? {
    ///     let cameras = await CaptureDevice.discover().devices
    ///     let audio = await AudioDevice.discover().devices
    ///     return cameras.lazy.compactMap { $0.microphones(among: audio).first }.first
    /// }
    /// ```
    public func microphones(among devices: [AudioDevice]) -> [AudioDevice] {
        guard let group else { return [] }
        return devices.filter { $0.direction == .input && $0.group == group }
    }
}
