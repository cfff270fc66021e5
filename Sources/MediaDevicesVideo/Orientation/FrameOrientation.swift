import MediaDevicesCore
/// The orientation a capture run stamps on each frame: the camera's mounting rotation, plus
/// the tracker's orientation at capture time (mirrored for a front camera). Reading it takes
/// no lock and allocates nothing.
struct FrameOrientation: Sendable {
    /// The camera's mounting (`V4L2_CID_CAMERA_SENSOR_ROTATION`).
    let mount: VideoOrientation
    /// The app's tracker, if it set one.
    let tracker: (any OrientationTracker)?
    /// Whether the camera faces the user (its picture is a mirror image of the scene's sense).
    let facesUser: Bool

    /// The orientation now.
    var current: VideoOrientation {
        guard let tracker else { return mount }
        let body = tracker.orientation
        return mount.adding(facesUser ? body.mirrored : body)
    }
}
