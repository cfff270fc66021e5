import MediaDevicesCore
import CPulse

/// Maps libpulse error codes (`pa_context_errno`) to the library's error, with the remedy.
enum PulseError {
    /// The error for libpulse's `code` in `operation` on `device`.
    static func make(_ code: Int32, device: String, operation: String) -> MediaDevicesError {
        let text = String(cString: pa_strerror(code))
        switch pa_error_code(UInt32(code)) {
        case PA_ERR_CONNECTIONTERMINATED, PA_ERR_KILLED:
            return MediaDevicesError(.disconnected, device: device, operation: operation,
                                     detail: "The PulseAudio server went away (\(text)); the stream ended. Restart the server (`pulseaudio --start`) and start again")
        case PA_ERR_CONNECTIONREFUSED, PA_ERR_TIMEOUT:
            return MediaDevicesError(.notFound, device: device, operation: operation,
                                     detail: "No PulseAudio server answered (\(text)); start one (`pulseaudio --start`) or set PULSE_SERVER")
        case PA_ERR_NOENTITY:
            return MediaDevicesError(.notFound, device: device, operation: operation,
                                     detail: "The server has no such source or sink (\(text)); run `pactl list short sources` / `sinks`")
        case PA_ERR_NOTSUPPORTED, PA_ERR_INVALID:
            return MediaDevicesError(.unsupportedFormat, device: device, operation: operation,
                                     detail: "The server refused the stream's format (\(text))",
                                     remedy: "AudioDevice.supportedFormats() lists what it takes")
        case PA_ERR_ACCESS:
            return MediaDevicesError(.permissionDenied, device: device, operation: operation,
                                     detail: "The server refused this client (\(text)); check the cookie and the socket's permissions")
        default:
            return MediaDevicesError(.io, device: device, operation: operation, detail: "PulseAudio reported: \(text)")
        }
    }

    /// A server that holds its connection open but stopped answering for `seconds`.
    static func stalled(device: String, operation: String, seconds: Double) -> MediaDevicesError {
        MediaDevicesError(.timeout, device: device, operation: operation,
                          detail: "The PulseAudio server stopped answering for \(seconds) s without closing the connection (stopped or hung); check it (`pactl info`) and start again")
    }
}
