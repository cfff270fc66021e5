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
    public let refreshRate: FrameRate

    /// Describes a mode.
    public init(name: String, width: Int, height: Int, refreshRate: FrameRate) {
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

/// One connected display output of a DRM/KMS card: what `ScreenSource` captures.
/// Values are snapshots taken at enumeration (`ScreenSource.screens`).
public struct Screen: Sendable, Hashable, CustomStringConvertible {
    /// The card's device node (`/dev/dri/card0`).
    public let card: String
    /// The kernel driver of the card (`bochs-drm`, `virtio_gpu`, `i915`).
    public let driver: String
    /// The connector's KMS object id.
    public let connectorID: UInt32
    /// The connector's name as the kernel names it (`Virtual-1`, `HDMI-A-1`, `eDP-1`).
    public let name: String
    /// The connector type (`Virtual`, `HDMI-A`, `eDP`, `DP`, `VGA`).
    public let connectorType: String
    /// The mode the CRTC drives now; `nil` when the output is connected but off.
    public let mode: DisplayMode?
    /// The CRTC that drives the connector; `nil` when none does (the output is off).
    public let crtcID: UInt32?
    /// The primary plane of that CRTC (its framebuffer is what is grabbed).
    public let primaryPlaneID: UInt32?
    /// The cursor plane of that CRTC, if the driver has one (virtio-gpu does, bochs does not).
    public let cursorPlaneID: UInt32?
    /// The physical size in millimetres as the monitor reports it; `nil` when unknown (0).
    public let physicalSize: Size?
    /// The monitor name from the EDID (descriptor 0xFC), when there is an EDID with a name.
    public let monitorName: String?

    /// A stable identifier: `"/dev/dri/card0:Virtual-1"`.
    public var uniqueID: String { "\(card):\(name)" }

    /// `"Virtual-1 on /dev/dri/card0 (bochs-drm): 1024x768 @ 75.00 Hz"`.
    public var description: String {
        "\(name) on \(card) (\(driver)): \(mode?.description ?? "off")\(monitorName.map { ", \($0)" } ?? "")"
    }

    /// Describes a screen. Applications get screens from `ScreenSource.screens`.
    public init(card: String, driver: String, connectorID: UInt32, name: String, connectorType: String,
                mode: DisplayMode?, crtcID: UInt32?, primaryPlaneID: UInt32?, cursorPlaneID: UInt32?,
                physicalSize: Size?, monitorName: String?) {
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
    }
}
