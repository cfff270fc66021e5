import Logging
import MediaDevicesCore

/// The lifecycle of a source as ``VideoSource`` calls it, whatever its device part:
/// `SourceCore` conforms. The public base class holds its core through this protocol because a
/// public class cannot name the internal device types `SourceCore` is generic over.
protocol SourceLifecycle: AnyObject, Sendable {
    /// Hands frames to the consumer and the sequences; outlives runs.
    var delivery: FrameDelivery { get }
    /// Whether a run is delivering frames.
    var isCapturing: Bool { get }
    /// Opens the device (`SourceCore.initialize()`).
    func initialize() throws(MediaDevicesError)
    /// Opens the device, waiting for a person or a server off the cooperative pool (`SourceCore.prepare()`).
    func prepare() async throws(MediaDevicesError)
    /// Starts a run (`SourceCore.start()`).
    func start() throws(MediaDevicesError)
    /// Stops the run (`SourceCore.stop()`).
    func stop()
    /// Stops and closes the device (`SourceCore.release()`).
    func release()
    /// Changes the format, also while running (`SourceCore.setFormat(_:)`).
    func setFormat(_ request: FormatRequest) throws(MediaDevicesError) -> FormatNegotiation
    /// A new sequence of converted frames (`SourceCore.frames(bufferSize:output:)`).
    func frames(bufferSize: Int, output: OutputFormat) throws(MediaDevicesError) -> VideoFrames
}

extension SourceCore: SourceLifecycle {}

/// What every video source shares — ``CameraSource``, ``PipeWireCameraSource``,
/// ``ScreenSource`` and ``TestPatternSource`` are its subclasses, and a program that learned one
/// knows the others: the capturer lifecycle of OpenTok's `OTVideoCapture` and Twilio's
/// `VideoSource` (``initialize()``, ``prepare()``, ``start()``, ``stop()``, ``release()``), the
/// format (``negotiation``, ``setFormat(_:)``, ``captureSettings``), frames (``consumer``,
/// ``frames(bufferSize:)``, ``frames(bufferSize:output:)``, ``captureExecutor``), and what an
/// operator watches (``statistics``, ``logger``, ``frameTimeout``).
///
/// Frames reach applications two ways, which can be used together:
/// - ``consumer``: a callback on the source's capture thread, zero-copy (the frame's planes are
///   the driver's buffer, lent for the duration of the call);
/// - ``frames(bufferSize:)``: an `AsyncSequence` with a bounded buffer that drops the oldest
///   frame when the application falls behind, and counts what it dropped.
///
/// Every source keeps the same rules for calls made from its own capture thread (its consumer
/// callback, or a task on its ``captureExecutor``): ``stop()`` there returns at once and
/// capture ends when the callback returns; ``release()`` there only stops (the device closes at
/// the next ``release()`` or when the source is freed); every other control call there throws
/// ``/MediaDevicesCore/MediaDevicesError/Code/invalidState``, since it would wait for the
/// thread it runs on.
///
/// Not subclassable outside MediaDevices: each source is a `final` subclass written on one
/// internal core.
// @unchecked Sendable: a non-final class cannot be checked by the compiler. Every stored
// property here is a `let` of a Sendable type, and the subclasses (final, in this module) keep
// to that.
public class VideoSource: @unchecked Sendable {
    /// The source's core, through its lifecycle.
    private let core: any SourceLifecycle
    /// The core's delivery, held here so that the frame members do not go through `core`.
    private let delivery: FrameDelivery

    /// A source run by `core`.
    init(core: some SourceLifecycle) {
        self.core = core
        delivery = core.delivery
    }

    deinit { core.release() }

    // MARK: What each source publishes (overridden by the subclasses; internal)

    /// The outcome of the last negotiation, read from the source's published state.
    var publishedNegotiation: FormatNegotiation? { nil }

    /// The orientation frames carry now; ``VideoOrientation/up`` unless the source says.
    var publishedOrientation: VideoOrientation { .up }

    // MARK: Lifecycle

    /// Opens the device and negotiates the format requested (``negotiation`` tells the
    /// outcome). A camera opens its V4L2 device (`VIDIOC_S_FMT`, `VIDIOC_S_PARM`); a PipeWire
    /// camera and the test pattern choose from the node's or their own formats; a screen opens
    /// its backend and grabs once (see ``ScreenSource`` for what each backend throws). Does
    /// nothing when already initialized.
    /// - Throws: the device's failure (``/MediaDevicesCore/MediaDevicesError/Code/notFound``,
    ///   ``/MediaDevicesCore/MediaDevicesError/Code/busy``,
    ///   ``/MediaDevicesCore/MediaDevicesError/Code/permissionDenied``,
    ///   ``/MediaDevicesCore/MediaDevicesError/Code/unsupportedFormat``, …);
    ///   ``/MediaDevicesCore/MediaDevicesError/Code/invalidState`` from this source's own
    ///   callback.
    public func initialize() throws(MediaDevicesError) { try core.initialize() }

    /// Does what ``initialize()`` does, as a call that waits without holding a thread of Swift's
    /// cooperative pool or the source's lock, and that task cancellation ends. It matters for a
    /// portal screen, whose user answers the portal's dialog (up to
    /// ``PortalOptions/responseTimeout``) and whose first picture is waited for on a thread of
    /// its own: prefer it to ``initialize()`` there, before ``start()``. Other sources wait for
    /// no person and no server to open, so for them it is ``initialize()``.
    /// - Throws: what ``initialize()`` throws; ``/MediaDevicesCore/MediaDevicesError/Code/cancelled``
    ///   when the task was cancelled while it waited (a portal's request and session are then
    ///   closed, nothing is left open).
    public func prepare() async throws(MediaDevicesError) { try await core.prepare() }

    /// Starts delivering frames from the source's own capture thread, initializing first if
    /// needed; does nothing while capturing. A camera's corresponding ioctls are
    /// `VIDIOC_REQBUFS`, `VIDIOC_QBUF` and `VIDIOC_STREAMON`.
    /// - Throws: what ``initialize()`` throws, or the failure to start; the ``frames(bufferSize:)`` sequences
    ///   then end with the error and the consumer hears it.
    public func start() throws(MediaDevicesError) { try core.start() }

    /// Stops delivering frames and waits for the capture thread to end; the device stays open
    /// and configured. Ends every ``frames(bufferSize:)`` sequence and tells the consumer, once. From this
    /// source's own callback it returns at once and capture ends when the callback returns.
    public func stop() { core.stop() }

    /// Stops and closes the device (a camera's file, a screen's card, X connection or portal
    /// session, a PipeWire camera's stream) and forgets the negotiated format. From this
    /// source's own callback it only stops: the device closes at the next ``release()`` or when
    /// the source is freed (the thread's own reference keeps it open until it lets go).
    public func release() { core.release() }

    /// Whether frames are being delivered.
    public var isCapturing: Bool { core.isCapturing }

    // MARK: Format

    /// The outcome of the last negotiation: what was asked, the format and rate in force, and
    /// what was adjusted and why; `nil` before ``initialize()`` and after ``release()``. A
    /// screen's format is its framebuffer's, at the rate asked for.
    public var negotiation: FormatNegotiation? { publishedNegotiation }

    /// The format and rate in force (from ``negotiation``), once initialized. A screen follows
    /// mode changes while capturing: each frame's own ``VideoFrame/format`` is the truth.
    public var captureSettings: CaptureSettings? {
        publishedNegotiation.map { CaptureSettings(format: $0.format, frameRate: $0.frameRate) }
    }

    /// The orientation frames carry now. A camera: the sensor's mounting rotation plus its
    /// ``CameraSource/orientationTracker``'s orientation. Others: ``VideoOrientation/up`` (the
    /// test pattern is drawn upright, framebuffers and X11 root windows are stored upright, and
    /// a PipeWire camera's frames carry the producer's transform as their own orientation).
    public var orientation: VideoOrientation { publishedOrientation }

    /// Changes the format to what `request` asks for, also while capturing: the run pauses,
    /// the new format is negotiated and the run resumes; consumers and ``frames(bufferSize:)`` sequences stay
    /// subscribed. If the new format cannot be set, the old one is put back (the run resumes
    /// with it) and the error is thrown. Initializes the source when it is not yet.
    ///
    /// A screen's pixel format and size are its framebuffer's: there only the frame rate
    /// applies (`nil` keeps the rate the source was made with), and a pixel format or size
    /// asked otherwise is reported in ``negotiation``'s adjustments (ask
    /// ``frames(bufferSize:output:)`` for another format or size).
    /// - Returns: the new ``negotiation``.
    /// - Throws: ``/MediaDevicesCore/MediaDevicesError/Code/unsupportedFormat`` (or the device's
    ///   failure) when the format cannot be set; ``/MediaDevicesCore/MediaDevicesError/Code/invalidState``
    ///   from this source's own callback.
    @discardableResult
    public func setFormat(_ request: FormatRequest) throws(MediaDevicesError) -> FormatNegotiation {
        try core.setFormat(request)
    }

    // MARK: Frames

    /// The callback consumer; replaceable at any time, also while capturing.
    public var consumer: (any VideoFrameConsumer)? {
        get { delivery.consumer }
        set { delivery.consumer = newValue }
    }

    /// A new asynchronous sequence of frames, with room for `bufferSize` frames before the oldest
    /// is dropped.
    ///
    /// When the application falls behind, the oldest waiting frame is dropped (AVFoundation's
    /// `alwaysDiscardsLateVideoFrames`) and counted in ``CaptureStatistics/queueDroppedFrames``. The
    /// sequence ends when the source stops, or when the reading task is cancelled, and throws the
    /// source's ``/MediaDevicesCore/MediaDevicesError`` when it fails.
    ///
    /// Frames of a camera's own format come on lease: the element is the driver's buffer, held
    /// until the loop body ends (see ``VideoFrameBuffer``), copied only when a lease would starve
    /// the driver (``CaptureStatistics/leasedFrames`` and ``CaptureStatistics/copiedFrames``
    /// count both). Screens lend the same way: a KMS screen its framebuffer, mapped or exported
    /// with ``ScreenSource/exportsDMABuf`` (live scanout memory, not a snapshot: copy the bytes for
    /// one), X11 its shared segments, the portal its PipeWire buffers. Converted sequences, and
    /// frames a source cannot lend (a KMS frame with the cursor blended in), give pooled copies.
    ///
    /// ```swift
    /// for try await frame in camera.frames() {
    ///     frame.withFrame { encoder.encode($0) }   // the driver's buffer, no copy
    /// }                                            // given back to the driver here
    /// ```
    ///
    /// Iterate it from one task at a time; make one sequence per reader.
    public func frames(bufferSize: Int = 4) -> some AsyncSequence<VideoFrameBuffer, MediaDevicesError> & Sendable {
        frameSequence(bufferSize: bufferSize)
    }

    /// A new asynchronous sequence of frames converted to `output` (format, size, rotation,
    /// mirroring) on the capture thread, as ``frames(bufferSize:)`` otherwise. Each sequence may
    /// ask for a different output. Frames that cannot be converted (corrupt JPEGs) are dropped and
    /// counted in ``statistics``. Screen sharing wants `OutputFormat(.argb)` or
    /// ``PixelFormat/nv12`` for encoders; give `output.size` to keep one size across a screen's
    /// mode changes.
    /// - Throws: `.unsupportedFormat` for an output the pipeline cannot produce.
    public func frames(bufferSize: Int = 4, output: OutputFormat) throws(MediaDevicesError)
        -> some AsyncSequence<VideoFrameBuffer, MediaDevicesError> & Sendable {
        try frameSequence(bufferSize: bufferSize, output: output)
    }

    /// ``frames(bufferSize:)`` as its concrete type, with the sequence's own counters (for the
    /// command-line tool and the tests).
    package func frameSequence(bufferSize: Int = 4) -> VideoFrames { delivery.makeFrames(bufferSize: bufferSize) }

    /// ``frames(bufferSize:output:)`` as its concrete type.
    package func frameSequence(bufferSize: Int = 4, output: OutputFormat) throws(MediaDevicesError) -> VideoFrames {
        try core.frames(bufferSize: bufferSize, output: output)
    }

    /// Runs the tasks that prefer it on this source's capture thread:
    /// `Task(executorPreference: source.captureExecutor) { for try await frame in source.frames() { … } }`
    /// reads frames with one wake-up per frame, no allocation and no task switch (see
    /// ``CaptureExecutor``). Make the task after ``start()``: from then on its jobs run on the
    /// capture thread; before, and after the run, they go to Swift's global executor. Cameras
    /// (``CameraSource``, ``PipeWireCameraSource``) run their capture loop a step at a time for
    /// such readers (a frame costs what a callback costs); the test pattern and screens, which
    /// draw or grab on a timer, run the readers' jobs on their thread right after each frame.
    public var captureExecutor: CaptureExecutor { delivery.executor }

    // MARK: What an operator watches

    /// Counters and measurements of the current or last run.
    public var statistics: CaptureStatistics { delivery.statistics }

    /// Where the source logs what an operator needs, with the device as metadata: capture
    /// started (or could not), its first frame with the format and how long it took, stopped
    /// with its delivered and dropped counts (a warning when frames were dropped), or ended by
    /// an error. `nil` (the default): nothing is logged. Never per frame.
    public var logger: Logger? {
        get { delivery.logger }
        set { delivery.logger = newValue }
    }

    /// How long capture may go without a frame while the device keeps streaming (a stalled
    /// sensor pipeline or driver, a paused or starved PipeWire node) before it ends with
    /// ``/MediaDevicesCore/MediaDevicesError/Code/timeout``: the frame sequences end with that
    /// error and the consumer hears ``VideoFrameConsumer/captureDidStop(error:)``. `nil` (the default): no limit (a camera
    /// may legitimately wait long, e.g. in the dark at long exposures). Takes effect at once,
    /// also while capturing. Cameras (``CameraSource``, ``PipeWireCameraSource``) watch it. The
    /// test pattern draws every frame itself and a screen that sends nothing is a still screen
    /// (counted in ``CaptureStatistics/unchangedFrames``), not a stall, so on those two it is
    /// kept but never ends capture.
    public var frameTimeout: Duration? {
        get { delivery.frameTimeout }
        set { delivery.frameTimeout = newValue }
    }
}
