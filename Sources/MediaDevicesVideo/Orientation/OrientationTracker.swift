import MediaDevicesCore
import Synchronization

/// Tells which way up the picture is, now and as it changes (Twilio's `orientationTracker`).
///
/// `orientation` is the clockwise rotation a renderer applies to content captured by a camera
/// fixed to the tracked body and facing away from the user (a back camera); ``CameraSource``
/// mirrors it for a front camera and adds the camera's own mounting rotation. Reading it is
/// lock-free and allocates nothing: a capture thread reads it for every frame.
public protocol OrientationTracker: AnyObject, Sendable {
    /// The orientation now.
    var orientation: VideoOrientation { get }
    /// A new sequence that yields the orientation now, then every change, until the tracker
    /// goes away or the consumer stops iterating.
    func orientationChanges() -> AsyncStream<VideoOrientation>
}

/// The shared state of a tracker: the current orientation in an atomic (for capture threads)
/// and the subscribers of `orientationChanges()`.
final class OrientationCell: Sendable {
    private let value: Atomic<UInt8>
    private let subscribers = Mutex<(next: Int, all: [Int: AsyncStream<VideoOrientation>.Continuation])>((0, [:]))

    init(_ initial: VideoOrientation) { value = Atomic(OrientationCell.code(initial)) }

    deinit { finish() }

    /// The current orientation (lock-free).
    var orientation: VideoOrientation { OrientationCell.orientation(value.load(ordering: .acquiring)) }

    /// Sets the orientation; subscribers hear of it only if it changed. Returns whether it did.
    @discardableResult
    func set(_ orientation: VideoOrientation) -> Bool {
        let code = OrientationCell.code(orientation)
        guard value.exchange(code, ordering: .acquiringAndReleasing) != code else { return false }
        let continuations = subscribers.withLock { Array($0.all.values) }
        for continuation in continuations { continuation.yield(orientation) }
        return true
    }

    /// A sequence of the current orientation and each change.
    func changes() -> AsyncStream<VideoOrientation> {
        let (stream, continuation) = AsyncStream<VideoOrientation>.makeStream(bufferingPolicy: .bufferingNewest(8))
        let key = subscribers.withLock { state -> Int in
            let key = state.next
            state.next += 1
            state.all[key] = continuation
            return key
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.subscribers.withLock { $0.all.removeValue(forKey: key) }
        }
        continuation.yield(orientation)
        return stream
    }

    /// Ends every subscriber's sequence.
    func finish() {
        let continuations = subscribers.withLock { state -> [AsyncStream<VideoOrientation>.Continuation] in
            defer { state.all.removeAll() }
            return Array(state.all.values)
        }
        for continuation in continuations { continuation.finish() }
    }

    private static func code(_ orientation: VideoOrientation) -> UInt8 { UInt8(orientation.rotationDegrees / 90) }
    private static func orientation(_ code: UInt8) -> VideoOrientation { VideoOrientation(rotationDegrees: Int(code) * 90) ?? .up }
}

extension VideoOrientation {
    /// This rotation followed by `other` (the clockwise degrees add up).
    public func adding(_ other: VideoOrientation) -> VideoOrientation {
        VideoOrientation(rotationDegrees: rotationDegrees + other.rotationDegrees) ?? .up
    }

    /// The same orientation seen in a mirror image (left and right swap): what a front camera
    /// needs, since it looks the opposite way to the viewer.
    public var mirrored: VideoOrientation {
        switch self {
        case .left: return .right
        case .right: return .left
        default: return self
        }
    }
}
