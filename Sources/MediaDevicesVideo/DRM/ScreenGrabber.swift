import MediaDevicesCore
import CDRM
import CYUV
import Glibc
import Synchronization

/// Grabs one screen, frame after frame, on the capture thread: reads the CRTC (framebuffer,
/// viewport, mode) with one `DRM_IOCTL_MODE_GETCRTC`, maps a framebuffer again only when the
/// CRTC shows another one (a mode change, a page flip), and lends the visible region — cropped
/// to `region` — as a frame that points into the mapping (zero-copy). With the cursor overlay
/// it copies the region into its own buffer and blends the cursor plane over it.
/// Steady state allocates nothing. The KMS backend of ``ScreenSource``.
///
/// Memory mapped through PRIME is read between `DMA_BUF_IOCTL_SYNC` start and end (the frame's
/// delivery, or the cursor overlay's copy, in between). With `exportsDMABuf` the primary plane's
/// framebuffer is exported by PRIME and frames carry it as `dmaBuf` (not frames with the cursor
/// blended in: those are copies). Either way `frames` sequences lease the framebuffer
/// (`FramebufferLeases`): a held frame is a live view of the scanout, mapped or exported, as the
/// callback's frame is; only frames with the cursor blended in are copied into the sequence.
final class ScreenGrabber: ScreenGrabbing {
    let card: DRMCard
    let screen: Screen
    let crtcID: UInt32
    /// The part of the screen to deliver (screen coordinates), or the whole screen.
    let region: Rect?
    let showsCursor: Bool
    let method: FramebufferMapping
    /// Whether frames carry the framebuffer's PRIME export as `dmaBuf`.
    let exportsDMABuf: Bool
    private var primary: Framebuffer?
    private var cursor: Framebuffer?
    private var crtc = drm_mode_crtc()
    /// The format of the frames for the current view, kept so frames allocate nothing.
    private var format: VideoFormat?
    /// Names `format` for the frames lent under it (`LendableBuffer.formatID`): a new one each view.
    private var formatID: UInt64 = 0
    /// The same for frames copied into `composite` (tightly packed rows).
    private var compositeFormat: VideoFormat?
    /// The DMA-BUF description of the current view, kept so frames allocate nothing.
    private var export: DMABufFrame?
    /// The framebuffers lent to `frames` sequences, and the current one's slot.
    private let leases = FramebufferLeases()
    private var leaseSlot = -1
    private var view = View(fb: 0, x: 0, y: 0, width: 0, height: 0)
    private var composite: UnsafeMutableRawPointer?
    private var compositeCapacity = 0
    private let propertyIDs = UnsafeMutablePointer<UInt32>.allocate(capacity: 64)
    private let propertyValues = UnsafeMutablePointer<UInt64>.allocate(capacity: 64)
    private var cursorX: UInt32 = 0
    private var cursorY: UInt32 = 0

    /// The rectangle of the framebuffer a frame shows.
    struct View: Equatable { var fb: UInt32; var x: Int; var y: Int; var width: Int; var height: Int }

    init(card: DRMCard, screen: Screen, region: Rect?, showsCursor: Bool, method: FramebufferMapping, exportsDMABuf: Bool = false) throws(MediaDevicesError) {
        guard let crtcID = screen.crtcID else {
            throw MediaDevicesError(.invalidState, device: screen.uniqueID, operation: "capture screen",
                                    detail: "The output is connected but off (no CRTC drives it)",
                                    remedy: "Turn it on, or pick another of ScreenSource.discover()'s screens")
        }
        self.card = card
        self.screen = screen
        self.crtcID = crtcID
        self.region = region
        self.showsCursor = showsCursor
        self.method = method
        self.exportsDMABuf = exportsDMABuf
        if showsCursor, let plane = screen.cursorPlaneID {
            cursorX = card.property("CRTC_X", object: plane, type: cdrm_MODE_OBJECT_PLANE)?.id ?? 0
            cursorY = card.property("CRTC_Y", object: plane, type: cdrm_MODE_OBJECT_PLANE)?.id ?? 0
        }
    }

    deinit {
        _ = leases.adopt(nil)
        propertyIDs.deallocate()
        propertyValues.deallocate()
        composite?.deallocate()
    }

    /// The framebuffer grabbed last; readable from any thread (set when a framebuffer is
    /// mapped, not per frame).
    var framebuffer: FramebufferDescription? { mapped.withLock { $0 } }
    private let mapped = Mutex<FramebufferDescription?>(nil)

    /// Grabs the screen as it is now and lends it to `body` as a frame stamped `timestamp`.
    /// Returns `.nothingToShow` when there is nothing to grab (the CRTC is off or between
    /// framebuffers). KMS tracks no damage: `onlyIfChanged` is ignored and every grab is lent.
    func grab(timestamp: MonotonicInstant, sequence: UInt32, onlyIfChanged: Bool, _ body: (VideoFrame) -> Void) throws(MediaDevicesError) -> ScreenGrabOutcome {
        crtc = drm_mode_crtc()
        crtc.crtc_id = crtcID
        let error = card.file.ioctlErrno(cdrm_IOCTL_MODE_GETCRTC, &crtc)
        if error != 0 { throw MediaDevicesError.fromErrno(error, device: card.path, operation: "DRM_IOCTL_MODE_GETCRTC") }
        guard crtc.fb_id != 0, crtc.mode_valid != 0 else { return .nothingToShow }
        if primary?.description.id != crtc.fb_id {
            primary = nil
            leaseSlot = leases.adopt(nil)
            format = nil
            guard let mapped = try Framebuffer.map(card: card, id: crtc.fb_id, method: method, what: "primary plane of \(screen.name)",
                                                   exportingDMABuf: exportsDMABuf) else { return .nothingToShow }
            primary = mapped
            leaseSlot = leases.adopt(mapped)
            self.mapped.withLock { $0 = mapped.description }
        }
        let fb = primary!.description
        // The viewport: the CRTC's mode at (x, y) of the framebuffer, cut to the framebuffer,
        // then to the requested region (in screen coordinates).
        var next = View(fb: fb.id, x: Int(crtc.x), y: Int(crtc.y),
                        width: min(Int(crtc.mode.hdisplay), fb.width - Int(crtc.x)),
                        height: min(Int(crtc.mode.vdisplay), fb.height - Int(crtc.y)))
        if let region {
            let left = max(region.x, 0), top = max(region.y, 0)
            let right = min(region.x + region.width, next.width), bottom = min(region.y + region.height, next.height)
            next = View(fb: fb.id, x: next.x + left, y: next.y + top, width: right - left, height: bottom - top)
        }
        guard next.width > 0, next.height > 0 else { return .nothingToShow }
        let bytesPerPixel = primary!.bytesPerPixel
        let visibleBytes = (next.height - 1) * fb.bytesPerRow + next.width * bytesPerPixel
        if next != view || format == nil {
            view = next
            format = VideoFormat(pixelFormat: fb.pixelFormat, width: next.width, height: next.height,
                                 bytesPerRow: [fb.bytesPerRow], bufferSizes: [visibleBytes])
            formatID = LendableBuffer.newFormatID()
            compositeFormat = VideoFormat(pixelFormat: fb.pixelFormat, width: next.width, height: next.height)
            export = primary!.dmaBuf(x: next.x, y: next.y)
        }
        let pixels = primary!.pixels + next.y * fb.bytesPerRow + next.x * bytesPerPixel
        var plane = FramePlane(bytes: UnsafeRawBufferPointer(start: pixels, count: visibleBytes), bytesPerRow: fb.bytesPerRow)
        var frameFormat = format!
        var frameExport = export
        var lent = true
        let framebuffer = primary!
        try framebuffer.beginRead()
        defer { framebuffer.endRead() }
        if showsCursor, try overlayCursor(source: pixels, fb: fb) {
            frameFormat = compositeFormat!
            frameExport = nil
            lent = false
            plane = FramePlane(bytes: UnsafeRawBufferPointer(start: composite, count: frameFormat.imageSize),
                               bytesPerRow: frameFormat.bytesPerRow[0])
        }
        let delay = max(timestamp.duration(to: .now), .zero)
        // The framebuffer, mapped or exported, is lendable: a sequence keeps it (live, not a
        // snapshot, as the callback's frame and a DMA-BUF are) on lease. A cursor composite is not.
        let lendable = lent && leaseSlot >= 0 ? LendableBuffer(lender: leases, index: leaseSlot, formatID: formatID) : nil
        body(VideoFrame(format: frameFormat, timestamp: timestamp, sequence: sequence, orientation: .up,
                        captureDelay: delay, planeCount: 1, bytesUsed: plane.bytes.count, plane0: plane,
                        plane1: .empty, plane2: .empty, dmaBuf: frameExport, lendable: lendable))
        return .delivered
    }

    /// Copies the view into `composite` and blends the cursor plane's image over it (libyuv
    /// `ARGBBlend`: the cursor is premultiplied ARGB8888, as KMS cursor planes are). Returns
    /// `false` when the cursor is hidden, off the view, or the formats are not 8-bit BGRA-order.
    private func overlayCursor(source: UnsafeRawPointer, fb: FramebufferDescription) throws(MediaDevicesError) -> Bool {
        guard let plane = screen.cursorPlaneID, fb.pixelFormat == .xbgr32 || fb.pixelFormat == .abgr32 else { return false }
        var query = drm_mode_get_plane()
        query.plane_id = plane
        let error = card.file.ioctlErrno(cdrm_IOCTL_MODE_GETPLANE, &query)
        if error != 0 { throw MediaDevicesError.fromErrno(error, device: card.path, operation: "DRM_IOCTL_MODE_GETPLANE (cursor)") }
        guard query.fb_id != 0, query.crtc_id == crtcID else { return false }
        if cursor?.description.id != query.fb_id {
            cursor = nil
            cursor = try Framebuffer.map(card: card, id: query.fb_id, method: method, what: "cursor plane of \(screen.name)")
        }
        guard let image = cursor, image.description.pixelFormat == .abgr32 else { return false }
        var properties = drm_mode_obj_get_properties()
        properties.props_ptr = UInt64(UInt(bitPattern: propertyIDs))
        properties.prop_values_ptr = UInt64(UInt(bitPattern: propertyValues))
        properties.count_props = 64
        properties.obj_id = plane
        properties.obj_type = cdrm_MODE_OBJECT_PLANE
        guard card.file.ioctlErrno(cdrm_IOCTL_MODE_OBJ_GETPROPERTIES, &properties) == 0 else { return false }
        var position = (x: Int.min, y: Int.min)
        for index in 0..<min(Int(properties.count_props), 64) {
            let value = Int(Int64(bitPattern: propertyValues[index]))
            if propertyIDs[index] == cursorX { position.x = value }
            if propertyIDs[index] == cursorY { position.y = value }
        }
        guard position.x != Int.min, position.y != Int.min else { return false }
        // The cursor in view coordinates, cut to the view.
        let (viewX, viewY) = (position.x - (view.x - Int(crtc.x)), position.y - (view.y - Int(crtc.y)))
        try image.beginRead()
        defer { image.endRead() }
        guard let visible = CursorOverlay.visiblePart(x: viewX, y: viewY, width: image.description.width, height: image.description.height,
                                                      pictureWidth: view.width, pictureHeight: view.height) else { return false }
        let stride = view.width * 4
        if compositeCapacity < stride * view.height {
            composite?.deallocate()
            compositeCapacity = stride * view.height
            composite = .allocate(byteCount: compositeCapacity, alignment: 64)
        }
        let target = composite!.assumingMemoryBound(to: UInt8.self)
        ARGBCopy(source.assumingMemoryBound(to: UInt8.self), Int32(fb.bytesPerRow), target, Int32(stride),
                 Int32(view.width), Int32(view.height))
        CursorOverlay.blend(cursor: image.pixels, cursorBytesPerRow: image.description.bytesPerRow, x: viewX, y: viewY,
                            visible: visible, onto: target, bytesPerRow: stride)
        return true
    }
}
