import MediaDevicesCore
import Dispatch
import Foundation
import Glibc
import Synchronization

/// A built-in video source that runs anywhere: moving colour bars with a frame counter, or
/// white noise (like the seeds' white-noise capturer), paced by `CLOCK_MONOTONIC` on its own
/// thread, with the same members as a camera (``VideoSource``).
// @unchecked Sendable, as `VideoSource` (a subclass cannot be checked): every stored property is a
// `let` of a Sendable type; what changes lives behind the published state's lock and the core's.
public final class TestPatternSource: VideoSource, @unchecked Sendable {
    /// What the source draws.
    public enum Pattern: String, Sendable, CaseIterable, Encodable {
        /// 100% colour bars moving 4 pixels left per frame, with the frame number at the top left.
        case colorBars
        /// Random bytes in every plane.
        case noise
    }

    /// The rate used when the request names none.
    package static let defaultFrameRate = FrameRate(30)

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
    private struct State: RequestedFormat {
        var request: FormatRequest
        var negotiation: FormatNegotiation?
    }

    /// The device part: negotiation over `supportedFormats`, and the drawing thread.
    private struct Drawing: RequestNegotiating {
        let pattern: Pattern
        let state: PublishedState<State>

        func negotiate(_ asked: FormatRequest) throws(MediaDevicesError) -> FormatNegotiation {
            var request = asked
            if request.pixelFormat == nil { request.pixelFormat = .yuyv }
            if request.frameRate == nil { request.frameRate = TestPatternSource.defaultFrameRate }
            let choice = try FormatSelection.choose(request, from: TestPatternSource.supportedFormats, device: "testpattern")
            let format = VideoFormat(pixelFormat: choice.pixelFormat, width: choice.size.width, height: choice.size.height)
            return FormatNegotiation(request: asked, format: format, frameRate: choice.frameRate, adjustments: choice.adjustments)
        }

        func startRun(delivery: FrameDelivery) throws(MediaDevicesError) -> CaptureRun {
            guard let negotiation = state.withLock({ $0.negotiation }) else {
                throw MediaDevicesError(.invalidState, device: "testpattern", operation: "start", detail: "Initialize the source before starting it")
            }
            let pattern = self.pattern
            let rate = negotiation.frameRate ?? TestPatternSource.defaultFrameRate
            // `start()` returns once the thread runs the executor's jobs (see `captureExecutor`).
            let attached = DispatchSemaphore(value: 0)
            let run = try CaptureRun(name: "md-testpattern", delivery: delivery, loop: { wake, shouldStop in
                TestPatternSource.draw(format: negotiation.format, rate: rate, pattern: pattern, wake: wake, shouldStop: shouldStop,
                                       delivery: delivery, attached: { attached.signal() })
                return nil
            }, cleanup: { _ in })
            attached.wait()
            return run
        }
    }

    /// What is drawn.
    public let pattern: Pattern
    private let state: PublishedState<State>

    /// A source drawing `pattern` in the format `request` asks for (default YUYV 640x480 at 30 fps).
    public init(pattern: Pattern = .colorBars, request: FormatRequest = FormatRequest()) {
        self.pattern = pattern
        let state = PublishedState(State(request: request))
        self.state = state
        super.init(core: SourceCore(device: Drawing(pattern: pattern, state: state), label: "testpattern"))
    }

    /// The outcome of the negotiation over ``supportedFormats``.
    override var publishedNegotiation: FormatNegotiation? { state.withLock { $0.negotiation } }

    /// The drawing loop: one frame per interval at absolute deadlines (see `FramePacer`), running
    /// the executor's jobs (readers that prefer it) after each frame and while it waits;
    /// `attached` is called once they come to this thread.
    private static func draw(format: VideoFormat, rate: FrameRate, pattern: Pattern, wake: WakeUpEvent,
                             shouldStop: @escaping () -> Bool, delivery: FrameDelivery, attached: () -> Void) {
        let executor = delivery.executor
        executor.attach(wake: wake)
        attached()
        defer { executor.detach() }
        var renderer = PatternRenderer(format: format)
        // Frames are drawn in buffers lent to sequences (read in place, not copied).
        let buffers = TestPatternBuffers(size: format.imageSize)
        let formatID = LendableBuffer.newFormatID()
        let locations = format.planeLocations
        let planeSizes = zip(format.pixelFormat.layout?.planes ?? [], format.bytesPerRow).map { $0.rows(height: format.height) * $1 }
        let planes = UnsafeMutablePointer<UnsafeMutableRawPointer>.allocate(capacity: 3)
        defer { planes.deallocate() }
        let imageSize = format.imageSize
        var pacer = FramePacer(rate: rate, wake: wake, shouldStop: shouldStop, executor: executor)
        while let deadline = pacer.waitForNextFrame() {
            let sequence = pacer.sequence
            let drawn = buffers.drawable()
            let memory = buffers.buffer(drawn)
            for index in 0..<3 { planes[index] = memory + (index < locations.count ? locations[index].offset : 0) }
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
                                        plane0: plane(0), plane1: plane(1), plane2: plane(2), dmaBuf: nil,
                                        lendable: drawn < buffers.count ? LendableBuffer(lender: buffers, index: drawn, formatID: formatID) : nil))
            buffers.endDelivery()
            executor.runPending()
            pacer.frameDone()
        }
    }
}
