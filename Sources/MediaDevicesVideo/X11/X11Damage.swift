#if X11
import MediaDevicesCore
import CXCB
import Glibc

/// Tracks what changed on the root window (DAMAGE, report level non-empty): the server sends
/// one event (`notifyEvent`) when the damage region stops being empty; `takeChanges(in:)` then
/// takes the whole region (`DamageSubtract` into an XFIXES region, `FetchRegion`), which
/// re-arms the event. No event since the last call means nothing changed, found without a
/// round trip.
final class X11Damage {
    private let x: X11Connection
    private let damage: UInt32
    private let region: UInt32
    /// The event type of `DamageNotify` on this connection.
    let notifyEvent: UInt8

    /// Starts tracking damage to the root window. Throws `.unsupportedFormat` when the server
    /// has no DAMAGE or XFIXES.
    init(_ x: X11Connection) throws(MediaDevicesError) {
        guard let firstEvent = x.extensionFirstEvent(cxcb_damage_extension()) else {
            throw MediaDevicesError(.unsupportedFormat, device: x.display, operation: "DAMAGE",
                                    detail: "The X server on \(x.display) has no DAMAGE extension, needed to skip unchanged frames")
        }
        try x.requireXFixes()
        try x.withReply("DamageQueryVersion", { xcb_damage_query_version_reply($0, xcb_damage_query_version($0, 1, 1), &$1) }) { _ in }
        self.x = x
        notifyEvent = firstEvent + UInt8(XCB_DAMAGE_NOTIFY)
        damage = xcb_generate_id(x.connection)
        region = xcb_generate_id(x.connection)
        try x.check("XFixesCreateRegion", xcb_xfixes_create_region_checked(x.connection, region, 0, nil))
        do {
            try x.check("DamageCreate", xcb_damage_create_checked(x.connection, damage, x.root,
                                                                  UInt8(XCB_DAMAGE_REPORT_LEVEL_NON_EMPTY.rawValue)))
        } catch {
            _ = xcb_xfixes_destroy_region(x.connection, region)
            throw error
        }
    }

    deinit {
        _ = xcb_damage_destroy(x.connection, damage)
        _ = xcb_xfixes_destroy_region(x.connection, region)
        x.flush()
    }

    /// What changed since the last call, cut to `area` (root coordinates) and given relative to
    /// its top-left corner, as one bounding rectangle; `nil` when nothing in `area` changed.
    /// `notified`: whether a `notifyEvent` arrived since the last call (without one, nothing
    /// changed and there is no round trip).
    func takeChanges(in area: Rect, notified: Bool) throws(MediaDevicesError) -> Rect? {
        guard notified else { return nil }
        _ = xcb_damage_subtract(x.connection, damage, xcb_xfixes_region_t(XCB_NONE), region)
        return try x.withReply("XFixesFetchRegion", { xcb_xfixes_fetch_region_reply($0, xcb_xfixes_fetch_region($0, region), &$1) }) { reply in
            let rectangles = xcb_xfixes_fetch_region_rectangles(reply)!
            var changed: Rect?
            var index = 0
            while index < Int(xcb_xfixes_fetch_region_rectangles_length(reply)) {
                let r = rectangles[index]
                if let part = Rect(x: Int(r.x), y: Int(r.y), width: Int(r.width), height: Int(r.height)).intersection(area) {
                    let local = Rect(x: part.x - area.x, y: part.y - area.y, width: part.width, height: part.height)
                    changed = changed.map { $0.union(local) } ?? local
                }
                index += 1
            }
            return changed
        }
    }
}
#endif
