#if PipeWire
import Logging
import MediaDevicesCore
import CPipeWire
import Glibc
import Synchronization

/// Grabs what the user shares through the Wayland screen-cast portal: CreateSession →
/// SelectSources (a monitor or a window, the cursor embedded or hidden, persisted with a
/// restore token) → Start → OpenPipeWireRemote, then a PipeWire stream of the chosen node. The
/// compositor sends a picture only when the screen changes (as X11 DAMAGE says); each grab
/// dispatches the stream's loop without waiting, keeps the newest buffer and lends it zero-copy
/// (BGRx in memory is `XBGR32`, as on X11), cut to `region`, to sequences too, as a PipeWire
/// camera lends its buffers (`PipeWireLending`): a buffer a sequence holds stays out of the
/// stream until its lease comes back (a give-back from another thread wakes the run's capture
/// thread, `attachRun`, which returns it; one on that thread waits for its next step; one
/// before the next grab only clears it). No new buffer since the last frame is `.unchanged`.
/// The portal backend of ``ScreenSource``; owns its bus connection, session and stream (which
/// live across the source's runs), and closes the session when released. Steady state allocates
/// nothing of its own.
final class PortalScreenGrabber: ScreenGrabbing {
    /// The screen as last seen: the capture thread replaces it when the monitor changes;
    /// `ScreenSource.currentScreen` reads it from any thread.
    var screen: Screen { current.withLock { $0 } }
    private let current: Mutex<Screen>
    /// The token that restores this choice in a later session without asking (`nil` when the
    /// portal does not persist, before version 4).
    let restoreToken: String?
    /// The portal session's object path.
    let sessionHandle: String
    /// The PipeWire node read.
    let nodeID: UInt32
    private let grant: PortalGrant
    private let capture: PipeWireCapture
    private let lending: PipeWireLending
    private let region: Rect?
    private var layout: Layout?
    private var hasPicture = false

    /// What a picture of one size, stride and format is lent as (kept: computing it allocates).
    private struct Layout {
        var width: UInt32
        var height: UInt32
        var stride: Int32
        var pixels: UInt32
        var format: VideoFormat
        /// Names `format` for the frames lent under it (`LendableBuffer.formatID`).
        var formatID: UInt64
        /// Where the region starts in the picture, in bytes.
        var offset: Int
        var visibleBytes: Int
    }

    /// Asks the portal for `screen`'s source type (the user chooses, unless a restore token
    /// brings back an earlier choice), connects to the stream and waits for its first picture.
    /// Throws `.notFound` without a portal, `.permissionDenied` when the user cancels,
    /// `.unsupportedFormat` when the portal does not offer that source type, `.timeout` when no
    /// answer or picture comes in time, `.invalidState` when `region` misses the picture. The
    /// source's capture threads are `owner`'s (`CaptureThread.isOwned(by:)`).
    init(screen: Screen, region: Rect?, showsCursor: Bool, options: PortalOptions, owner: AnyObject,
         log: (Logger.Level, Logger.Message, Logger.Metadata) -> Void) throws(MediaDevicesError) {
        let grant = try MediaDevicesError.catching(device: screen.uniqueID, operation: "ScreenCast portal") {
            try PortalGrant.request(screen: screen, showsCursor: showsCursor, options: options, log: log)
        }
        let capture: PipeWireCapture
        do {
            capture = try PipeWireCapture(fd: grant.remote, nodeID: grant.stream.nodeID, device: screen.uniqueID)
            try capture.waitForPicture(timeout: options.firstFrameTimeout)
        } catch {
            grant.close()
            throw error
        }
        let picture = capture.newest().frame
        let size = Size(width: Int(picture.width), height: Int(picture.height))
        let mode = DisplayMode(name: "\(size.width)x\(size.height)", width: size.width, height: size.height, refreshRate: FrameRate(Fraction(0, 1)))
        let frame = grant.stream.position.map { Rect(x: $0.x, y: $0.y, width: size.width, height: size.height) }
        self.current = Mutex(PortalScreens.screen(card: screen.card, type: screen.connectorID, name: screen.name, mode: mode, frame: frame))
        self.grant = grant
        self.capture = capture
        lending = PipeWireLending(capture: capture, leases: PipeWireBufferLeases(wake: nil, owner: owner))
        self.restoreToken = grant.restoreToken
        self.sessionHandle = grant.session
        self.nodeID = grant.stream.nodeID
        self.region = region
        if let region, region.intersection(Rect(size)) == nil {
            close()
            throw MediaDevicesError(.invalidState, device: screen.uniqueID, operation: "capture region",
                                    detail: "The region \(region) lies outside the shared \(screen.name) (\(size.width)x\(size.height)); choose a region inside it")
        }
    }

    deinit { close() }

    /// Disconnects the stream (frames on lease keep their buffers), then closes the portal session.
    private func close() {
        lending.close()
        grant.close()
    }

    func attachRun(wake: WakeUpEvent?) { lending.leases.attach(wake: wake) }

    func settleLeases() {
        lending.lendIfStillLeased()
        lending.returnGivenBack()
    }

    /// Readable when the compositor sent a picture (an eventfd the stream's process callback signals).
    var changeDescriptor: Int32? { capture.descriptor }

    func grab(timestamp: MonotonicInstant, sequence: UInt32, onlyIfChanged: Bool, _ body: (VideoFrame) -> Void) throws(MediaDevicesError) -> ScreenGrabOutcome {
        // Before the stream may give back or remove the buffer delivered last.
        settleLeases()
        try capture.iterate(timeoutMilliseconds: 0)
        let (picture, isNew) = capture.newest()
        guard let data = picture.data else { return .nothingToShow }
        if onlyIfChanged, hasPicture, !isNew { return .unchanged }
        guard let layout = place(picture), Int(picture.size) >= layout.offset + layout.visibleBytes else { return .nothingToShow }
        hasPicture = true
        let plane = FramePlane(bytes: UnsafeRawBufferPointer(start: data + layout.offset, count: layout.visibleBytes),
                               bytesPerRow: Int(layout.stride))
        let delay = max(timestamp.duration(to: .now), .zero)
        lending.deliver(picture, formatID: layout.formatID) { lendable in
            body(VideoFrame(format: layout.format, timestamp: timestamp, sequence: sequence, orientation: .up,
                            captureDelay: delay, planeCount: 1, bytesUsed: layout.visibleBytes, plane0: plane, plane1: .empty,
                            plane2: .empty, dmaBuf: nil, lendable: lendable))
        }
        return .delivered
    }

    /// The layout of `picture`, computed again only when its size, stride or format changed;
    /// `nil` for a format the pipeline does not read or a region outside the picture.
    private func place(_ picture: cpw_frame) -> Layout? {
        if let layout, layout.width == picture.width, layout.height == picture.height, layout.stride == picture.stride,
           layout.pixels == picture.format {
            return layout
        }
        let pixelFormat: PixelFormat
        switch cpw_format(rawValue: picture.format) {
        case CPW_FORMAT_BGRX: pixelFormat = .xbgr32
        case CPW_FORMAT_RGBX: pixelFormat = .rgbx32
        case CPW_FORMAT_BGRA: pixelFormat = .abgr32
        case CPW_FORMAT_RGBA: pixelFormat = .rgba32
        default: return nil
        }
        let whole = Rect(x: 0, y: 0, width: Int(picture.width), height: Int(picture.height))
        guard let area = region.map({ $0.intersection(whole) }) ?? whole, picture.stride > 0 else { return nil }
        let stride = Int(picture.stride)
        let visibleBytes = (area.height - 1) * stride + area.width * 4
        let format = VideoFormat(pixelFormat: pixelFormat, width: area.width, height: area.height,
                                 bytesPerRow: [stride], bufferSizes: [visibleBytes])
        layout = Layout(width: picture.width, height: picture.height, stride: picture.stride, pixels: picture.format,
                        format: format, formatID: LendableBuffer.newFormatID(), offset: area.y * stride + area.x * 4, visibleBytes: visibleBytes)
        let shown = screen
        if shown.mode?.width != whole.width || shown.mode?.height != whole.height {
            let mode = DisplayMode(name: "\(whole.width)x\(whole.height)", width: whole.width, height: whole.height, refreshRate: FrameRate(Fraction(0, 1)))
            let resized = PortalScreens.screen(card: shown.card, type: shown.connectorID, name: shown.name, mode: mode,
                                               frame: shown.frame.map { Rect(x: $0.x, y: $0.y, width: whole.width, height: whole.height) })
            current.withLock { $0 = resized }
        }
        return layout
    }
}
#endif
