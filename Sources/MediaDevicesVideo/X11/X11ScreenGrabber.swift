#if X11
import MediaDevicesCore
import CXCB
import Glibc
import Synchronization

/// Grabs one RandR monitor of an X server, frame after frame: MIT-SHM `ShmGetImage` of the
/// monitor's rectangle (cut to `region`) into a shared segment (a memfd where the server takes
/// one, else System V: see `X11SharedMemory`), lent as a zero-copy `XBGR32` frame (BGRx in
/// memory, DRM XRGB8888), to sequences too: a segment a sequence holds is not grabbed into
/// (`X11SegmentRing`; one segment serves a reader on the capture executor). DAMAGE tells when nothing changed,
/// so a paced grab can skip the round trip and the frame; with the cursor, the XFIXES cursor
/// image is blended into the segment and a moved cursor counts as a change. A RandR change
/// (a mode, a moved or resized monitor) is followed: frames go on at the monitor's new place
/// and size (a new segment only when the size changes); while the monitor is gone (or the
/// region lies outside it) grabs have nothing to show, as a KMS output that is off. The X11 backend of ``ScreenSource``;
/// owns its own connection. Steady state allocates nothing of its own (libxcb allocates each
/// reply it reads).
final class X11ScreenGrabber: ScreenGrabbing {
    /// The screen as last seen: the capture thread replaces it when the monitor changes;
    /// `ScreenSource.currentScreen` reads it from any thread.
    var screen: Screen { current.withLock { $0 } }
    private let current: Mutex<Screen>
    /// What changed in the last grab (frame coordinates), as DAMAGE reported it; `nil` for the
    /// first grab, after a RandR change, and when the last grab came from a changed cursor only.
    private(set) var lastDamage: Rect?
    private let region: Rect?
    private let x: X11Connection
    private let damage: X11Damage
    private let cursor: X11Cursor?
    /// RandR's screen-change event type, when the server has RandR 1.5.
    private let screenChangeEvent: UInt8?
    /// `nil` while the monitor is gone or the region lies outside it.
    private var placement: Placement?
    private let segments: X11SegmentRing
    /// Names the format of the frames lent under it (`LendableBuffer.formatID`); new at each placement.
    private var formatID = LendableBuffer.newFormatID()
    private var hasPicture = false

    /// Where the grab lies on the root window, and the frames' format (with its size and row
    /// length kept: computing them allocates).
    struct Placement {
        var area: Rect
        var format: VideoFormat
        var imageSize: Int
        var bytesPerRow: Int
    }

    /// How the segment is shared with the server.
    var sharing: X11SharedMemory.Sharing { segments.sharing }

    /// The root-window rectangle grabbed: the monitor, cut to the region; `nil` while there is
    /// none.
    var area: Rect? { placement?.area }

    /// Connects to the screen's display, finds the monitor again (it may have moved or gone
    /// since enumeration), and attaches the segment. Throws `.disconnected` when the monitor
    /// is gone, `.invalidState` when `region` (monitor coordinates) misses it,
    /// `.unsupportedFormat` when the root window is not 32-bit TrueColor. `sharing` forces one
    /// kind of shared memory (tests); by default a memfd when the server takes one, System V
    /// otherwise or when attaching the memfd fails.
    init(screen: Screen, region: Rect?, showsCursor: Bool, sharing: X11SharedMemory.Sharing? = nil) throws(MediaDevicesError) {
        let x = try X11Connection(display: screen.card)
        guard x.hasBGRxRoot else {
            throw MediaDevicesError(.unsupportedFormat, device: screen.uniqueID, operation: "xcb_get_setup",
                                    detail: "The root window of \(screen.card) is not 24-bit TrueColor in 32-bit pixels; start the server at depth 24 (Xvfb -screen 0 WxHx24)")
        }
        // Watch before looking, so that no change between the two is missed.
        screenChangeEvent = try X11Monitors.watchChanges(x)
        let (current, placement) = try X11ScreenGrabber.place(screen, region: region, on: x)
        self.current = Mutex(current)
        self.region = region
        self.x = x
        self.placement = placement
        segments = X11SegmentRing(first: try X11ScreenGrabber.sharedMemory(x, byteCount: placement.imageSize, sharing: sharing))
        damage = try X11Damage(x)
        cursor = showsCursor ? try X11Cursor(x) : nil
    }

    /// The first segment: as `sharing` says, or the server's preferred kind, falling back to
    /// System V when the server refuses the memfd (an X error; the connection lives on).
    private static func sharedMemory(_ x: X11Connection, byteCount: Int, sharing: X11SharedMemory.Sharing?) throws(MediaDevicesError) -> X11SharedMemory {
        if let sharing { return try X11SharedMemory(x, byteCount: byteCount, sharing: sharing) }
        guard try X11SharedMemory.preferredSharing(x) == .memfd else { return try X11SharedMemory(x, byteCount: byteCount, sharing: .systemV) }
        do {
            return try X11SharedMemory(x, byteCount: byteCount, sharing: .memfd)
        } catch where error.code == .io {
            return try X11SharedMemory(x, byteCount: byteCount, sharing: .systemV)
        }
    }

    /// The monitor named as `screen` is, as `x` shows it now, and where `region` of it lies.
    private static func place(_ screen: Screen, region: Rect?, on x: X11Connection) throws(MediaDevicesError) -> (Screen, Placement) {
        guard let current = try X11Monitors.screens(of: x).first(where: { $0.name == screen.name }), let frame = current.frame else {
            throw MediaDevicesError(.disconnected, device: screen.uniqueID, operation: "RRGetMonitors",
                                    detail: "The X server on \(screen.card) no longer has a monitor \(screen.name)",
                                    remedy: "ScreenSource.discover(backend: .x11) lists the monitors it has now")
        }
        let wanted = region.map { Rect(x: frame.x + $0.x, y: frame.y + $0.y, width: $0.width, height: $0.height) } ?? frame
        guard let area = wanted.intersection(frame)?.intersection(Rect(x.rootSize)) else {
            throw MediaDevicesError(.invalidState, device: screen.uniqueID, operation: "capture region",
                                    detail: "The region \(region.map(\.description) ?? "") lies outside \(screen.name) (\(frame.width)x\(frame.height) at \(frame)); choose a region inside it")
        }
        let format = VideoFormat(pixelFormat: .xbgr32, width: area.width, height: area.height)
        return (current, Placement(area: area, format: format, imageSize: format.imageSize, bytesPerRow: format.bytesPerRow[0]))
    }

    /// After a RandR change: finds the monitor again (a segment is made again only for a larger
    /// size, when it is next grabbed into).
    /// A monitor that is gone, or that the region now misses, leaves nothing to grab.
    private func follow() throws(MediaDevicesError) {
        hasPicture = false
        placement = nil
        let next: Placement
        do {
            let moved: Screen
            (moved, next) = try X11ScreenGrabber.place(screen, region: region, on: x)
            current.withLock { $0 = moved }
        } catch where error.code == .disconnected || error.code == .invalidState {
            return
        }
        placement = next
        formatID = LendableBuffer.newFormatID()
    }

    /// The connection's socket, when DAMAGE and RandR events say all there is to know: not with
    /// the cursor (its moves send no event).
    var changeDescriptor: Int32? { cursor == nil ? x.descriptor : nil }

    /// Takes the events libxcb already read (with the last reply) into `queued`; whether one
    /// says the screen changed.
    func hasQueuedChange() throws(MediaDevicesError) -> Bool {
        try note(x.drainQueuedEvents)
        return queued.damaged || queued.screenChanged
    }

    /// Events taken but not yet acted on (by `hasQueuedChange`).
    private var queued = (damaged: false, screenChanged: false)

    /// Notes the DAMAGE and RandR events `drain` hands over in `queued`.
    private func note(_ drain: (String, (UInt8) -> Void) throws(MediaDevicesError) -> Void) throws(MediaDevicesError) {
        let (damageEvent, changeEvent) = (damage.notifyEvent, screenChangeEvent)
        var seen = queued
        try drain("DamageSubtract") { type in
            if type == damageEvent { seen.damaged = true }
            if type == changeEvent || type == UInt8(XCB_CONFIGURE_NOTIFY) { seen.screenChanged = true }
        }
        queued = seen
    }

    func grab(timestamp: MonotonicInstant, sequence: UInt32, onlyIfChanged: Bool, _ body: (VideoFrame) -> Void) throws(MediaDevicesError) -> ScreenGrabOutcome {
        try note(x.drainEvents)
        let (damaged, screenChanged) = queued
        queued = (false, false)
        if screenChanged { try follow() }
        guard let placement else { return .nothingToShow }
        let changed = try damage.takeChanges(in: placement.area, notified: damaged)
        let cursorChanged = try cursor?.refresh() ?? false
        if onlyIfChanged, hasPicture, changed == nil, !cursorChanged { return .unchanged }
        lastDamage = hasPicture ? changed : nil
        let (area, imageSize, bytesPerRow) = (placement.area, placement.imageSize, placement.bytesPerRow)
        let (index, memory) = try segments.next(byteCount: imageSize, on: x)
        defer { segments.endDelivery() }
        let segment = memory.segment
        try x.withReply("ShmGetImage", {
            xcb_shm_get_image_reply($0, xcb_shm_get_image($0, x.root, Int16(area.x), Int16(area.y), UInt16(area.width), UInt16(area.height),
                                                          ~0, UInt8(XCB_IMAGE_FORMAT_Z_PIXMAP.rawValue), segment, 0), &$1)
        }) { (reply) throws(MediaDevicesError) in
            guard Int(reply.pointee.size) >= imageSize else {
                throw MediaDevicesError(.io, device: screen.uniqueID, operation: "ShmGetImage",
                                        detail: "The X server wrote \(reply.pointee.size) bytes for \(area), \(imageSize) expected")
            }
        }
        hasPicture = true
        cursor?.blend(area: area, onto: memory.bytes, bytesPerRow: bytesPerRow)
        let plane = FramePlane(bytes: UnsafeRawBufferPointer(start: memory.bytes, count: imageSize), bytesPerRow: bytesPerRow)
        let delay = max(timestamp.duration(to: .now), .zero)
        body(VideoFrame(format: placement.format, timestamp: timestamp, sequence: sequence, orientation: .up,
                        captureDelay: delay, planeCount: 1, bytesUsed: plane.bytes.count, plane0: plane, plane1: .empty, plane2: .empty, dmaBuf: nil,
                        lendable: index == segments.spareIndex ? nil : LendableBuffer(lender: segments, index: index, formatID: formatID)))
        return .delivered
    }
}
#endif
