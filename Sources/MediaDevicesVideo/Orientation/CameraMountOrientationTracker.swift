import MediaDevicesCore
/// A camera's mounting, from the V4L2 controls `V4L2_CID_CAMERA_SENSOR_ROTATION` (how the
/// sensor is turned in the device) and `V4L2_CID_CAMERA_ORIENTATION` (where it faces), where
/// the driver has them (laptop and phone sensors described by ACPI or device tree; vivid and
/// most USB webcams have neither: then `.up` and `.unknown`).
///
/// ``CameraSource`` always applies its camera's mounting itself; this tracker is for apps that
/// want to show or log it.
public final class CameraMountOrientationTracker: OrientationTracker {
    private let cell: OrientationCell
    /// Where the camera faces.
    public let position: CaptureDevice.Position
    /// Whether the driver has `V4L2_CID_CAMERA_SENSOR_ROTATION` (else the orientation is `.up`).
    public let hasSensorRotation: Bool

    /// Reads `device`'s mounting controls.
    public init(device: CaptureDevice) throws(MediaDevicesError) {
        let v4l2 = try V4L2Device(path: device.path)
        let rotation = v4l2.sensorOrientation
        hasSensorRotation = rotation != nil
        cell = OrientationCell(rotation ?? .up)
        position = device.position
    }

    /// The rotation that makes the sensor's picture upright.
    public var orientation: VideoOrientation { cell.orientation }

    /// The orientation (a mounting does not change).
    public func orientationChanges() -> AsyncStream<VideoOrientation> { cell.changes() }
}
