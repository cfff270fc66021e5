import MediaDevicesCore
/// The capturer contract every video source implements, in the spirit of OpenTok's
/// `OTVideoCapture` and Twilio's ``VideoSource``: initialize, start, stop, release, report the
/// settings in force, and hand frames to a consumer.
///
/// Frames reach applications two ways, which can be used together:
/// - `consumer`: a callback on the source's capture thread, zero-copy (the frame's planes are
///   the driver's buffer, lent for the duration of the call);
/// - ``VideoSource/frames(bufferSize:)`` on every source the library makes: an `AsyncSequence`
///   with a bounded buffer that drops the oldest frame when the application falls behind, and
///   counts what it dropped. Cameras lend the driver's buffer (held until the loop body ends);
///   other sources give pooled copies.
public protocol VideoCapturer: AnyObject, Sendable {
    /// Prepares the source: opens the device and negotiates the format. (`initCapture`)
    /// - Throws: the device's failure (`.notFound`, `.busy`, `.permissionDenied`,
    ///   `.unsupportedFormat`, …); `.invalidState` from the source's own capture thread.
    func initialize() throws(MediaDevicesError)
    /// Releases everything `initialize` acquired; stops first if capturing. (`releaseCapture`)
    func release()
    /// Starts delivering frames from a dedicated capture thread. (`startCapture`)
    /// - Throws: what `initialize()` throws, or the failure to start streaming.
    func start() throws(MediaDevicesError)
    /// Stops delivering frames and waits for the capture thread to finish. (`stopCapture`)
    func stop()
    /// Whether frames are being delivered. (`isCaptureStarted`)
    var isCapturing: Bool { get }
    /// The format and estimated frame rate in force, once initialized. (`captureSettings`)
    var captureSettings: CaptureSettings? { get }
    /// The orientation of the frames being produced now.
    var orientation: VideoOrientation { get }
    /// The callback consumer; replaceable at any time, also while capturing.
    var consumer: (any VideoFrameConsumer)? { get set }
    /// Counters and measurements of the current or last run.
    var statistics: CaptureStatistics { get }
}

/// The format a capturer produces and the frame rate it expects to deliver
/// (OpenTok's `OTVideoFormat`).
public struct CaptureSettings: Sendable, Hashable {
    /// The frame format.
    public var format: VideoFormat
    /// The frame rate the source was set to; `nil` when the driver does not say.
    public var frameRate: FrameRate?

    /// Settings for `format` at `frameRate`.
    public init(format: VideoFormat, frameRate: FrameRate?) {
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
