import MediaDevicesCore
/// The kernel's ids of the standard camera controls (`V4L2_CID_*`), for typed access:
/// `try device.setControl(.brightness, to: 10)`, `controls[.exposureAbsolute]`.
public struct CameraControlID: RawRepresentable, Sendable, Hashable {
    /// The kernel's control id.
    public let rawValue: UInt32
    /// The control with this kernel id.
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// `V4L2_CID_BRIGHTNESS`.
    public static let brightness = CameraControlID(rawValue: 0x0098_0900)
    /// `V4L2_CID_CONTRAST`.
    public static let contrast = CameraControlID(rawValue: 0x0098_0901)
    /// `V4L2_CID_SATURATION`.
    public static let saturation = CameraControlID(rawValue: 0x0098_0902)
    /// `V4L2_CID_HUE`.
    public static let hue = CameraControlID(rawValue: 0x0098_0903)
    /// `V4L2_CID_AUTO_WHITE_BALANCE` ("White Balance, Automatic").
    public static let whiteBalanceAutomatic = CameraControlID(rawValue: 0x0098_090c)
    /// `V4L2_CID_GAMMA`.
    public static let gamma = CameraControlID(rawValue: 0x0098_0910)
    /// `V4L2_CID_GAIN`.
    public static let gain = CameraControlID(rawValue: 0x0098_0913)
    /// `V4L2_CID_POWER_LINE_FREQUENCY` (menu: disabled, 50 Hz, 60 Hz, auto).
    public static let powerLineFrequency = CameraControlID(rawValue: 0x0098_0918)
    /// `V4L2_CID_WHITE_BALANCE_TEMPERATURE` (kelvin).
    public static let whiteBalanceTemperature = CameraControlID(rawValue: 0x0098_091a)
    /// `V4L2_CID_SHARPNESS`.
    public static let sharpness = CameraControlID(rawValue: 0x0098_091b)
    /// `V4L2_CID_BACKLIGHT_COMPENSATION`.
    public static let backlightCompensation = CameraControlID(rawValue: 0x0098_091c)
    /// `V4L2_CID_EXPOSURE_AUTO` (menu: auto, manual, shutter priority, aperture priority).
    public static let exposureAuto = CameraControlID(rawValue: 0x009a_0901)
    /// `V4L2_CID_EXPOSURE_ABSOLUTE` (100 µs units).
    public static let exposureAbsolute = CameraControlID(rawValue: 0x009a_0902)
    /// `V4L2_CID_EXPOSURE_AUTO_PRIORITY` (may the frame rate drop to expose longer).
    public static let exposureAutoPriority = CameraControlID(rawValue: 0x009a_0903)
    /// `V4L2_CID_PAN_ABSOLUTE` (arc seconds).
    public static let panAbsolute = CameraControlID(rawValue: 0x009a_0908)
    /// `V4L2_CID_TILT_ABSOLUTE` (arc seconds).
    public static let tiltAbsolute = CameraControlID(rawValue: 0x009a_0909)
    /// `V4L2_CID_FOCUS_ABSOLUTE`.
    public static let focusAbsolute = CameraControlID(rawValue: 0x009a_090a)
    /// `V4L2_CID_FOCUS_AUTO` ("Focus, Automatic Continuous").
    public static let focusAuto = CameraControlID(rawValue: 0x009a_090c)
    /// `V4L2_CID_ZOOM_ABSOLUTE`.
    public static let zoomAbsolute = CameraControlID(rawValue: 0x009a_090d)
}

/// Typed access to the standard controls in a list from `CaptureDevice.controls()`
/// (`controls[.brightness]`): `nil` where the driver has no such control.
extension Array where Element == CameraControl {
    /// The control with this id.
    public subscript(id: CameraControlID) -> CameraControl? { first { $0.id == id.rawValue } }
    /// The control with this `key` (`v4l2-ctl`'s name) or driver name (case-insensitive).
    public subscript(named name: String) -> CameraControl? {
        first { $0.key == name } ?? first { $0.name.lowercased() == name.lowercased() }
    }

    /// The `brightness` control, if the driver has one.
    package var brightness: CameraControl? { self[.brightness] }
    /// The `contrast` control, if the driver has one.
    package var contrast: CameraControl? { self[.contrast] }
    /// The `saturation` control, if the driver has one.
    package var saturation: CameraControl? { self[.saturation] }
    /// The `hue` control, if the driver has one.
    package var hue: CameraControl? { self[.hue] }
    /// The `gamma` control, if the driver has one.
    package var gamma: CameraControl? { self[.gamma] }
    /// The `sharpness` control, if the driver has one.
    package var sharpness: CameraControl? { self[.sharpness] }
    /// The `gain` control, if the driver has one.
    package var gain: CameraControl? { self[.gain] }
    /// The `backlightCompensation` control, if the driver has one.
    package var backlightCompensation: CameraControl? { self[.backlightCompensation] }
    /// The `powerLineFrequency` control, if the driver has one.
    package var powerLineFrequency: CameraControl? { self[.powerLineFrequency] }
    /// The `whiteBalanceAutomatic` control, if the driver has one.
    package var whiteBalanceAutomatic: CameraControl? { self[.whiteBalanceAutomatic] }
    /// The `whiteBalanceTemperature` control, if the driver has one.
    package var whiteBalanceTemperature: CameraControl? { self[.whiteBalanceTemperature] }
    /// The `exposureAuto` control, if the driver has one.
    package var exposureAuto: CameraControl? { self[.exposureAuto] }
    /// The `exposureAbsolute` control, if the driver has one.
    package var exposureAbsolute: CameraControl? { self[.exposureAbsolute] }
    /// The `exposureAutoPriority` control, if the driver has one.
    package var exposureAutoPriority: CameraControl? { self[.exposureAutoPriority] }
    /// The `focusAuto` control, if the driver has one.
    package var focusAuto: CameraControl? { self[.focusAuto] }
    /// The `focusAbsolute` control, if the driver has one.
    package var focusAbsolute: CameraControl? { self[.focusAbsolute] }
    /// The `zoomAbsolute` control, if the driver has one.
    package var zoomAbsolute: CameraControl? { self[.zoomAbsolute] }
    /// The `panAbsolute` control, if the driver has one.
    package var panAbsolute: CameraControl? { self[.panAbsolute] }
    /// The `tiltAbsolute` control, if the driver has one.
    package var tiltAbsolute: CameraControl? { self[.tiltAbsolute] }
}
