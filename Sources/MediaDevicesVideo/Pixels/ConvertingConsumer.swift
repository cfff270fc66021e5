import MediaDevicesCore
import Synchronization

/// A callback consumer that converts each frame to an ``OutputFormat`` before passing it on.
/// Set it as a source's `consumer`:
/// ```swift
/// camera.consumer = try ConvertingConsumer(output: OutputFormat(.nv12, size: Size(width: 480, height: 480)),
///                                          consumer: myRenderer)
/// ```
/// With one thread (the default) it converts on the capture thread, one frame at a time, without
/// allocating per frame. With more, it converts on threads of its own, several frames at once,
/// and hands the results to its consumer one at a time in capture order, timestamps, sequence
/// numbers and orientation kept: for a stream one core cannot convert in time, such as 4K MJPEG
/// at 30 fps on a small ARM board. That costs a copy of each frame (so the device's buffer goes
/// back at once) and a thread hand-off; when every thread has a frame, a new frame is dropped and
/// counted (``busyFrames``), so a live camera's frames are not queued without bound. The consumer
/// is then called on the converting threads (named `md-convert`), never two at once, and
/// `captureDidStop(error:)` reaches it after the last frame; the threads end when this object is
/// released.
// @unchecked Sendable: `converter` (one thread at a time) is used only in `consumeFrame`, which a
// source calls from its capture thread, one frame at a time; `parallel` is Sendable.
public final class ConvertingConsumer: VideoFrameConsumer, @unchecked Sendable {
    let converter: FrameConverter
    private let downstream: any VideoFrameConsumer
    private let counters = Mutex((corrupt: 0, reason: String?.none))
    /// The converting threads, for more than one thread (then `converter` is not used).
    let parallel: ParallelConvertingConsumer?

    /// Converts to `output` on `threads` threads (1: on the capture thread) and hands the results
    /// to `consumer` in capture order. Throws `.unsupportedFormat` for an output the pipeline
    /// cannot produce, `.invalidValue` for fewer than one thread, `.io` when a thread cannot start.
    public init(output: OutputFormat, threads: Int = 1, consumer: any VideoFrameConsumer) throws(MediaDevicesError) {
        converter = try FrameConverter(output: output)
        downstream = consumer
        parallel = threads == 1 ? nil : try ParallelConvertingConsumer(output: output, threads: threads, consumer: consumer)
    }

    /// The output frames are converted to.
    public var output: OutputFormat { converter.output }

    /// Frames dropped because they could not be converted (corrupt JPEGs, short buffers).
    public var corruptFrames: Int { parallel?.corruptFrames ?? counters.withLock { $0.corrupt } }

    /// Why the last dropped frame could not be converted.
    public var lastCorruptFrameReason: String? {
        if let parallel { return parallel.lastCorruptFrameReason }
        return counters.withLock { $0.reason }
    }

    /// Frames dropped because every converting thread was still converting an earlier frame
    /// (always 0 with one thread: the capture thread waits for the conversion).
    public var busyFrames: Int { parallel?.busyFrames ?? 0 }

    /// Converts `frame` and passes the result on; a frame that cannot be converted is dropped
    /// and counted. With more than one thread: copies `frame` and has a free thread convert it,
    /// or drops it (``busyFrames``) when none is free.
    public func consumeFrame(_ frame: VideoFrame) {
        if let parallel { return parallel.consumeFrame(frame) }
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

    /// Passes the end of capture on (with more than one thread, once the frames already taken
    /// are converted and handed on).
    public func captureDidStop(error: MediaDevicesError?) {
        if let parallel { return parallel.captureDidStop(error: error) }
        downstream.captureDidStop(error: error)
    }
}
