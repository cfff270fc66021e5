import MediaDevicesCore
import Dispatch
import Glibc

/// A video source whose frames the application makes: a camera's frames drawn on (an overlay, a
/// blur, a crop), pictures it renders, or frames from a decoder, handed over with
/// ``send(_:draw:)`` or ``send(timestamp:draw:)`` and delivered from the source's own capture
/// thread with the same members as a camera (``VideoSource``): consumers, sequences, statistics,
/// conversions. What GStreamer's `appsrc` is to a pipeline, and what a ``VirtualCamera``
/// publishes when other applications should see a processed camera.
///
/// ```swift
/// /// Draws a white line across each of the camera's frames and sends it on.
/// final class Overlay: VideoFrameConsumer {
///     weak let output: ApplicationSource?   // weak: the output holds the camera, which holds this
///     init(output: ApplicationSource) { self.output = output }
///     func consumeFrame(_ frame: VideoFrame) {
///         _ = try? output?.send(frame) { picture in
///             let luma = picture.plane(0)
///             for column in 0..<picture.format.width { luma.bytes[20 * luma.bytesPerRow + column] = 235 }
///         }
///     }
/// }
/// let camera = CameraSource(device: device, request: FormatRequest(pixelFormat: .yu12, size: Size(width: 640, height: 480)))
/// let processed = try ApplicationSource(format: VideoFormat(pixelFormat: .yu12, width: 640, height: 480), upstream: camera)
/// camera.consumer = Overlay(output: processed)
/// let virtual = VirtualCamera(source: processed, outputs: [.pipeWire(name: "Processed camera")])
/// try virtual.start()   // the camera runs only while someone reads the node
/// ```
///
/// **Frames.** Each sent frame is copied once, into a buffer of the source's (or drawn there from
/// nothing), and delivered on the capture thread; sequences read it on lease from that buffer,
/// as they read a camera's driver buffers. The source keeps one frame waiting: a frame sent
/// before the capture thread took the previous one replaces it, and the one replaced counts as
/// dropped (a sequence gap) in ``VideoSource/statistics``. Nothing is allocated per frame.
/// Frames sent while the source is not capturing are refused (`send` returns `false`), and so
/// is a frame whose run stopped while it was being sent. One frame is made at a time, with no
/// lock held while `draw` runs: a `send` from another thread (or from inside `draw`) while one
/// is drawing returns `false` at once, and that frame is dropped.
///
/// **Upstream.** With `upstream`, ``start()`` starts that source after this one, and ``stop()``
/// and ``release()`` stop it after this one (a format change keeps it running), so a processed
/// camera runs only while this source runs (with a ``VirtualCamera`` on demand: only while
/// someone reads). Give the upstream a consumer that sends its frames here (a consumer outlives
/// runs; a sequence ends with each). It is stopped, not released, with this source; calling this
/// source's ``stop()`` from the upstream's consumer is safe.
///
/// **Format.** One format, fixed when made: ``format``'s pixel format and size at ``frameRate``
/// (the rate it announces; frames come when they are sent). A format request for another pixel
/// format or size is adjusted back to it, as a camera adjusts what it cannot do.
// @unchecked Sendable, as `VideoSource` (a subclass cannot be checked): every stored property is a
// `let` of a Sendable type; what changes lives behind the published state's lock, the buffers'
// locks and the core's.
public final class ApplicationSource: VideoSource, @unchecked Sendable {
    /// The format of every frame (tightly packed: no row padding).
    public let format: VideoFormat
    /// The frame rate the source announces (to a ``VirtualCamera``'s outputs, in its negotiation).
    public let frameRate: FrameRate
    /// The source started and stopped with this one, if any.
    public let upstream: VideoSource?

    private let state: PublishedState<State>
    private let buffers: ApplicationFrameBuffers
    private let layout: ApplicationFrameLayout
    /// Signalled by `send` for the capture thread.
    private let ready: WakeUpEvent

    /// The requested format and the outcome of its negotiation, for readers on any thread.
    private struct State: RequestedFormat {
        var request: FormatRequest
        var negotiation: FormatNegotiation?
    }

    /// A source of frames in `format` (its pixel format and size; made tightly packed), which
    /// announces `frameRate`, started and stopped with `upstream` when there is one.
    /// - Throws: ``/MediaDevicesCore/MediaDevicesError/Code/unsupportedFormat`` for a compressed
    ///   format (MJPEG: send decoded frames) or an empty size;
    ///   ``/MediaDevicesCore/MediaDevicesError/Code/tooManyOpenFiles`` when no descriptor is left
    ///   for its wake-up event.
    public init(format: VideoFormat, frameRate: FrameRate = FrameRate(30), upstream: VideoSource? = nil) throws(MediaDevicesError) {
        guard format.pixelFormat.layout != nil, !format.pixelFormat.isCompressed, format.width > 0, format.height > 0 else {
            throw MediaDevicesError(.unsupportedFormat, device: "application", operation: "ApplicationSource.init",
                                    detail: "\(format) is not an uncompressed format of some size",
                                    remedy: "Send decoded frames: ask the upstream for them with frames(output:) or a FrameConverter")
        }
        let packed = VideoFormat(pixelFormat: format.pixelFormat, width: format.width, height: format.height,
                                 colorimetry: format.colorimetry)
        self.format = packed
        self.frameRate = frameRate
        self.upstream = upstream
        layout = ApplicationFrameLayout(format: packed)
        buffers = ApplicationFrameBuffers(size: layout.size)
        ready = try WakeUpEvent()
        let state = PublishedState(State(request: FormatRequest(pixelFormat: packed.pixelFormat, size: packed.size, frameRate: frameRate)))
        self.state = state
        super.init(core: SourceCore(device: Producing(format: packed, frameRate: frameRate, state: state, buffers: buffers,
                                                      layout: layout, ready: ready),
                                    label: "application"))
    }

    deinit { upstream?.stop() }

    /// Starts delivering the frames sent from now on, then the upstream (see ``VideoSource/start()``).
    /// - Throws: what ``VideoSource/start()`` throws, or the upstream's failure to start (this
    ///   source is stopped again then).
    public override func start() throws(MediaDevicesError) {
        try super.start()
        do {
            try upstream?.start()
        } catch {
            super.stop()
            throw error
        }
    }

    /// Stops delivering frames (see ``VideoSource/stop()``), then stops the upstream.
    public override func stop() {
        super.stop()
        upstream?.stop()
    }

    /// Stops and forgets the negotiated format (see ``VideoSource/release()``), then stops the upstream.
    public override func release() {
        super.release()
        upstream?.stop()
    }

    /// The outcome of the negotiation: always ``format`` at ``frameRate``.
    override var publishedNegotiation: FormatNegotiation? { state.withLock { $0.negotiation } }

    /// Copies `frame` (of ``format``'s pixel format and size; its rows may be padded) into a
    /// buffer of the source, lets `draw` change the copy in place, and hands it to the capture
    /// thread with the frame's timestamp. Call it from any thread
    /// (a camera's consumer callback: the frame's planes are read before it returns).
    /// - Returns: `false` when the source is not capturing (nothing is copied), when another
    ///   send is drawing now, or when the source stopped while the frame was being sent (it is
    ///   not delivered).
    /// - Throws: ``/MediaDevicesCore/MediaDevicesError/Code/unsupportedFormat`` when the frame's
    ///   pixel format or size is not ``format``'s, or its planes are fewer or shorter than the
    ///   format needs.
    @discardableResult
    public func send(_ frame: VideoFrame, draw: ((inout WritableFrame) -> Void)? = nil) throws(MediaDevicesError) -> Bool {
        let layout = self.layout
        func refuse(_ detail: String) -> MediaDevicesError {
            MediaDevicesError(.unsupportedFormat, device: "application", operation: "ApplicationSource.send", detail: detail,
                              remedy: "Convert the frames first: frames(output: OutputFormat(...)) on the upstream, or a FrameConverter")
        }
        guard frame.format.pixelFormat == format.pixelFormat, frame.width == format.width, frame.height == format.height else {
            throw refuse("The frame is \(frame.format); this source takes \(format)")
        }
        guard frame.planeCount >= layout.planeCount else {
            throw refuse("The frame has \(frame.planeCount) planes; \(format) has \(layout.planeCount)")
        }
        for index in 0..<layout.planeCount {
            let plane = frame.plane(index), rowBytes = layout.bytesPerRow[index], rows = layout.rows[index]
            guard plane.bytes.baseAddress != nil, plane.bytesPerRow >= rowBytes,
                  plane.bytes.count >= (rows - 1) * plane.bytesPerRow + rowBytes else {
                throw refuse("Plane \(index) of the frame holds \(plane.bytes.count) bytes in rows of \(plane.bytesPerRow); \(format) needs \(rows) rows of \(rowBytes)")
            }
        }
        return submit(timestamp: frame.timestamp) { target in
            // Every plane checked above: whole rows of at least the packed row's bytes.
            for index in 0..<layout.planeCount {
                let source = frame.plane(index), rowBytes = layout.bytesPerRow[index]
                let from = source.bytes.baseAddress!, to = target + layout.offsets[index]
                if source.bytesPerRow == rowBytes {
                    to.copyMemory(from: from, byteCount: layout.sizes[index])
                } else {
                    for row in 0..<layout.rows[index] {
                        (to + row * rowBytes).copyMemory(from: from + row * source.bytesPerRow, byteCount: rowBytes)
                    }
                }
            }
            if let draw {
                var picture = WritableFrame(format: format, timestamp: frame.timestamp, base: target, layout: layout)
                draw(&picture)
            }
        }
    }

    /// Makes a frame from nothing: `draw` writes every plane of a buffer of the source (its
    /// previous contents are undefined), which is handed to the capture thread at `timestamp`.
    /// Call it from any thread.
    /// - Returns: `false` when the source is not capturing or another send is drawing now
    ///   (`draw` is not called), or when it stopped while `draw` ran (the frame is not delivered).
    @discardableResult
    public func send(timestamp: MonotonicInstant = .now,
                     draw: (inout WritableFrame) -> Void) -> Bool {
        let format = self.format, layout = self.layout
        return submit(timestamp: timestamp) { target in
            var picture = WritableFrame(format: format, timestamp: timestamp, base: target, layout: layout)
            draw(&picture)
        }
    }

    /// Fills a buffer with `body` and stages it for the capture thread, if a run takes frames.
    private func submit(timestamp: MonotonicInstant, _ body: (UnsafeMutableRawPointer) -> Void) -> Bool {
        guard case .staged = buffers.fill(timestamp: timestamp.nanoseconds, body) else { return false }
        ready.signal()
        return true
    }

    /// The device part: the one format, and the delivering thread.
    private struct Producing: RequestNegotiating {
        let format: VideoFormat
        let frameRate: FrameRate
        let state: PublishedState<State>
        let buffers: ApplicationFrameBuffers
        let layout: ApplicationFrameLayout
        let ready: WakeUpEvent

        func negotiate(_ asked: FormatRequest) throws(MediaDevicesError) -> FormatNegotiation {
            var adjustments: [FormatAdjustment] = []
            if let pixelFormat = asked.pixelFormat, pixelFormat != format.pixelFormat {
                adjustments.append(FormatAdjustment(field: .pixelFormat, requested: "\(pixelFormat)", chosen: "\(format.pixelFormat)",
                                                    reason: "an application source has the one format it was made with"))
            }
            if let size = asked.size, size != format.size {
                adjustments.append(FormatAdjustment(field: .size, requested: "\(size)", chosen: "\(format.size)",
                                                    reason: "an application source has the one size it was made with"))
            }
            if let rate = asked.frameRate, rate != frameRate {
                adjustments.append(FormatAdjustment(field: .frameRate, requested: "\(rate)", chosen: "\(frameRate)",
                                                    reason: "an application source announces the rate it was made with; frames come as they are sent"))
            }
            return FormatNegotiation(request: asked, format: format, frameRate: frameRate, adjustments: adjustments)
        }

        func startRun(delivery: FrameDelivery) throws(MediaDevicesError) -> CaptureRun {
            let format = self.format, layout = self.layout, buffers = self.buffers, ready = self.ready
            ready.reset()
            buffers.startAccepting()
            let attached = DispatchSemaphore(value: 0)
            do {
                let run = try CaptureRun(name: "md-application", delivery: delivery, loop: { wake, shouldStop in
                    ApplicationSource.deliver(format: format, layout: layout, buffers: buffers, ready: ready, wake: wake,
                                              shouldStop: shouldStop, delivery: delivery, attached: { attached.signal() })
                    return nil
                }, cleanup: { _ in buffers.stopAccepting() })
                attached.wait()
                return run
            } catch {
                buffers.stopAccepting()
                throw error
            }
        }
    }

    /// The capture thread: waits for a staged frame (running the executor's jobs at wake-ups),
    /// and delivers it from the ring's buffer it was moved into; one frame per wait, so a sender
    /// faster than the delivery cannot keep the thread from seeing a stop.
    private static func deliver(format: VideoFormat, layout: ApplicationFrameLayout, buffers: ApplicationFrameBuffers,
                                ready: WakeUpEvent, wake: WakeUpEvent, shouldStop: @escaping () -> Bool,
                                delivery: FrameDelivery, attached: () -> Void) {
        let executor = delivery.executor
        executor.attach(wake: wake)
        attached()
        defer { executor.detach() }
        let formatID = LendableBuffer.newFormatID()
        // The pacer's rate does not matter: only its wait for a change is used.
        var pacer = FramePacer(rate: FrameRate(30), wake: wake, shouldStop: shouldStop, executor: executor)
        func plane(_ index: Int, _ base: UnsafeMutableRawPointer) -> FramePlane {
            guard index < layout.planeCount else { return .empty }
            return FramePlane(bytes: UnsafeRawBufferPointer(start: base + layout.offsets[index], count: layout.sizes[index]),
                              bytesPerRow: layout.bytesPerRow[index])
        }
        while true {
            switch pacer.waitOnceForChange(on: ready.descriptor, timeoutMilliseconds: 1000) {
            case .stop: return
            case .woken: executor.runPending(); continue
            case .changed, .due: ready.reset()
            }
            // A frame staged after the reset signalled `ready` again: the next wait returns at once.
            if let taken = buffers.take() {
                let now = MonotonicClock.now()
                delivery.deliver(VideoFrame(format: format, timestamp: MonotonicInstant(nanoseconds: taken.timestamp), sequence: taken.sequence,
                                            orientation: .up,
                                            captureDelay: .nanoseconds(Int64(truncatingIfNeeded: now &- taken.timestamp)),
                                            planeCount: min(layout.planeCount, 3), bytesUsed: layout.size,
                                            plane0: plane(0, taken.buffer), plane1: plane(1, taken.buffer), plane2: plane(2, taken.buffer),
                                            dmaBuf: nil,
                                            lendable: taken.index < buffers.count ? LendableBuffer(lender: buffers, index: taken.index, formatID: formatID) : nil))
                buffers.endDelivery()
                executor.runPending()
            }
        }
    }
}
