#if PipeWire
import MediaDevicesCore
import Dispatch
import CPipeWire
import Glibc

/// A camera read through a PipeWire session's camera node rather than its V4L2 device:
/// shared with the other applications reading the node, and the only way to libcamera
/// cameras. The same members as ``CameraSource`` (``VideoSource``). Built on `SourceCore`;
/// this file is only the device part: format negotiation over the node's `EnumFormat` entries
/// and the stream (`PipeWireCapture`) on a capture thread of its own.
// @unchecked Sendable, as `VideoSource` (a subclass cannot be checked): every stored property is a
// `let` of a Sendable type; what changes lives behind the published state's lock and the core's.
public final class PipeWireCameraSource: VideoSource, @unchecked Sendable {
    /// The node read, the requested format and the outcome of its negotiation, for readers on
    /// any thread.
    private struct State: RequestedFormat {
        var node: PipeWireCameraNode
        var request: FormatRequest
        var negotiation: FormatNegotiation?
    }

    /// The device part: negotiation over the node's formats, and the stream's capture thread.
    private struct Stream: RequestNegotiating {
        let label: String
        let state: PublishedState<State>

        func negotiate(_ asked: FormatRequest) throws(MediaDevicesError) -> FormatNegotiation {
            let node = state.withLock { $0.node }
            let choice = try FormatSelection.choose(asked, from: node.formats, device: label)
            var adjustments = choice.adjustments
            if !node.givesFrameRates, asked.frameRate != nil {
                adjustments.append(FormatAdjustment(field: .frameRate, requested: "\(asked.frameRate!)", chosen: "the camera's own rate",
                                                    reason: "This PipeWire node (\(node.name)) lists no frame rates (libcamera nodes in PipeWire 0.3.65 give none), so none can be asked for"))
            }
            let format = VideoFormat(pixelFormat: choice.pixelFormat, width: choice.size.width, height: choice.size.height)
            return FormatNegotiation(request: asked, format: format, frameRate: choice.frameRate, adjustments: adjustments)
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
            // `start()` returns once the thread runs the executor's jobs, as a V4L2 camera's does:
            // a task made then with `captureExecutor` as its preference starts on the capture thread.
            let attached = DispatchSemaphore(value: 0)
            let run = try CaptureRun(name: "md-pipewire-cam", delivery: delivery, loop: { wake, shouldStop in
                let pump = PipeWireCameraPump(capture: capture, format: format, leases: PipeWireBufferLeases(wake: wake, owner: delivery), wake: wake,
                                              shouldStop: shouldStop, delivery: delivery, label: label)
                return pump.run(attached: { attached.signal() })
            }, cleanup: { _ in capture.close() })
            attached.wait()
            return run
        }
    }

    /// The PipeWire node read (another one after `resumeWhenReconnected`).
    public var node: PipeWireCameraNode { state.withLock { $0.node } }
    /// The camera's identifier (``CaptureDevice/uniqueID``), which outlives its node.
    package let uniqueID: String
    private let state: PublishedState<State>

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
        super.init(core: SourceCore(device: Stream(label: label, state: state), label: label))
    }

    /// Reads `node` from the next start (the same camera's node made again); not while capturing.
    package func select(_ node: PipeWireCameraNode) { state.withLock { $0.node = node } }

    /// The outcome of the negotiation over the node's formats.
    override var publishedNegotiation: FormatNegotiation? { state.withLock { $0.negotiation } }

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
    public func controlChanges() throws(MediaDevicesError) -> some AsyncSequence<ControlChange, Never> & Sendable {
        try node.controlChanges()
    }

    /// ``controlChanges()`` as its concrete type, which the tests stop.
    package func controlWatch() throws(MediaDevicesError) -> ControlChanges { try node.controlChanges() }

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

}
#endif
