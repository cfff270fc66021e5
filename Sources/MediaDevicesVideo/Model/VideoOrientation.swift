import MediaDevicesCore
/// Which way up a frame's content is, as video-chat SDKs carry it with each frame
/// (`OTVideoOrientation`, Twilio ``VideoOrientation``): the rotation a renderer applies to show
/// the image upright.
public enum VideoOrientation: String, Sendable, Encodable, CaseIterable {
    /// Upright; no rotation needed.
    case up
    /// Rotated: turn 90° clockwise to show upright.
    case left
    /// Upside down: turn 180°.
    case down
    /// Rotated: turn 90° counter-clockwise to show upright.
    case right

    /// The clockwise rotation in degrees a renderer applies (0, 90, 180, 270).
    public var rotationDegrees: Int {
        switch self {
        case .up: return 0
        case .left: return 90
        case .down: return 180
        case .right: return 270
        }
    }

    /// The orientation for a camera whose `V4L2_CID_CAMERA_SENSOR_ROTATION` is `degrees`: the
    /// kernel gives the counter-clockwise rotation that makes the image upright.
    package init?(sensorRotation degrees: Int) {
        self.init(rotationDegrees: 360 - degrees)
    }

    /// The orientation for a clockwise rotation of `degrees` (a multiple of 90; others give `nil`).
    public init?(rotationDegrees degrees: Int) {
        switch ((degrees % 360) + 360) % 360 {
        case 0: self = .up
        case 90: self = .left
        case 180: self = .down
        case 270: self = .right
        default: return nil
        }
    }
}
