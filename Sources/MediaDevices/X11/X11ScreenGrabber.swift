import CXCB
import Glibc

/// Grabs one RandR monitor of an X server, frame after frame: MIT-SHM `ShmGetImage` of the
/// monitor's rectangle (cut to `region`) into one shared segment attached once, lent as a
/// zero-copy `XBGR32` frame (BGRx in memory, DRM XRGB8888). DAMAGE tells when nothing changed,
/// so a paced grab can skip the round trip and the frame; with the cursor, the XFIXES cursor
/// image is blended into the segment and a moved cursor counts as a change. The X11 backend of
/// `ScreenSource`; owns its own connection. Steady state allocates no pixel buffers (libxcb
/// allocates each small reply).
final class X11ScreenGrabber: ScreenGrabbing {
    let screen: Screen
    /// The root-window rectangle grabbed: the monitor, cut to the region.
    let area: Rect
    /// What changed in the last grab (frame coordinates), as DAMAGE reported it; `nil` for the
    /// first grab and when the last grab came from a changed cursor only.
    private(set) var lastDamage: Rect?
    private let x: X11Connection
    private let memory: X11SharedMemory
    private let damage: X11Damage
    private let cursor: X11Cursor?
    private let format: VideoFormat
    /// `format`'s size and row length, kept: computing them allocates.
    private let imageSize: Int
    private let bytesPerRow: Int
    private var hasPicture = false

    /// Connects to the screen's display, finds the monitor again (it may have moved or gone
    /// since enumeration), and attaches the segment. Throws `.disconnected` when the monitor
    /// is gone, `.invalidState` when `region` (monitor coordinates) misses it,
    /// `.unsupportedFormat` when the root window is not 32-bit TrueColor.
    init(screen: Screen, region: Rect?, showsCursor: Bool) throws {
        let x = try X11Connection(display: screen.card)
        guard let current = try X11Monitors.screens(of: x).first(where: { $0.name == screen.name }), let frame = current.frame else {
            throw MediaDevicesError(.disconnected, device: screen.uniqueID, operation: "RRGetMonitors",
                                    detail: "The X server on \(screen.card) no longer has a monitor \(screen.name); run `mediadevices screens --backend x11`")
        }
        guard x.hasBGRxRoot else {
            throw MediaDevicesError(.unsupportedFormat, device: screen.uniqueID, operation: "xcb_get_setup",
                                    detail: "The root window of \(screen.card) is not 24-bit TrueColor in 32-bit pixels; start the server at depth 24 (Xvfb -screen 0 WxHx24)")
        }
        let wanted = region.map { Rect(x: frame.x + $0.x, y: frame.y + $0.y, width: $0.width, height: $0.height) } ?? frame
        guard let area = wanted.intersection(frame)?.intersection(Rect(x.rootSize)) else {
            throw MediaDevicesError(.invalidState, device: screen.uniqueID, operation: "capture region",
                                    detail: "The region \(region.map(\.description) ?? "") lies outside \(screen.name) (\(frame.width)x\(frame.height)); choose a region inside it")
        }
        self.screen = current
        self.area = area
        self.x = x
        format = VideoFormat(pixelFormat: .xbgr32, width: area.width, height: area.height)
        imageSize = format.imageSize
        bytesPerRow = format.bytesPerRow[0]
        memory = try X11SharedMemory(x, byteCount: imageSize)
        damage = try X11Damage(x)
        cursor = showsCursor ? try X11Cursor(x) : nil
    }

    func grab(timestamp: UInt64, sequence: UInt32, onlyIfChanged: Bool, _ body: (VideoFrame) -> Void) throws -> ScreenGrabOutcome {
        let changed = try damage.takeChanges(in: area)
        let cursorChanged = try cursor?.refresh() ?? false
        if onlyIfChanged, hasPicture, changed == nil, !cursorChanged { return .unchanged }
        lastDamage = hasPicture ? changed : nil
        try x.withReply("ShmGetImage", {
            xcb_shm_get_image_reply($0, xcb_shm_get_image($0, x.root, Int16(area.x), Int16(area.y), UInt16(area.width), UInt16(area.height),
                                                          ~0, UInt8(XCB_IMAGE_FORMAT_Z_PIXMAP.rawValue), memory.segment, 0), &$1)
        }) { reply in
            guard Int(reply.pointee.size) >= imageSize else {
                throw MediaDevicesError(.io, device: screen.uniqueID, operation: "ShmGetImage",
                                        detail: "The X server wrote \(reply.pointee.size) bytes for \(area), \(imageSize) expected")
            }
        }
        hasPicture = true
        cursor?.blend(area: area, onto: memory.bytes, bytesPerRow: bytesPerRow)
        let plane = FramePlane(bytes: UnsafeRawBufferPointer(start: memory.bytes, count: imageSize), bytesPerRow: bytesPerRow)
        let delay = Int64(MonotonicClock.now()) - Int64(timestamp)
        body(VideoFrame(format: format, timestamp: timestamp, sequence: sequence, orientation: .up,
                        captureDelay: .nanoseconds(max(delay, 0)), planeCount: 1, bytesUsed: plane.bytes.count, plane0: plane))
        return .delivered
    }
}
