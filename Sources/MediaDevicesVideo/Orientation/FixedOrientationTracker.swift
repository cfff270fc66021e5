import MediaDevicesCore
/// An orientation the app sets itself (for a device without sensors, or from its own UI).
public final class FixedOrientationTracker: OrientationTracker {
    private let cell: OrientationCell

    /// A tracker that reports `orientation` until `set(_:)` changes it.
    public init(_ orientation: VideoOrientation = .up) { cell = OrientationCell(orientation) }

    /// The orientation the app set.
    public var orientation: VideoOrientation { cell.orientation }

    /// Changes the orientation; `orientationChanges()` sequences hear of it if it differs.
    public func set(_ orientation: VideoOrientation) { cell.set(orientation) }

    /// The orientation now, then every `set` that changed it.
    public func orientationChanges() -> AsyncStream<VideoOrientation> { cell.changes() }
}
