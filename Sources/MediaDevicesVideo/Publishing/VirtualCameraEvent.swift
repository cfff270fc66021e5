import MediaDevicesCore

/// What happens to a ``VirtualCamera``, in order, from ``VirtualCamera/events``.
public enum VirtualCameraEvent: Sendable, Equatable, CustomStringConvertible {
    /// A process opened one of the outputs.
    case consumerConnected(VirtualCameraConsumer)
    /// A process closed the output it had open (or ended).
    case consumerLeft(VirtualCameraConsumer)
    /// The source started: frames go to the outputs.
    case sourceStarted
    /// The source stopped: nobody reads (on demand), or ``VirtualCamera/stop()`` was called.
    case sourceStopped
    /// The source could not start, or failed while running; the outputs keep their format and
    /// their readers get no more frames. On demand, the next reader to come tries again.
    case sourceFailed(MediaDevicesError)

    /// One line for people: `"consumer connected: ffmpeg (pid 412) on /dev/video10"`.
    public var description: String {
        switch self {
        case .consumerConnected(let consumer): "consumer connected: \(consumer)"
        case .consumerLeft(let consumer): "consumer left: \(consumer)"
        case .sourceStarted: "source started"
        case .sourceStopped: "source stopped"
        case .sourceFailed(let error): "source failed: \(error)"
        }
    }
}
