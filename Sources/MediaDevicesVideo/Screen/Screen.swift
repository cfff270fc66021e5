import MediaDevicesCore
/// A display mode: the size the CRTC scans out and its refresh rate.
/// The corresponding kernel struct is `drm_mode_modeinfo`.
public struct DisplayMode: Sendable, Hashable, CustomStringConvertible {
    /// The mode's name as the driver gives it (`"1024x768"`).
    public let name: String
    /// Visible width in pixels (`hdisplay`).
    public let width: Int
    /// Visible height in pixels (`vdisplay`).
    public let height: Int
    /// The exact refresh rate: pixel clock / (htotal × vtotal), counting interlace and double scan.
    /// X11: 0 when the server does not know it (Xvfb's modes have no pixel clock).
    public let refreshRate: FrameRate

    /// Describes a mode.
    package init(name: String, width: Int, height: Int, refreshRate: FrameRate) {
        self.name = name
        self.width = width
        self.height = height
        self.refreshRate = refreshRate
    }

    /// The visible size.
    public var size: Size { Size(width: width, height: height) }

    /// `"1024x768 @ 75 Hz"`.
    public var description: String {
        "\(width)x\(height) @ \(String(format: "%.2f", refreshRate.framesPerSecond.doubleValue)) Hz"
    }
}

/// One screen that ``ScreenSource`` captures: a connected display output of a DRM/KMS card, a
/// RandR monitor of an X server, or a source type of the Wayland screen-cast portal (`monitor`,
/// `window`: the user picks which one) (``backend`` says which). Values are snapshots taken at
/// enumeration (``ScreenSource/discover(backend:)``).
public struct Screen: Sendable, Hashable, CustomStringConvertible {
    /// The backend that reads this screen.
    public let backend: ScreenBackend
    /// KMS: the card's device node (`/dev/dri/card0`). X11: the display (`:0`). Portal: the
    /// session bus address (empty: the environment's session bus).
    public let card: String
    /// KMS: the kernel driver of the card (`bochs-drm`, `virtio_gpu`, `i915`). X11: `X11`.
    /// Portal: `xdg-desktop-portal`.
    public let driver: String
    /// KMS: the connector's KMS object id. X11: the RandR monitor's name atom (0 for a whole
    /// X screen without RandR). Portal: the source type (1 monitor, 2 window).
    package let connectorID: UInt32
    /// KMS: the connector's name as the kernel names it (`Virtual-1`, `HDMI-A-1`, `eDP-1`).
    /// X11: the monitor's name (`DP-1`, `screen`, or what `xrandr --setmonitor` named it).
    public let name: String
    /// KMS: the connector type (`Virtual`, `HDMI-A`, `eDP`, `DP`, `VGA`). X11: `RandR monitor`
    /// (`X screen` for a server without RandR 1.5).
    public let connectorType: String
    /// The mode the CRTC drives now; `nil` when the output is connected but off. X11: the
    /// monitor's size, with the refresh rate of its first output's mode. Portal: `nil` until
    /// the user has chosen, then the stream's size (refresh 0: frames come on change).
    public let mode: DisplayMode?
    /// The CRTC that drives the connector; `nil` when none does (the output is off) and on X11.
    package let crtcID: UInt32?
    /// The primary plane of that CRTC (its framebuffer is what is grabbed); `nil` on X11.
    package let primaryPlaneID: UInt32?
    /// The cursor plane of that CRTC, if the driver has one (virtio-gpu does, bochs does not);
    /// `nil` on X11 (the cursor comes from XFIXES).
    package let cursorPlaneID: UInt32?
    /// The physical size in millimetres as the monitor reports it; `nil` when unknown (0).
    public let physicalSize: Size?
    /// The monitor name from the EDID (descriptor 0xFC), when there is an EDID with a name.
    public let monitorName: String?
    /// X11: where the monitor lies on the X screen (root window coordinates); `nil` on KMS.
    public let frame: Rect?

    /// A stable identifier: `"/dev/dri/card0:Virtual-1"` (KMS), `"x11::0/DP-1"` (X11),
    /// `"portal:monitor"` (the portal: the source type the user chooses from).
    public var uniqueID: String {
        switch backend {
        case .kms: "\(card):\(name)"
        case .x11: "x11:\(card)/\(name)"
        case .portal: "portal:\(name)"
        }
    }

    /// `"Virtual-1 on /dev/dri/card0 (bochs-drm): 1024x768 @ 75.00 Hz"`,
    /// `"left on :0 (X11): 640x720 @ 0.00 Hz at 640x720+0+0"`.
    public var description: String {
        if backend == .portal {
            return "\(name) through the screen-cast portal (the user chooses)" + (mode.map { ": \($0.width)x\($0.height)" } ?? "")
        }
        return "\(name) on \(card) (\(driver)): \(mode?.description ?? "off")\(monitorName.map { ", \($0)" } ?? "")"
            + (frame.map { " at \($0)" } ?? "")
    }

    /// Describes a screen. Applications get screens from ``ScreenSource/discover(backend:)``.
    package init(card: String, driver: String, connectorID: UInt32, name: String, connectorType: String,
                mode: DisplayMode?, crtcID: UInt32?, primaryPlaneID: UInt32?, cursorPlaneID: UInt32?,
                physicalSize: Size?, monitorName: String?, backend: ScreenBackend = .kms, frame: Rect? = nil) {
        self.backend = backend
        self.card = card
        self.driver = driver
        self.connectorID = connectorID
        self.name = name
        self.connectorType = connectorType
        self.mode = mode
        self.crtcID = crtcID
        self.primaryPlaneID = primaryPlaneID
        self.cursorPlaneID = cursorPlaneID
        self.physicalSize = physicalSize
        self.monitorName = monitorName
        self.frame = frame
    }
}
