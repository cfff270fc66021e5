import CALSA
import Glibc
import MediaDevicesCore

/// `snd_pcm_open`, the one way the library opens an ALSA PCM (non-blocking).
///
/// Out of file descriptors, libasound fails part way through (reading its configuration files,
/// opening the card's control device) and says `ENOENT` or `ENODEV`; worse, a configuration
/// it failed to read stays cached for the rest of the process, so every later open of any
/// PCM said "no PCM of that name" even once descriptors were back (seen in
/// `DescriptorExhaustionTests`). So a failure with few descriptors spare is reported as
/// `.tooManyOpenFiles`, and libasound's global configuration is dropped
/// (`snd_config_update_free_global`, which waits for trees in use by its reference counts) so
/// that the next open reads it again.
enum ALSAOpen {
    /// Opens `name` for `direction`; throws the mapped error (`.tooManyOpenFiles` when out of
    /// descriptors).
    static func pcm(_ name: String, direction: AudioDevice.Direction) throws(MediaDevicesError) -> OpaquePointer {
        var handle: OpaquePointer?
        let result = open(&handle, name, direction)
        guard result >= 0, let handle else { throw MediaDevicesError.fromAudio(result, device: name, operation: "snd_pcm_open") }
        return handle
    }

    /// `snd_pcm_open`'s result (0 or a negative errno), the PCM in `handle`; drops libasound's
    /// cached configuration when the failure was for want of descriptors.
    static func open(_ handle: inout OpaquePointer?, _ name: String, _ direction: AudioDevice.Direction) -> Int32 {
        _ = ALSALogging.silenced
        let stream = direction == .input ? SND_PCM_STREAM_CAPTURE : SND_PCM_STREAM_PLAYBACK
        let result = snd_pcm_open(&handle, name, stream, SND_PCM_NONBLOCK)
        if result < 0, DescriptorHeadroom.likelyExhausted() != nil { snd_config_update_free_global() }
        return result
    }
}
