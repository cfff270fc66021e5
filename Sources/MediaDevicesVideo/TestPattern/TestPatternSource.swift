import Logging
import MediaDevicesCore
import Foundation
import Glibc
import Synchronization

/// A built-in video source that runs anywhere: moving colour bars with a frame counter, or
/// white noise (like the seeds' white-noise capturer), paced by `CLOCK_MONOTONIC` on its own
/// thread, with the same capturer contract, consumers and statistics as a camera.
public final class TestPatternSource: VideoCapturer, Sendable {
    /// What the source draws.
    public enum Pattern: String, Sendable, CaseIterable, Codable {
        /// 100% colour bars moving 4 pixels left per frame, with the frame number at the top left.
        case colorBars
        /// Random bytes in every plane.
        case noise
    }

    /// The rate used when the request names none.
    public static let defaultFrameRate = FrameRate(30)

    /// The formats the source can produce: each renderer format at any even size from 16x16 to
    /// 3840x2160, at any rate from 1 to 120 fps.
    public static let supportedFormats: [CaptureFormat] = PatternRenderer.formats.map { format in
        CaptureFormat(pixelFormat: format, description: "\(format.name) test pattern", isCompressed: false, isEmulated: false,
                      frameSizes: [FrameSizeOption(sizes: .stepwise(min: Size(width: 16, height: 16),
                                                                    max: Size(width: 3840, height: 2160),
                                                                    step: Size(width: 2, height: 2)),
                                                   frameRateRanges: [FrameRateRange(minInterval: Fraction(1, 120),
                                                                                    maxInterval: Fraction(1, 1), step: nil)])])
    }

    /// The requested format and the outcome of its negotiation, for readers on any thread.
    private struct State {
        var request: FormatRequest
        var negotiation: FormatNegotiation?
    }

    /// The device part: negotiation over `supportedFormats`, and the drawing thread.
    private struct Drawing: SourceDevice {
        let pattern: Pattern
        let state: PublishedState<State>

        func open() throws(MediaDevicesError) {
            if state.withLock({ $0.negotiation }) != nil { return }
            let asked = state.withLock { $0.request }
            var request = asked
            if request.pixelFormat == nil { request.pixelFormat = .yuyv }
            if request.frameRate == nil { request.frameRate = TestPatternSource.defaultFrameRate }
            let choice = try FormatSelection.choose(request, from: TestPatternSource.supportedFormats, device: "testpattern")
            let format = VideoFormat(pixelFormat: choice.pixelFormat, width: choice.size.width, height: choice.size.height)
            let negotiation = FormatNegotiation(request: asked, format: format, frameRate: choice.frameRate,
                                                adjustments: choice.adjustments)
            state.withLock { $0.negotiation = negotiation }
        }

        func startRun(delivery: FrameDelivery) throws(MediaDevicesError) -> CaptureRun {
            guard let negotiation = state.withLock({ $0.negotiation }) else {
                throw MediaDevicesError(.invalidState, device: "testpattern", operation: "start", detail: "Initialize the source before starting it")
            }
            let pattern = self.pattern
            let rate = negotiation.frameRate ?? TestPatternSource.defaultFrameRate
            return try CaptureRun(name: "md-testpattern", delivery: delivery, loop: { wake, _ in
                TestPatternSource.draw(format: negotiation.format, rate: rate, pattern: pattern, wake: wake, delivery: delivery)
                return nil
            }, cleanup: { _ in })
        }

        func close() { state.withLock { $0.negotiation = nil } }
    }

    /// What is drawn.
    public let pattern: Pattern
    private let state: PublishedState<State>
    private let core: SourceCore<Drawing>

    /// A source drawing `pattern` in the format `request` asks for (default YUYV 640x480 at 30 fps).
    public init(pattern: Pattern = .colorBars, request: FormatRequest = FormatRequest()) {
        self.pattern = pattern
        let state = PublishedState(State(request: request))
        self.state = state
        core = SourceCore(device: Drawing(pattern: pattern, state: state), label: "testpattern")
    }

    deinit { core.release() }

    /// The outcome of the negotiation over ``supportedFormats``.
    public var negotiation: FormatNegotiation? { state.withLock { $0.negotiation } }

    /// Chooses the format. Not from this source's own callback
    /// (``/MediaDevicesCore/MediaDevicesError/Code/invalidState``).
    public func initialize() throws(MediaDevicesError) { try core.initialize() }

    /// Starts drawing and delivering frames. If it fails, the `frames` sequences end with the error.
    public func start() throws(MediaDevicesError) { try core.start() }

    /// Stops and waits for the drawing thread to end; ends every `frames` sequence. From this
    /// source's own callback it returns at once and drawing ends when the callback returns.
    public func stop() { core.stop() }

    /// Stops and forgets the negotiated format. From this source's own callback it only stops.
    public func release() { core.release() }

    /// Changes the format, also while running; consumers stay subscribed. If the new format
    /// cannot be made, the old one stays and the error is thrown. Not from this source's own
    /// callback.
    @discardableResult
    public func setFormat(_ request: FormatRequest) throws(MediaDevicesError) -> FormatNegotiation {
        try core.withControl("setFormat") { drawing, control in
            let wasRunning = control.pauseRun()
            let old = state.withLock { ($0.request, $0.negotiation) }
            state.withLock { $0.request = request; $0.negotiation = nil }
            do {
                try drawing.open()
            } catch {
                state.withLock { $0.request = old.0; $0.negotiation = old.1 }
                if wasRunning { try control.resumeRun(drawing) }
                throw error
            }
            if wasRunning { try control.resumeRun(drawing) }
            return state.withLock { $0.negotiation! }
        }
    }

    /// Whether frames are being delivered.
    public var isCapturing: Bool { core.isCapturing }

    /// The format and rate in force.
    public var captureSettings: CaptureSettings? {
        state.withLock { $0.negotiation.map { CaptureSettings(format: $0.format, frameRate: $0.frameRate) } }
    }

    /// Always ``VideoOrientation/up``: the pattern is drawn upright.
    public var orientation: VideoOrientation { .up }

    /// The callback consumer.
    public var consumer: (any VideoFrameConsumer)? {
        get { core.delivery.consumer }
        set { core.delivery.consumer = newValue }
    }

    /// A new asynchronous sequence of frames (see ``VideoFrames``).
    public func frames(bufferSize: Int = 4) -> VideoFrames { core.frames(bufferSize: bufferSize) }

    /// A new asynchronous sequence of frames converted to `output`; see ``VideoCapturer``.
    public func frames(bufferSize: Int = 4, output: OutputFormat) throws(MediaDevicesError) -> VideoFrames {
        try core.frames(bufferSize: bufferSize, output: output)
    }

    /// Counters of the current or last run.
    public var statistics: CaptureStatistics { core.delivery.statistics }

    /// Where the source logs what an operator needs, with the device as metadata: capture
    /// started (or could not), its first frame with the format and how long it took, stopped
    /// with its delivered and dropped counts (a warning when frames were dropped), or ended by
    /// an error. `nil` (the default): nothing is logged. Never per frame.
    public var logger: Logger? {
        get { core.delivery.logger }
        set { core.delivery.logger = newValue }
    }

    /// The drawing loop: one frame per interval at absolute deadlines (see `FramePacer`).
    private static func draw(format: VideoFormat, rate: FrameRate, pattern: Pattern, wake: WakeUpEvent, delivery: FrameDelivery) {
        var renderer = PatternRenderer(format: format)
        let memory = UnsafeMutableRawPointer.allocate(byteCount: max(format.imageSize, 8), alignment: 64)
        defer { memory.deallocate() }
        let locations = format.planeLocations
        let planeSizes = zip(format.pixelFormat.layout?.planes ?? [], format.bytesPerRow).map { $0.rows(height: format.height) * $1 }
        let planes = UnsafeMutablePointer<UnsafeMutableRawPointer>.allocate(capacity: 3)
        defer { planes.deallocate() }
        for index in 0..<3 { planes[index] = memory + (index < locations.count ? locations[index].offset : 0) }
        let imageSize = format.imageSize
        var pacer = FramePacer(rate: rate, wake: wake)
        while let deadline = pacer.waitForNextFrame() {
            let sequence = pacer.sequence
            switch pattern {
            case .colorBars: renderer.drawBars(index: sequence, planes: planes)
            case .noise: renderer.drawNoise(planes: planes, planeSizes: planeSizes)
            }
            let delivered = MonotonicClock.now()
            func plane(_ index: Int) -> FramePlane {
                guard index < planeSizes.count else { return .empty }
                return FramePlane(bytes: UnsafeRawBufferPointer(start: planes[index], count: planeSizes[index]),
                                  bytesPerRow: format.bytesPerRow[index])
            }
            delivery.deliver(VideoFrame(format: format, timestamp: MonotonicInstant(nanoseconds: deadline), sequence: UInt32(truncatingIfNeeded: sequence),
                                        orientation: .up, captureDelay: .nanoseconds(Int64(delivered - deadline)),
                                        planeCount: min(planeSizes.count, 3), bytesUsed: imageSize,
                                        plane0: plane(0), plane1: plane(1), plane2: plane(2)))
            pacer.frameDone()
        }
    }
}
