@testable import MediaDevices
@testable import MediaDevicesAudio
@testable import MediaDevicesVideo
@testable import MediaDevicesCore

extension FrameQueue {
    /// The next frame through the sequence's own iterator (the path `for try await` takes).
    func next() async throws -> VideoFrameBuffer? {
        var iterator = VideoFrames.AsyncIterator(queue: self)
        return try await iterator.next(isolation: nil)
    }
}
