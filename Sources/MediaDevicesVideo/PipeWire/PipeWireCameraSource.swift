import Logging
#if PipeWire
import MediaDevicesCore
import CPipeWire
import Glibc

/// A camera read through a PipeWire session's camera node rather than its V4L2 device:
/// shared with the other applications reading the node, and the only way to libcamera
/// cameras. The same capturer contract, consumers and statistics as ``CameraSource``. Built on
/// `SourceCore`; this file is only the device part: format negotiation over the node's
/// `EnumFormat` entries and the stream (`PipeWireCapture`) on a capture thread of its own.
public final class PipeWireCameraSource: VideoCapturer, Sendable {
    /// The node read, the requested format and the outcome of its negotiation, for readers on
    /// any thread.
    private struct State {
        var node: PipeWireCameraNode
        var request: FormatRequest
        var negotiation: FormatNegotiation?
    }

    /// The device part: negotiation over the node's formats, and the stream's capture thread.
    private struct Stream: SourceDevice {
        let label: String
        let state: PublishedState<State>

        func open() throws(MediaDevicesError) {
            if state.withLock({ $0.negotiation }) != nil { return }
            let (node, asked) = state.withLock { ($0.node, $0.request) }
            let choice = try FormatSelection.choose(asked, from: node.formats, device: label)
            var adjustments = choice.adjustments
            if !node.givesFrameRates, asked.frameRate != nil {
                adjustments.append(FormatAdjustment(field: .frameRate, requested: "\(asked.frameRate!)", chosen: "the camera's own rate",
                                                    reason: "This PipeWire node (\(node.name)) lists no frame rates (libcamera nodes in PipeWire 0.3.65 give none), so none can be asked for"))
            }
            let format = VideoFormat(pixelFormat: choice.pixelFormat, width: choice.size.width, height: choice.size.height)
            state.withLock {
                $0.negotiation = FormatNegotiation(request: asked, format: format, frameRate: choice.frameRate, adjustments: adjustments)
            }
        }

        func startRun(delivery: FrameDelivery) throws(MediaDevicesError) -> CaptureRun {
            let (node, negotiation) = state.withLock { ($0.node, $0.negotiation) }
            guard let negotiation else {
                throw MediaDevicesError(.invalidState, device: label, operation: "start", detail: "Initialize the source before starting it")
            }
            let format = negotiation.format
            var request = cpw_stream_request()
            request.subtype = format.pixelFormat.isCompressed
                ? (format.pixelFormat.fourCC == "H264" ? CPW_SUBTYPE_H264 : CPW_SUBTYPE_MJPG).rawValue : CPW_SUBTYPE_RAW.rawValue
            request.spa_format = node.spaFormat(of: format.pixelFormat)
            request.width = UInt32(format.width)
            request.height = UInt32(format.height)
            if let rate = negotiation.frameRate {
                request.rate_num = UInt32(rate.framesPerSecond.numerator)
                request.rate_denom = UInt32(rate.framesPerSecond.denominator)
            }
            let capture = try PipeWireCapture(cameraNode: node.id, request: request, fd: try node.remote.open(), device: label)
            return try CaptureRun(name: "md-pipewire-cam", delivery: delivery, loop: { wake, shouldStop in
                PipeWireCameraSource.pump(capture, format: format, leases: PipeWireBufferLeases(wake: wake), wake: wake,
                                          shouldStop: shouldStop, delivery: delivery, label: label)
            }, cleanup: { _ in capture.close() })
        }

        func close() { state.withLock { $0.negotiation = nil } }
    }

    /// The PipeWire node read (another one after `resumeWhenReconnected`).
    public var node: PipeWireCameraNode { state.withLock { $0.node } }
    /// The camera's identifier (``CaptureDevice/uniqueID``), which outlives its node.
    package let uniqueID: String
    private let state: PublishedState<State>
    private let core: SourceCore<Stream>

    /// A source reading `device` through its first PipeWire route, in the format `request` asks for (chosen
    /// from the node's formats as ``CameraSource`` chooses from the driver's). Throws
    /// ``/MediaDevicesCore/MediaDevicesError/Code/notFound`` when the device has no PipeWire route (list it
    /// with ``CaptureDevice/discover(backends:pipeWireTimeout:logger:)`` including
    /// ``CaptureBackend/pipewire``).
    public convenience init(device: CaptureDevice, request: FormatRequest = FormatRequest()) throws(MediaDevicesError) {
        guard let node = device.pipeWireNodes.first else {
            throw MediaDevicesError(.notFound, device: device.uniqueID, operation: "PipeWire camera",
                                    detail: "\(device.name) has no PipeWire route; list cameras with CaptureDevice.discover(backends: [.pipewire]) while a PipeWire session (pipewire and wireplumber) runs")
        }
        self.init(node: node, uniqueID: device.uniqueID, request: request)
    }

    /// A source reading camera node `node` in the format `request` asks for.
    public convenience init(node: PipeWireCameraNode, request: FormatRequest = FormatRequest()) {
        self.init(node: node, uniqueID: CaptureDevice.identifier(of: node, stableLink: CaptureDevice.stableLink(for:)), request: request)
    }

    private init(node: PipeWireCameraNode, uniqueID: String, request: FormatRequest) {
        self.uniqueID = uniqueID
        let state = PublishedState(State(node: node, request: request))
        self.state = state
        let label = node.label
        core = SourceCore(device: Stream(label: label, state: state), label: label)
    }

    /// Reads `node` from the next start (the same camera's node made again); not while capturing.
    package func select(_ node: PipeWireCameraNode) { state.withLock { $0.node = node } }

    deinit { core.release() }

    /// The outcome of the negotiation over the node's formats.
    public var negotiation: FormatNegotiation? { state.withLock { $0.negotiation } }

    /// Chooses the format. Not from this source's own callback
    /// (``/MediaDevicesCore/MediaDevicesError/Code/invalidState``).
    public func initialize() throws(MediaDevicesError) { try core.initialize() }

    /// Connects a stream to the node and starts delivering frames. If it fails, the `frames`
    /// sequences end with the error.
    public func start() throws(MediaDevicesError) { try core.start() }

    /// Stops and waits for the capture thread to end, disconnecting the stream; ends every
    /// `frames` sequence. From this source's own callback it returns at once.
    public func stop() { core.stop() }

    /// Stops and forgets the negotiated format. From this source's own callback it only stops.
    public func release() { core.release() }

    /// Whether frames are being delivered.
    public var isCapturing: Bool { core.isCapturing }

    /// The format and rate in force.
    public var captureSettings: CaptureSettings? {
        state.withLock { $0.negotiation.map { CaptureSettings(format: $0.format, frameRate: $0.frameRate) } }
    }

    /// ``VideoOrientation/up``: frames carry the producer's VideoTransform as their own orientation.
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

    /// How long capture may go without a frame while the node stays running (a stalled camera, a paused or
    /// starved node) before it ends with ``/MediaDevicesCore/MediaDevicesError/Code/timeout``: the frame
    /// sequences end with that error and the consumer hears `captureDidStop`. `nil` (the default): no limit.
    /// Takes effect at once, also while capturing. The same option as ``CameraSource/frameTimeout``.
    public var frameTimeout: Duration? {
        get { core.delivery.frameTimeout }
        set { core.delivery.frameTimeout = newValue }
    }

    /// The node's controls with their values now (read again from the session: its PropInfo and Props params;
    /// see ``PipeWireCameraNode/controls``). PipeWire 0.3.65's nodes give no values: where the node wraps a
    /// V4L2 device this process may open, the values are read from that device; otherwise they are `.none`.
    /// Throws ``/MediaDevicesCore/MediaDevicesError/Code/notFound`` when the node is gone.
    public func controls() throws(MediaDevicesError) -> [CameraControl] { try node.controlsWithValues() }

    /// Changes to the node's controls as they happen, made by any program (this source's ``setControls(_:)``,
    /// `pw-cli set-param`, `v4l2-ctl`), with the ids and keys ``controls()`` gives: the same sequence as
    /// ``CaptureDevice/controlChanges()``. PipeWire 0.3.65's nodes announce no control change, so they are
    /// watched on the V4L2 device the node wraps; ``/MediaDevicesCore/MediaDevicesError/Code/notFound``
    /// (naming why) for a node without one this process may open, such as a libcamera node.
    public func controlChanges() throws(MediaDevicesError) -> ControlChanges { try node.controlChanges() }

    /// Sets the controls `settings` name (by id, a ``CameraControl/id`` of ``controls()``, or by name)
    /// through the node's Props, without stopping the stream. Every setting is checked first, and nothing is
    /// set when one fails: ``/MediaDevicesCore/MediaDevicesError/Code/notFound`` for a control the node does
    /// not list, ``/MediaDevicesCore/MediaDevicesError/Code/invalidValue`` for a value outside its range or
    /// menu. Then each is set in turn; ``/MediaDevicesCore/MediaDevicesError/Code/io`` when PipeWire does not
    /// take one.
    public func setControls(_ settings: [ControlSetting]) throws(MediaDevicesError) { try node.apply(settings) }

    /// Sets control `id` (a ``CameraControl/id`` of ``controls()``) to `value` as ``setControls(_:)`` does.
    public func setControl(_ id: UInt32, to value: Int64) throws(MediaDevicesError) {
        try node.apply([ControlSetting(id: id, value: .integer(value))])
    }

    /// The capture loop: sleeps in the stream's data loop (`PipeWireCapture.wait`: its graph
    /// cycles run here, so one thread wakes per frame, in one system call), which also wakes for
    /// the stream's main loop (state changes, the node going away) and the wake-up event (a stop,
    /// or a give-back); delivers each newest buffer, lendable to sequences (`leases`) when it is
    /// in a mapping of our own (memfd, DMA-BUF), and gives back the buffers whose leases ended.
    /// Allocates nothing per frame (the frame's format is made again only when the stride or
    /// size changes; no generic collection calls such as `first`, which allocate in debug builds).
    private static func pump(_ capture: PipeWireCapture, format negotiated: VideoFormat, leases: PipeWireBufferLeases,
                             wake: WakeUpEvent, shouldStop: () -> Bool, delivery: FrameDelivery, label: String) -> MediaDevicesError? {
        // Closes the stream before the leases learn the run is over (the stream lets every lent
        // buffer go first, leaving its mapping to them).
        defer {
            capture.close()
            leases.endRun()
        }
        capture.watch(wake.descriptor)
        var format = negotiated
        var locations = format.planeLocations
        var sequence: UInt32 = 0
        var formatID = LendableBuffer.newFormatID()
        while !shouldStop() {
            let ready = capture.wait(timeoutMilliseconds: 1000)
            if ready.contains(.watched) {
                wake.reset()  // a stop (seen above), or a give-back: every give-back signals after setting its mark
                leases.returnGivenBack { capture.returnBuffer($0) }
            }
            let (picture, isNew) = ready.contains(.buffer) ? capture.newest() : (cpw_frame(), false)
            do {
                if ready.contains(.loop) { try capture.iterate(timeoutMilliseconds: 0) }
                try capture.throwIfEnded()
            } catch { return error }
            guard isNew, let data = picture.data else {
                if let stalled = delivery.stall(device: label) { return stalled }
                continue
            }
            let timestamp = MonotonicInstant.now
            if Int(picture.width) != format.width || Int(picture.height) != format.height
                || (picture.stride > 0 && (format.bytesPerRow.isEmpty || Int(picture.stride) != format.bytesPerRow[0])) {
                format = layout(of: picture, pixelFormat: negotiated.pixelFormat, colorimetry: negotiated.colorimetry)
                locations = format.planeLocations
                formatID = LendableBuffer.newFormatID()
            }
            let size = Int(picture.size)
            let bytes = UnsafeRawBufferPointer(start: data, count: size)
            let planeCount = format.pixelFormat.isCompressed ? 1 : min(format.bytesPerRow.count, 3)
            func plane(_ index: Int) -> FramePlane {
                guard index < planeCount, index < locations.count, locations[index].offset < size else { return .empty }
                let offset = locations[index].offset
                return FramePlane(bytes: UnsafeRawBufferPointer(rebasing: bytes[offset...]), bytesPerRow: format.bytesPerRow[index])
            }
            let orientation = VideoOrientation(rotationDegrees: Int(rotation(picture.transform))) ?? .up
            let slot = Int(picture.slot)
            if slot >= 0 { leases.beginDelivery(slot: slot, mapping: picture.mapping, withProducer: capture.buffersWithProducer,
                                                      buffers: capture.bufferCount) }
            delivery.deliver(VideoFrame(format: format, timestamp: timestamp, sequence: sequence, orientation: orientation,
                                        captureDelay: .zero, planeCount: planeCount, bytesUsed: size,
                                        plane0: plane(0), plane1: plane(1), plane2: plane(2), dmaBuf: nil,
                                        lendable: slot >= 0 ? LendableBuffer(lender: leases, index: slot, formatID: formatID) : nil))
            if slot >= 0, leases.endDelivery(slot: slot) { capture.lend() }
            sequence &+= 1
        }
        return nil
    }

    /// The frame layout of `picture`: its size (narrowed to what a row holds when the stride
    /// is shorter than the announced width), and its stride for plane 0 with the other planes'
    /// strides derived as V4L2 derives them (packed when the producer gave none).
    private static func layout(of picture: cpw_frame, pixelFormat: PixelFormat, colorimetry: Colorimetry) -> VideoFormat {
        let packed = VideoFormat(pixelFormat: pixelFormat, width: Int(picture.width), height: Int(picture.height), colorimetry: colorimetry)
        guard picture.stride > 0, let layout = pixelFormat.layout, !layout.isCompressed else { return packed }
        let first = Int(picture.stride)
        // A producer whose rows are shorter than its format's width says (libcamera through
        // PipeWire 0.3.65 announces the 640 asked for and sends vimc's 636-pixel rows): the
        // rows are the truth, so the width is what one row holds.
        var width = Int(picture.width)
        while width > 1 && layout.planes[0].minimumBytesPerRow(width: width) > first { width -= 1 }
        let strides = layout.planes.map { $0.bytesPerRow(luminanceBytesPerRow: first, luminance: layout.planes[0]) }
        let size = zip(layout.planes, strides).map { $0.rows(height: Int(picture.height)) * $1 }.reduce(0, +)
        return VideoFormat(pixelFormat: pixelFormat, width: width, height: Int(picture.height),
                           bytesPerRow: strides, bufferSizes: [size], colorimetry: colorimetry)
    }

    /// The rotation PipeWire's VideoTransform meta gives (SPA_META_TRANSFORMATION_90 and so on,
    /// read as WebRTC reads them: the rotation that shows the picture upright; the flipped ones
    /// count as their rotation).
    private static func rotation(_ transform: UInt32) -> UInt32 { (transform & 3) * 90 }
}
#endif
