#if X11
import MediaDevicesCore
import CXCB
import Glibc

/// The screens of an X server: its RandR 1.5 monitors (`xcb_randr_get_monitors`, so the
/// virtual monitors of `xrandr --setmonitor` are screens too), or the whole root window when
/// the server has no RandR 1.5.
enum X11Monitors {
    /// The screens of `display` (`DISPLAY` when `nil`). Throws `.notFound` when no X server
    /// answers.
    static func screens(display: String? = nil) throws(MediaDevicesError) -> [Screen] {
        try screens(of: X11Connection(display: display))
    }

    /// The screens `x` shows now.
    static func screens(of x: X11Connection) throws(MediaDevicesError) -> [Screen] {
        guard hasMonitors(x) else {
            let size = x.rootSize
            return [screen(of: x, name: "screen", atom: 0, frame: Rect(size), millimetres: nil, refresh: nil, type: "X screen")]
        }
        let crtcs = try crtcRefreshRates(x)
        return try x.withReply("RRGetMonitors", { xcb_randr_get_monitors_reply($0, xcb_randr_get_monitors($0, x.root, 1), &$1) }) { (reply) throws(MediaDevicesError) in
            var result: [Screen] = []
            var monitors = xcb_randr_get_monitors_monitors_iterator(reply)
            while monitors.rem > 0 {
                let info = monitors.data.pointee
                let frame = Rect(x: Int(info.x), y: Int(info.y), width: Int(info.width), height: Int(info.height))
                let millimetres = info.width_in_millimeters > 0 && info.height_in_millimeters > 0
                    ? Size(width: Int(info.width_in_millimeters), height: Int(info.height_in_millimeters)) : nil
                // The refresh of the CRTC showing the monitor's top-left corner (virtual monitors have no output of their own).
                let refresh = crtcs.first { $0.frame.contains(x: frame.x, y: frame.y) }?.refresh
                result.append(screen(of: x, name: try atomName(x, info.name), atom: info.name, frame: frame,
                                     millimetres: millimetres, refresh: refresh))
                xcb_randr_monitor_info_next(&monitors)
            }
            return result
        }
    }

    private static func screen(of x: X11Connection, name: String, atom: UInt32, frame: Rect, millimetres: Size?, refresh: FrameRate?,
                               type: String = "RandR monitor") -> Screen {
        let mode = DisplayMode(name: "\(frame.width)x\(frame.height)", width: frame.width, height: frame.height,
                               refreshRate: refresh ?? FrameRate(Fraction(0, 1)))
        return Screen(card: x.display, driver: "X11", connectorID: atom, name: name, connectorType: type,
                      mode: mode, crtcID: nil, primaryPlaneID: nil, cursorPlaneID: nil, physicalSize: millimetres,
                      monitorName: nil, backend: .x11, frame: frame)
    }

    /// Asks for the events that say the monitors may have changed, and returns RandR's
    /// screen-change event type (`nil` without RandR 1.5). A mode or CRTC change sends RandR's
    /// `RRScreenChangeNotify`; `xrandr --setmonitor` and `--delmonitor` send only a core
    /// `ConfigureNotify` on the root window (`RRSendConfigNotify`), hence both.
    static func watchChanges(_ x: X11Connection) throws(MediaDevicesError) -> UInt8? {
        var mask = XCB_EVENT_MASK_STRUCTURE_NOTIFY.rawValue
        try x.check("ChangeWindowAttributes", xcb_change_window_attributes_checked(x.connection, x.root, XCB_CW_EVENT_MASK.rawValue, &mask))
        guard hasMonitors(x), let firstEvent = x.extensionFirstEvent(cxcb_randr_extension()) else { return nil }
        try x.check("RRSelectInput", xcb_randr_select_input_checked(x.connection, x.root, UInt16(XCB_RANDR_NOTIFY_MASK_SCREEN_CHANGE.rawValue)))
        return firstEvent + UInt8(XCB_RANDR_SCREEN_CHANGE_NOTIFY)
    }

    /// Whether the server speaks RandR 1.5 (monitors).
    private static func hasMonitors(_ x: X11Connection) -> Bool {
        guard x.extensionFirstEvent(cxcb_randr_extension()) != nil else { return false }
        let version = try? x.withReply("RRQueryVersion", { xcb_randr_query_version_reply($0, xcb_randr_query_version($0, 1, 5), &$1) }) {
            (Int($0.pointee.major_version), Int($0.pointee.minor_version))
        }
        guard let version else { return false }
        return version.0 > 1 || (version.0 == 1 && version.1 >= 5)
    }

    /// Each active CRTC's rectangle and exact refresh rate (pixel clock / (htotal × vtotal),
    /// counting interlace and double scan; `nil` without a pixel clock, as on Xvfb).
    private static func crtcRefreshRates(_ x: X11Connection) throws(MediaDevicesError) -> [(frame: Rect, refresh: FrameRate?)] {
        try x.withReply("RRGetScreenResourcesCurrent", {
            xcb_randr_get_screen_resources_current_reply($0, xcb_randr_get_screen_resources_current($0, x.root), &$1)
        }) { (resources) throws(MediaDevicesError) in
            let modes = UnsafeBufferPointer(start: xcb_randr_get_screen_resources_current_modes(resources),
                                            count: Int(xcb_randr_get_screen_resources_current_modes_length(resources)))
            let crtcs = UnsafeBufferPointer(start: xcb_randr_get_screen_resources_current_crtcs(resources),
                                            count: Int(xcb_randr_get_screen_resources_current_crtcs_length(resources)))
            let timestamp = resources.pointee.config_timestamp
            var result: [(frame: Rect, refresh: FrameRate?)] = []
            for crtc in crtcs {
                let info = try x.withReply("RRGetCrtcInfo", { xcb_randr_get_crtc_info_reply($0, xcb_randr_get_crtc_info($0, crtc, timestamp), &$1) }) { $0.pointee }
                guard info.mode != 0, let mode = modes.first(where: { $0.id == info.mode }) else { continue }
                result.append((Rect(x: Int(info.x), y: Int(info.y), width: Int(info.width), height: Int(info.height)), refreshRate(mode)))
            }
            return result
        }
    }

    /// The exact refresh rate of a RandR mode; `nil` when it has no timings.
    static func refreshRate(_ mode: xcb_randr_mode_info_t) -> FrameRate? {
        var total = Int(mode.htotal) * Int(mode.vtotal)
        if mode.mode_flags & UInt32(XCB_RANDR_MODE_FLAG_INTERLACE.rawValue) != 0 { total /= 2 }
        if mode.mode_flags & UInt32(XCB_RANDR_MODE_FLAG_DOUBLE_SCAN.rawValue) != 0 { total *= 2 }
        guard total > 0, mode.dot_clock > 0 else { return nil }
        return FrameRate(Fraction(Int(mode.dot_clock), total))
    }

    private static func atomName(_ x: X11Connection, _ atom: xcb_atom_t) throws(MediaDevicesError) -> String {
        try x.withReply("GetAtomName", { xcb_get_atom_name_reply($0, xcb_get_atom_name($0, atom), &$1) }) { reply in
            let bytes = UnsafeRawBufferPointer(start: xcb_get_atom_name_name(reply), count: Int(xcb_get_atom_name_name_length(reply)))
            return String(decoding: bytes, as: UTF8.self)
        }
    }
}
#endif
