import MediaDevicesCore
import CPulse

/// The buffer attributes a Pulse stream asks for, from the period and buffer the application
/// asked for. Sent with `PA_STREAM_ADJUST_LATENCY`, so the server sizes the device's own
/// latency to them as well (without it the server keeps the device at its default latency,
/// two seconds for a null sink, whatever the stream's buffer).
struct PulseBufferPlan {
    /// What `pa_stream_connect_playback` / `pa_stream_connect_record` get.
    let attributes: pa_buffer_attr

    /// Playback: `tlength` is the whole requested latency (periods × period), `minreq` one period
    /// (the server asks for data a period at a time), `prebuf` one period (playback starts, and
    /// restarts after an underrun, as soon as a period is there, not once the buffer is full),
    /// `maxlength` the server's default (the client never writes beyond `tlength`).
    /// Record: `fragsize` one period (the server hands over a period at a time and sizes the
    /// source's latency to it), `maxlength` the server's default: the audio thread takes all
    /// that has arrived at every wake-up, so a backlog after a late wake-up is gone at once,
    /// and a bound would only lose data (the stream is corked, and flushed on start, while no
    /// run is going, so nothing piles up between runs).
    init(direction: AudioDevice.Direction, periodFrames: Int, periods: Int, bytesPerFrame: Int) {
        let period = UInt32(clamping: periodFrames * bytesPerFrame)
        let buffer = UInt32(clamping: periodFrames * max(2, periods) * bytesPerFrame)
        let unset = UInt32.max
        if direction == .output {
            attributes = pa_buffer_attr(maxlength: unset, tlength: buffer, prebuf: period, minreq: period, fragsize: unset)
        } else {
            attributes = pa_buffer_attr(maxlength: unset, tlength: unset, prebuf: unset, minreq: unset, fragsize: period)
        }
    }

    /// The period the server chose, in bytes (`minreq` for playback, `fragsize` for record).
    static func periodBytes(of attributes: pa_buffer_attr, direction: AudioDevice.Direction) -> Int {
        Int(direction == .output ? attributes.minreq : attributes.fragsize)
    }

    /// The buffer in bytes: for playback the `tlength` the server chose; for record, where the
    /// server buffers up to its default `maxlength`, `periods` of the `fragsize` it chose.
    static func bufferBytes(of attributes: pa_buffer_attr, direction: AudioDevice.Direction, periods: Int) -> Int {
        direction == .output ? Int(attributes.tlength) : Int(attributes.fragsize) * max(2, periods)
    }
}
