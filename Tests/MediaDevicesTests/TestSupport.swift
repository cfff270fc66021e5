import XCTest
@testable import MediaDevices
@testable import MediaDevicesAudio
@testable import MediaDevicesVideo
@testable import MediaDevicesCore

/// Builds a one-plane GREY frame over `bytes` (the caller's own memory) and lends it to `body`.
func withGreyFrame<R>(sequence: UInt32, timestamp: UInt64 = 0, bytes: [UInt8],
                      captureDelay: Duration = .zero, _ body: (VideoFrame) throws -> R) rethrows -> R {
    let format = VideoFormat(pixelFormat: .grey, width: bytes.count, height: 1,
                             bytesPerRow: [bytes.count], bufferSizes: [bytes.count])
    return try bytes.withUnsafeBytes { raw in
        let frame = VideoFrame(format: format, timestamp: MonotonicInstant(nanoseconds: timestamp), sequence: sequence, orientation: .up,
                               captureDelay: captureDelay, planeCount: 1, bytesUsed: raw.count,
                               plane0: FramePlane(bytes: raw, bytesPerRow: raw.count))
        return try body(frame)
    }
}

/// Four bytes that identify frame `sequence`.
func marker(_ sequence: UInt32) -> [UInt8] {
    let s = UInt8(truncatingIfNeeded: sequence)
    return [s, s &+ 1, s &+ 2, s &+ 3]
}
