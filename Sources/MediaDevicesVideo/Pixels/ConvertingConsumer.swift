import MediaDevicesCore
import Synchronization

/// A callback consumer that converts each frame to an ``OutputFormat`` before passing it on, on
/// the capture thread, without allocating per frame. Set it as a source's `consumer`:
/// ```swift
/// camera.consumer = try ConvertingConsumer(output: OutputFormat(.nv12, size: Size(width: 480, height: 480)),
///                                          consumer: myRenderer)
/// ```
// @unchecked Sendable: `converter` (one thread at a time) is used only in `consumeFrame`, which a
// source calls from its capture thread, one frame at a time.
public final class ConvertingConsumer: VideoFrameConsumer, @unchecked Sendable {
    let converter: FrameConverter
    private let downstream: any VideoFrameConsumer
    private let counters = Mutex((corrupt: 0, reason: String?.none))

    /// Converts to `output` and hands the result to `consumer`. Throws `.unsupportedFormat` for
    /// an output the pipeline cannot produce.
    public init(output: OutputFormat, consumer: any VideoFrameConsumer) throws(MediaDevicesError) {
        converter = try FrameConverter(output: output)
        downstream = consumer
    }

    /// The output frames are converted to.
    public var output: OutputFormat { converter.output }

    /// Frames dropped because they could not be converted (corrupt JPEGs, short buffers).
    public var corruptFrames: Int { counters.withLock { $0.corrupt } }

    /// Why the last dropped frame could not be converted.
    public var lastCorruptFrameReason: String? { counters.withLock { $0.reason } }

    /// Converts `frame` and passes the result on; a frame that cannot be converted is dropped
    /// and counted.
    public func consumeFrame(_ frame: VideoFrame) {
        do {
            try converter.convert(frame) { downstream.consumeFrame($0) }
        } catch {
            drop(frame, because: error)
        }
    }

    /// Converts `frame` from its MJPEG picture, decoded once for several consumers, and passes
    /// the result on.
    func consumeFrame(_ frame: VideoFrame, decoded: DecodedJPEG) {
        do {
            try converter.convert(frame, decoded: decoded) { downstream.consumeFrame($0) }
        } catch {
            drop(frame, because: error)
        }
    }

    /// Counts `frame` as dropped: it could not be decoded or converted (`error` says why).
    func drop(_ frame: VideoFrame, because error: any Error) {
        let reason = (error as? MediaDevicesError)?.description ?? "\(error)"
        counters.withLock { $0.corrupt += 1; $0.reason = reason }
    }

    /// Passes the end of capture on.
    public func captureDidStop(error: MediaDevicesError?) { downstream.captureDidStop(error: error) }
}
