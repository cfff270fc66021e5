import Foundation
import Glibc
import Synchronization

/// A built-in video source that runs anywhere: moving colour bars with a frame counter, or
/// white noise (like the seeds' white-noise capturer), paced by `CLOCK_MONOTONIC` on its own
/// thread, with the same capturer contract, consumers and statistics as a camera.
public final class TestPatternSource: VideoCapturer, @unchecked Sendable {
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

    private struct State {
        var request: FormatRequest
        var negotiation: FormatNegotiation?
    }

    /// What is drawn.
    public let pattern: Pattern
    private let delivery = FrameDelivery()
    /// Serializes control calls; held while waiting for the drawing thread, which never takes it.
    private let control = NSLock()
    private let state: Mutex<State>
    private let run = RunSlot()

    /// A source drawing `pattern` in the format `request` asks for (default YUYV 640x480 at 30 fps).
    public init(pattern: Pattern = .colorBars, request: FormatRequest = FormatRequest()) {
        self.pattern = pattern
        state = Mutex(State(request: request))
    }

    deinit { release() }

    /// The outcome of the negotiation over `supportedFormats`.
    public var negotiation: FormatNegotiation? { state.withLock { $0.negotiation } }

    private func refuseOnCaptureThread(_ operation: String) throws {
        try run.refuseOnCaptureThread(device: "testpattern", operation: operation)
    }

    /// Chooses the format.
    public func initialize() throws {
        control.lock(); defer { control.unlock() }
        try initializeLocked()
    }

    private func initializeLocked() throws {
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

    /// Starts drawing and delivering frames. If it fails, the `frames` sequences end with the error.
    public func start() throws {
        try refuseOnCaptureThread("start")
        control.lock(); defer { control.unlock() }
        if run.isRunning { return }
        _ = run.stop(restarting: false)  // a run that ended by itself: wait until it let go
        do {
            try initializeLocked()
            delivery.beginRun()
            try startRunLocked()
        } catch let error as MediaDevicesError {
            delivery.finish(error: error)
            throw error
        }
    }

    private func startRunLocked() throws {
        let negotiation = state.withLock { $0.negotiation! }
        let (delivery, pattern) = (self.delivery, self.pattern)
        let rate = negotiation.frameRate ?? TestPatternSource.defaultFrameRate
        run.current = try CaptureRun(name: "md-testpattern", delivery: delivery, loop: { wake, _ in
            TestPatternSource.draw(format: negotiation.format, rate: rate, pattern: pattern, wake: wake, delivery: delivery)
            return nil
        }, cleanup: { _ in })
    }

    /// Stops and waits for the drawing thread to end; ends every `frames` sequence. From this
    /// source's own callback it returns at once and drawing ends when the callback returns.
    public func stop() {
        if let current = run.current, current.isCurrentThread {
            current.stop()
            return
        }
        control.lock()
        let stopped = run.stop(restarting: false)
        control.unlock()
        if !stopped { delivery.finish(error: nil) }
    }

    /// Stops and forgets the negotiated format.
    public func release() {
        stop()
        state.withLock { $0.negotiation = nil }
    }

    /// Changes the format, also while running; consumers stay subscribed. If the new format
    /// cannot be made, the old one stays and the error is thrown. Not from this source's own
    /// callback.
    @discardableResult
    public func setFormat(_ request: FormatRequest) throws -> FormatNegotiation {
        try refuseOnCaptureThread("setFormat")
        control.lock(); defer { control.unlock() }
        let wasRunning = run.stop(restarting: true)
        let old = state.withLock { ($0.request, $0.negotiation) }
        state.withLock { $0.request = request; $0.negotiation = nil }
        do {
            try initializeLocked()
        } catch {
            state.withLock { $0.request = old.0; $0.negotiation = old.1 }
            if wasRunning { try startRunLocked() }
            throw error
        }
        delivery.streamRestarted()
        if wasRunning { try startRunLocked() }
        return state.withLock { $0.negotiation! }
    }

    /// Whether frames are being delivered.
    public var isCapturing: Bool { run.isRunning }

    /// The format and rate in force.
    public var captureSettings: CaptureSettings? {
        state.withLock { $0.negotiation.map { CaptureSettings(format: $0.format, frameRate: $0.frameRate) } }
    }

    /// Always `.up`: the pattern is drawn upright.
    public var orientation: VideoOrientation { .up }

    /// The callback consumer.
    public var consumer: (any VideoFrameConsumer)? {
        get { delivery.consumer }
        set { delivery.consumer = newValue }
    }

    /// A new asynchronous sequence of frames (see `VideoFrames`).
    public func frames(bufferSize: Int = 4) -> VideoFrames { delivery.makeFrames(bufferSize: bufferSize) }

    /// A new asynchronous sequence of frames converted to `output`; see `VideoCapturer`.
    public func frames(bufferSize: Int = 4, output: OutputFormat) throws -> VideoFrames {
        delivery.makeFrames(bufferSize: bufferSize, converter: try FrameConverter(output: output, device: "testpattern"))
    }

    /// Counters of the current or last run.
    public var statistics: CaptureStatistics { delivery.statistics }

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
            delivery.deliver(VideoFrame(format: format, timestamp: deadline, sequence: UInt32(truncatingIfNeeded: sequence),
                                        orientation: .up, captureDelay: .nanoseconds(Int64(delivered - deadline)),
                                        planeCount: min(planeSizes.count, 3), bytesUsed: imageSize,
                                        plane0: plane(0), plane1: plane(1), plane2: plane(2)))
            pacer.frameDone()
        }
    }
}
