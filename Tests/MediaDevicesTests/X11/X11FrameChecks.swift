import Synchronization
@testable import MediaDevices
@testable import MediaDevicesAudio
@testable import MediaDevicesVideo
@testable import MediaDevicesCore
import XCTest

/// The pixels of an `XBGR32` frame that differ from `expected(x, y)` (0x00RRGGBB, frame
/// coordinates), compared on R, G and B.
func pixelMismatches(_ frame: VideoFrame, _ expected: (Int, Int) -> UInt32) -> [(x: Int, y: Int, got: UInt32, expected: UInt32)] {
    XCTAssertEqual(frame.format.pixelFormat, .xbgr32)
    let plane = frame.plane(0)
    var found: [(x: Int, y: Int, got: UInt32, expected: UInt32)] = []
    for y in 0..<frame.format.height {
        for x in 0..<frame.format.width {
            let offset = y * plane.bytesPerRow + x * 4
            let got = UInt32(plane.bytes[offset + 2]) << 16 | UInt32(plane.bytes[offset + 1]) << 8 | UInt32(plane.bytes[offset])
            if got != expected(x, y), found.count < 10 { found.append((x, y, got, expected(x, y))) }
        }
    }
    return found
}

/// Records each frame's size and whether `check` accepted it, and the error capture ended with.
final class CheckedFrames: VideoFrameConsumer, @unchecked Sendable {
    let results = Mutex<[(size: Size, matches: Bool)]>([])
    let stopError = Mutex<MediaDevicesError?>(nil)
    private let check: (VideoFrame) -> Bool
    init(_ check: @escaping (VideoFrame) -> Bool) { self.check = check }
    func consumeFrame(_ frame: VideoFrame) {
        let matches = check(frame)
        results.withLock { $0.append((frame.format.size, matches)) }
    }
    func captureDidStop(error: MediaDevicesError?) { stopError.withLock { $0 = error } }
    /// The sizes seen so far.
    var sizes: [Size] { results.withLock { $0.map(\.size) } }
}
