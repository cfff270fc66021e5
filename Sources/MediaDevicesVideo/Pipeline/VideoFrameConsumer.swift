import MediaDevicesCore
/// The format a capturer produces and the frame rate it expects to deliver
/// (OpenTok's `OTVideoFormat`).
public struct CaptureSettings: Sendable, Hashable {
    /// The frame format.
    public var format: VideoFormat
    /// The frame rate the source was set to; `nil` when the driver does not say.
    public var frameRate: FrameRate?

    /// Settings for `format` at `frameRate`.
    package init(format: VideoFormat, frameRate: FrameRate?) {
        self.format = format
        self.frameRate = frameRate
    }
}

/// Receives frames on the capture thread (OpenTok's `OTVideoCaptureConsumer`).
public protocol VideoFrameConsumer: AnyObject, Sendable {
    /// Called once per frame on the capture thread. The frame's planes are valid only until this
    /// returns; copy what you keep. Return quickly: the capture thread waits for you.
    func consumeFrame(_ frame: VideoFrame)
    /// Called once when capturing ends: `error` is `nil` after `stop()`, the failure otherwise.
    func captureDidStop(error: MediaDevicesError?)
}

extension VideoFrameConsumer {
    /// Default: ignore the end of capture.
    public func captureDidStop(error: MediaDevicesError?) {}
}
