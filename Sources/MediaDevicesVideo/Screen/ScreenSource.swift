import Logging
import MediaDevicesCore
import Foundation
import Synchronization

/// Screen sharing: frames of a screen, paced at the requested rate (15 fps by default, as the
/// seeds' screen capturer), with monotonic timestamps and the same members as a camera
/// (``VideoSource``), through one of three backends (``Screen/backend``):
///
/// - **KMS**, below any compositor: what a DRM/KMS output scans out, grabbed from the primary
///   plane's framebuffer (`GETFB2`, dumb-buffer map or PRIME).
/// - **X11**: a RandR monitor of an X server, grabbed with MIT-SHM into one shared segment (a
///   memfd where the server speaks MIT-SHM 1.2, so a client in its own IPC namespace, such as a
///   container, works too; else System V); DAMAGE skips grabs when nothing changed (counted in
///   ``CaptureStatistics/unchangedFrames``, no frame delivered twice), and the cursor comes from XFIXES.
/// - **Portal**, in a Wayland session: the xdg-desktop-portal ScreenCast portal asks the user
///   which monitor or window to share (once: the restore token brings the choice back), and
///   the compositor streams it through PipeWire, a picture only when something changed
///   (counted in ``CaptureStatistics/unchangedFrames`` as on X11); the cursor is embedded by the compositor.
///
/// ``ScreenSource/discover(backend:)`` lists the portal's source types when `WAYLAND_DISPLAY` is set and the portal
/// answers, else the X server's monitors when `DISPLAY` is set and answers, else the KMS
/// outputs; given a backend, it asks that one.
///
/// Frames come in the framebuffer's own format (usually `XBGR32`, DRM XRGB8888; always that on
/// X11), zero-copy: the planes point into the scanout buffer (or the shared segment) for the
/// duration of the callback, and for as long as a `frames` sequence's element is held (a KMS
/// frame is a live view of the scanout, mapped or exported: the compositor may draw into it
/// meanwhile; copy the bytes for a snapshot); ask
/// ``VideoSource/frames(bufferSize:output:)`` (or wrap the consumer in a ``ConvertingConsumer``) for ARGB or
/// NV12. A mode change while capturing is followed: frames go on at the new size.
/// ``exportsDMABuf`` (KMS) makes frames carry the framebuffer's PRIME export as ``VideoFrame/dmaBuf``.
///
/// KMS grabs at every deadline. X11 (without the cursor) and the portal are told of changes:
/// between them the capture thread sleeps until one comes (waking once a second as a safety
/// net), so a still screen costs about no CPU; the rate still caps delivery.
///
/// Reading another program's framebuffer (KMS) needs `CAP_SYS_ADMIN` or being the DRM master; without either,
/// ``VideoSource/initialize()`` throws ``/MediaDevicesCore/MediaDevicesError/Code/permissionDenied`` saying
/// how to grant it. X11 needs only a connection to the server.
///
/// ``VideoSource/initialize()`` (or ``VideoSource/prepare()``) opens the card (KMS) or connects to the X
/// server (X11) and grabs once, to learn the format and check the privilege. KMS throws
/// ``/MediaDevicesCore/MediaDevicesError/Code/permissionDenied`` (with the remedy) when framebuffers cannot
/// be read, ``/MediaDevicesCore/MediaDevicesError/Code/unsupportedFormat`` for tiled or compressed
/// framebuffers, ``/MediaDevicesCore/MediaDevicesError/Code/invalidState`` when the output is off. X11 throws
/// ``/MediaDevicesCore/MediaDevicesError/Code/notFound`` when the X server does not answer,
/// ``/MediaDevicesCore/MediaDevicesError/Code/disconnected`` when the monitor is gone,
/// ``/MediaDevicesCore/MediaDevicesError/Code/unsupportedFormat`` without MIT-SHM, DAMAGE or XFIXES.
/// While capturing, both follow mode changes; an output turned off (KMS) or a monitor removed (X11) gives
/// no frames, and sequence gaps, until it is back. The portal asks the user (or restores an earlier
/// choice) and waits for the first picture: ``/MediaDevicesCore/MediaDevicesError/Code/notFound`` without
/// a portal (the detail names what to install),
/// ``/MediaDevicesCore/MediaDevicesError/Code/permissionDenied`` when the user cancels the dialog,
/// ``/MediaDevicesCore/MediaDevicesError/Code/timeout`` when no answer or picture comes in time; a shared
/// screen or window that goes away while capturing ends the capture with
/// ``/MediaDevicesCore/MediaDevicesError/Code/disconnected``. ``VideoSource/release()`` closes the card,
/// the X connection or the portal session.
///
/// A screen's format is its framebuffer's: ``VideoSource/setFormat(_:)`` changes the rate only (the
/// pixel format and size asked for are reported as adjustments; ask
/// ``VideoSource/frames(bufferSize:output:)`` for ARGB, NV12 or another size).
// @unchecked Sendable, as `VideoSource` (a subclass cannot be checked): every stored property is a
// `let` of a Sendable type; what changes lives behind the published state's lock and the core's.
public final class ScreenSource: VideoSource, @unchecked Sendable {
    /// The rate used when none is given: 15 fps, the seeds' screen-sharing rate.
    package static let defaultFrameRate = FrameRate(15)

    /// The screens of the screen-cast portal on the session bus at `busAddress` (a D-Bus address,
    /// `unix:path=…`; the environment's session bus when `nil`): one per source type it offers. Throws
    /// ``/MediaDevicesCore/MediaDevicesError/Code/notFound``, naming what to install, when no portal answers
    /// there.
    public static func portalScreens(busAddress: String? = nil) throws(MediaDevicesError) -> [Screen] {
        #if PipeWire
        try PortalScreens.screens(address: busAddress)
        #else
        throw BuildTraits.missingPipeWire(device: "portal", operation: "enumerate portal screens")
        #endif
    }

    /// The RandR monitors of the X server on `display` (`DISPLAY` when `nil`), as screens of the X11 backend.
    /// Throws ``/MediaDevicesCore/MediaDevicesError/Code/notFound`` when no X server answers there.
    public static func x11Screens(display: String? = nil) throws(MediaDevicesError) -> [Screen] {
        #if X11
        try X11Monitors.screens(display: display)
        #else
        throw BuildTraits.missingX11(device: display, operation: "enumerate X11 monitors")
        #endif
    }


    /// The screen captured.
    public let screen: Screen
    /// Frames per second: the rate the source was made with, or the one ``VideoSource/setFormat(_:)``
    /// set since.
    public var frameRate: FrameRate { state.withLock { $0.frameRate } }
    /// The part of the screen delivered (screen coordinates, cut to the screen); `nil`: all of it.
    public let region: Rect?
    /// Whether the cursor is blended into the frames: KMS, the cursor plane's image
    /// (XRGB8888/ARGB8888 screens); X11, the XFIXES cursor image; portal, embedded by the
    /// compositor (when the portal offers it; else hidden).
    public let showsCursor: Bool
    /// How framebuffers are mapped (KMS only; `.automatic` for sources an app makes).
    package let mapping: FramebufferMapping
    /// Whether a grab that finds the screen unchanged since the last frame delivers nothing
    /// (counted in ``CaptureStatistics/unchangedFrames``), as screen sharing wants; `false` gives
    /// a frame at every deadline, as a constant-rate file wants. X11 and the portal track changes.
    public let skipsUnchangedFrames: Bool
    /// Whether frames carry the screen's framebuffer as a DMA-BUF (``VideoFrame/dmaBuf``: the PRIME
    /// descriptor, the DRM fourcc and modifier from `GETFB2`, the pitch and the offset of the region's first
    /// pixel) for encoders, EGL, Vulkan or GStreamer to import without a copy. KMS only, on drivers with
    /// PRIME export (virtio-gpu, i915, amdgpu; not bochs): ``VideoSource/initialize()`` throws
    /// ``/MediaDevicesCore/MediaDevicesError/Code/unsupportedFormat`` otherwise, and on X11 and portal
    /// screens. The DMA-BUF is the live scanout buffer, not a snapshot; its descriptor belongs to the source
    /// and is valid during the callback (`dup` it to keep it). `frames` sequences lease the framebuffer, as
    /// they lease a mapped one without this option: a held frame keeps it mapped and exported (across mode changes, stop and
    /// release) until let go, and reads it live, without `DMA_BUF_IOCTL_SYNC` (use
    /// ``DMABufPlane/withCPUAccess(_:)`` where caches are not coherent). Frames with the cursor blended in
    /// are copies and carry none. The pixels are then read through the same export (the grab between
    /// `DMA_BUF_IOCTL_SYNC` start and end).
    public let exportsDMABuf: Bool
    /// How the portal is asked (portal screens only).
    public let portalOptions: PortalOptions

    // @unchecked Sendable: the grabber is used by one thread at a time: the capture thread, or one `grabFrame` (marked in `state`).
    private final class Grabbing: @unchecked Sendable {
        let grabber: any ScreenGrabbing
        init(_ grabber: any ScreenGrabbing) { self.grabber = grabber }
    }

    private struct State {
        var grabbing: Grabbing?
        /// The rate frames are paced at.
        var frameRate: FrameRate
        /// The format asked for (only its rate applies) and its outcome while open.
        var request: FormatRequest
        var negotiation: FormatNegotiation?
        /// A `grabFrame` is using the grabber (outside the control lock): capture may not start
        /// and another `grabFrame` may not use it until it returns.
        var grabbingOnce = false
    }

    /// The device part: opens the backend's grabber and runs the paced capture loop.
    private struct Grab: SourceDevice {
        let screen: Screen
        /// The rate a request without one gets: the one the source was made with.
        let frameRate: FrameRate
        let region: Rect?
        let showsCursor: Bool
        let mapping: FramebufferMapping
        let skipsUnchangedFrames: Bool
        let exportsDMABuf: Bool
        let portal: PortalOptions
        let state: PublishedState<State>
        /// The source's delivery, for its logger (the portal's request and answer are logged once
        /// the control lock is released).
        let delivery: FrameDelivery

        func open() throws(MediaDevicesError) {
            if state.withLock({ $0.grabbing }) != nil { return }
            install(try prepare())
        }

        static var preparingThreadName: String { "md-screen-open" }

        /// Makes the grabber (for the portal: waits for the user and the first picture) unless
        /// the screen is open.
        func prepareOpen() throws(MediaDevicesError) -> Prepared? {
            if state.withLock({ $0.grabbing }) != nil { return nil }
            return try prepare()
        }

        /// A grabber and the framebuffer's format, made by `prepare()`.
        struct Prepared: Sendable {
            let grabbing: Grabbing
            let format: VideoFormat
        }

        /// Publishes a prepared grabber, unless one is open already (then `prepared` is let go).
        func install(_ prepared: Prepared) {
            state.withLock { state in
                guard state.grabbing == nil else { return }
                state.grabbing = prepared.grabbing
                state.negotiation = ScreenSource.negotiation(of: state.request, format: prepared.format, frameRate: state.frameRate)
            }
        }

        var savedFormat: (request: FormatRequest, frameRate: FrameRate, negotiation: FormatNegotiation?) {
            state.withLock { ($0.request, $0.frameRate, $0.negotiation) }
        }

        /// Opens the screen if needed and paces frames at `request`'s rate (the source's own
        /// when it names none); the framebuffer's format stays.
        func applyFormat(_ request: FormatRequest) throws(MediaDevicesError) -> FormatNegotiation {
            let rate = request.frameRate ?? frameRate
            guard rate.framesPerSecond.numerator > 0, rate.framesPerSecond.denominator > 0 else {
                throw MediaDevicesError(.unsupportedFormat, device: screen.uniqueID, operation: "setFormat",
                                        detail: "A screen is grabbed at a rate above 0 fps; \(rate) was asked for",
                                        remedy: "Ask for a positive frame rate (FormatRequest(frameRate: FrameRate(15))), or none to keep the source's")
            }
            try open()
            return try state.withLock { state throws(MediaDevicesError) -> FormatNegotiation in
                guard let format = state.negotiation?.format else {
                    throw MediaDevicesError(.invalidState, device: screen.uniqueID, operation: "setFormat",
                                            detail: "The screen closed while its format was being set",
                                            remedy: "Initialize the source again (initialize() or start()), then set the format")
                }
                state.request = request
                state.frameRate = rate
                let negotiation = ScreenSource.negotiation(of: request, format: format, frameRate: rate)
                state.negotiation = negotiation
                return negotiation
            }
        }

        func restoreFormat(_ saved: (request: FormatRequest, frameRate: FrameRate, negotiation: FormatNegotiation?)) {
            state.withLock {
                $0.request = saved.request
                $0.frameRate = saved.frameRate
                if $0.grabbing != nil { $0.negotiation = saved.negotiation }
            }
        }

        /// Makes the backend's grabber and grabs once, to learn the format and check the
        /// privilege; publishes nothing. For the portal this waits for the user and the first
        /// picture (cancellable: `WaitCancellation`).
        func prepare() throws(MediaDevicesError) -> Prepared {
            if let region, region.width <= 0 || region.height <= 0 {
                throw MediaDevicesError(.invalidState, device: screen.uniqueID, operation: "capture region",
                                        detail: "The region \(region.width)x\(region.height) is empty; give a width and height of at least 1")
            }
            if exportsDMABuf && screen.backend != .kms {
                let why = screen.backend == .x11 ? "X11 screens are read through MIT-SHM, which has no DMA-BUF"
                    : "portal screens come in shared-memory buffers here (DMA-BUF from PipeWire is not supported yet)"
                throw MediaDevicesError(.unsupportedFormat, device: screen.uniqueID, operation: "export DMA-BUF",
                                        detail: why, remedy: "Capture without exportsDMABuf, or grab the KMS output (ScreenSource.discover(backend: .kms))")
            }
            let grabber: any ScreenGrabbing = switch screen.backend {
            case .kms: try makeKMSGrabber()
            case .x11: try ScreenSource.makeX11Grabber(screen: screen, region: region, showsCursor: showsCursor)
            case .portal:
                // Held, not logged: `open()` runs under the control lock, and a log handler is the
                // application's code; the source logs them once the lock is released.
                try ScreenSource.makePortalGrabber(screen: screen, region: region, showsCursor: showsCursor, options: portal,
                                                   owner: delivery, log: delivery.logAfterControl)
            }
            var format: VideoFormat?
            guard try grabber.grab(timestamp: .now, sequence: 0, onlyIfChanged: false, { format = $0.format }) == .delivered,
                  let format else {
                // The operation each backend's first grab really is.
                let operation = switch screen.backend {
                case .kms: "DRM_IOCTL_MODE_GETCRTC"
                case .x11: "ShmGetImage"
                case .portal: "first portal frame"
                }
                throw MediaDevicesError(.invalidState, device: screen.uniqueID, operation: operation,
                                        detail: "\(screen.name) shows no picture (it is off or blanked) or the region lies outside it",
                                        remedy: "Turn it on, or choose a region inside it")
            }
            return Prepared(grabbing: Grabbing(grabber), format: format)
        }

        /// Opens the card and finds the screen's connector as it is now.
        private func makeKMSGrabber() throws(MediaDevicesError) -> ScreenGrabber {
            let card = try DRMCard(path: screen.card)
            // The screen as it is now (its CRTC and planes may have changed since enumeration).
            guard let current = try card.screens().first(where: { $0.connectorID == screen.connectorID }) else {
                throw MediaDevicesError(.disconnected, device: screen.uniqueID, operation: "find connector",
                                        detail: "\(screen.name) is no longer connected",
                                        remedy: "ScreenSource.discover() lists the screens there are now")
            }
            return try ScreenGrabber(card: card, screen: current, region: region, showsCursor: showsCursor, method: mapping,
                                    exportsDMABuf: exportsDMABuf)
        }

        func startRun(delivery: FrameDelivery) throws(MediaDevicesError) -> CaptureRun {
            let (open, busy, rate) = state.withLock { ($0.grabbing, $0.grabbingOnce, $0.frameRate) }
            if busy {
                throw MediaDevicesError(.invalidState, device: screen.uniqueID, operation: "start",
                                        detail: "A grabFrame on this source is still running; start after it returns (not from its closure)")
            }
            guard let grabbing = open else {
                throw MediaDevicesError(.invalidState, device: screen.uniqueID, operation: "start",
                                        detail: "The screen is not open; initialize the source first")
            }
            let skips = skipsUnchangedFrames
            // `start()` returns once the thread runs the executor's jobs (see `captureExecutor`).
            let attached = DispatchSemaphore(value: 0)
            let run = try CaptureRun(name: "md-screen", delivery: delivery, loop: { wake, shouldStop in
                ScreenPump(grabber: grabbing.grabber, rate: rate, skipsUnchanged: skips, wake: wake, shouldStop: shouldStop,
                           delivery: delivery).run(wake: wake) { attached.signal() }
            }, cleanup: { _ in })
            attached.wait()
            return run
        }

        func close() { state.withLock { $0.grabbing = nil; $0.negotiation = nil } }
    }

    private let state: PublishedState<State>
    /// The core, for ``grabFrame(_:)``.
    private let core: SourceCore<Grab>

    /// A source for `screen` at `frameRate`, optionally cut to `region`, with the cursor,
    /// delivering unchanged pictures again (`skipsUnchangedFrames: false`), exporting the
    /// framebuffer as DMA-BUF (`exportsDMABuf`, KMS only); a portal screen is asked for as
    /// `portal` says (restore token, waits).
    public convenience init(screen: Screen, frameRate: FrameRate = FrameRate(15), region: Rect? = nil,
                            showsCursor: Bool = false, skipsUnchangedFrames: Bool = true,
                            exportsDMABuf: Bool = false, portal: PortalOptions = PortalOptions()) {
        self.init(screen: screen, frameRate: frameRate, region: region, showsCursor: showsCursor, mapping: .automatic,
                  skipsUnchangedFrames: skipsUnchangedFrames, exportsDMABuf: exportsDMABuf, portal: portal)
    }

    /// A source that maps KMS framebuffers only as `mapping` says (for the tests and the
    /// command-line tool: `.automatic` tries the dumb-buffer map, then PRIME).
    package init(screen: Screen, frameRate: FrameRate = ScreenSource.defaultFrameRate, region: Rect? = nil,
                 showsCursor: Bool = false, mapping: FramebufferMapping, skipsUnchangedFrames: Bool = true,
                 exportsDMABuf: Bool = false, portal: PortalOptions = PortalOptions()) {
        self.portalOptions = portal
        self.screen = screen
        self.region = region
        self.showsCursor = showsCursor
        self.mapping = mapping
        self.skipsUnchangedFrames = skipsUnchangedFrames
        self.exportsDMABuf = exportsDMABuf
        let state = PublishedState(State(frameRate: frameRate, request: FormatRequest(frameRate: frameRate)))
        self.state = state
        let delivery = FrameDelivery()
        let grab = Grab(screen: screen, frameRate: frameRate, region: region, showsCursor: showsCursor, mapping: mapping,
                        skipsUnchangedFrames: skipsUnchangedFrames, exportsDMABuf: exportsDMABuf, portal: portal, state: state,
                        delivery: delivery)
        let core = SourceCore(device: grab, label: screen.uniqueID, delivery: delivery)
        self.core = core
        super.init(core: core)
    }

    /// The framebuffer's format at the rate asked for.
    override var publishedNegotiation: FormatNegotiation? { state.withLock { $0.negotiation } }

    /// The negotiation of `request` on a screen whose framebuffer is in `format`, paced at
    /// `frameRate`: a pixel format or size asked otherwise is an adjustment.
    fileprivate static func negotiation(of request: FormatRequest, format: VideoFormat, frameRate: FrameRate) -> FormatNegotiation {
        var adjustments: [FormatAdjustment] = []
        if let asked = request.pixelFormat, asked != format.pixelFormat {
            adjustments.append(FormatAdjustment(field: .pixelFormat, requested: asked.name, chosen: format.pixelFormat.name,
                                                reason: "A screen's frames come in its framebuffer's format; ask frames(bufferSize:output:) for another"))
        }
        if let asked = request.size, asked != format.size {
            adjustments.append(FormatAdjustment(field: .size, requested: "\(asked)", chosen: "\(format.size)",
                                                reason: "A screen's frames have its mode's size (or the region's); ask frames(bufferSize:output:) for another"))
        }
        return FormatNegotiation(request: request, format: format, frameRate: frameRate, adjustments: adjustments)
    }

    /// Grabs one frame now and lends it to `body` (a screenshot); initializes first if needed. Not while
    /// capturing (use the consumer or `frames` then): throws
    /// ``/MediaDevicesCore/MediaDevicesError/Code/invalidState``. `body` runs without the source's lock: it
    /// may read the source and call ``VideoSource/release()`` (the screen is let go when the grab returns); ``VideoSource/start()``
    /// and another ``grabFrame(_:)`` from it throw ``/MediaDevicesCore/MediaDevicesError/Code/invalidState``,
    /// as they do from other threads until this grab returns. An error `body` throws comes out as a
    /// ``/MediaDevicesCore/MediaDevicesError`` whose ``/MediaDevicesCore/MediaDevicesError/underlying`` is
    /// that error.
    public func grabFrame<R>(_ body: (VideoFrame) throws -> R) throws(MediaDevicesError) -> R {
        // The grabber is taken under the control lock and marked in use; the grab and `body` run
        // outside it, so that `body` may call this source (a `release()` lets the grabber go
        // only when this grab has returned: the local reference keeps it open meanwhile).
        let grabbing = try core.withControl("grabFrame") { grab, control -> Grabbing in
            if control.isRunning {
                throw MediaDevicesError(.invalidState, device: screen.uniqueID, operation: "grabFrame",
                                        detail: "The source is capturing; take frames from its consumer or `frames` sequence, or stop it first")
            }
            try grab.open()
            return try state.withLock { state throws(MediaDevicesError) -> Grabbing in
                guard !state.grabbingOnce, let grabbing = state.grabbing else {
                    throw MediaDevicesError(.invalidState, device: screen.uniqueID, operation: "grabFrame",
                                            detail: "Another grabFrame on this source is running; grab again after it returns (not from its closure)")
                }
                state.grabbingOnce = true
                return grabbing
            }
        }
        defer { state.withLock { $0.grabbingOnce = false } }
        var result: Result<R, any Error>?
        let outcome: ScreenGrabOutcome
        do {
            outcome = try grabbing.grabber.grab(timestamp: .now, sequence: 0, onlyIfChanged: false) { frame in result = Result { try body(frame) } }
        } catch {
            throw MediaDevicesError.converting(error, device: screen.uniqueID, operation: "grabFrame")
        }
        guard outcome == .delivered, let result else {
            throw MediaDevicesError(.invalidState, device: screen.uniqueID, operation: "grabFrame",
                                    detail: "\(screen.name) shows no framebuffer now (off or blanked)")
        }
        return try MediaDevicesError.catching(device: screen.uniqueID, operation: "grabFrame's body") { try result.get() }
    }

    /// The token that brings back the user's portal choice in a later session without asking
    /// (give it as ``PortalOptions/restoreToken``; it is also kept for this process and in
    /// ``PortalOptions/restoreTokenFile``); `nil` before initialization, on other backends, and
    /// when the portal does not persist choices.
    public var portalRestoreToken: String? {
        #if PipeWire
        portalGrabber?.restoreToken
        #else
        nil
        #endif
    }

    #if PipeWire
    /// The portal grabber while initialized (tests).
    var portalGrabber: PortalScreenGrabber? { state.withLock { $0.grabbing }?.grabber as? PortalScreenGrabber }

    /// The portal session's object path while one is open (tests watch it close).
    var portalSessionHandle: String? { portalGrabber?.sessionHandle }
    #endif

    /// The screen as the backend sees it now: for the portal, with the size of what the user
    /// chose (``screen`` is the one asked for); `nil` before initialization.
    public var currentScreen: Screen? { state.withLock { $0.grabbing }?.grabber.screen }

    /// The framebuffer grabbed last (id, format, modifier, pitch, mapping method); `nil` on X11.
    package var framebuffer: FramebufferDescription? { (state.withLock { $0.grabbing }?.grabber as? ScreenGrabber)?.framebuffer }
}

extension ScreenSource {
    /// What `screen` offers now, in the format list shape cameras use: its framebuffer's
    /// format at the current mode's size, at 1 to 60 fps (grabs are paced, not driven by the
    /// display's refresh). Needs the same privilege as capturing; on the portal, it asks the
    /// user (or restores the choice) as capturing does.
    public static func currentFormats(_ screen: Screen) throws(MediaDevicesError) -> [CaptureFormat] {
        let source = ScreenSource(screen: screen)
        defer { source.release() }
        try source.initialize()
        guard let format = source.captureSettings?.format else { return [] }
        let rates = FrameRateRange(minInterval: Fraction(1, 60), maxInterval: Fraction(1, 1), step: nil)
        return [CaptureFormat(pixelFormat: format.pixelFormat, description: "\(format.pixelFormat.name) framebuffer of \(screen.name)",
                              isCompressed: false, isEmulated: false,
                              frameSizes: [FrameSizeOption(sizes: .discrete(format.size), frameRateRanges: [rates])])]
    }
}
