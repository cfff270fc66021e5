import Foundation
import MediaDevices
import XCTest

/// A consumer that records every frame's metadata, keeps a copy of one chosen frame's planes,
/// and signals when it has seen `target` frames or capture stopped.
final class FrameRecorder: VideoFrameConsumer, @unchecked Sendable {
    struct Record {
        var timestamp: UInt64
        var sequence: UInt32
        var format: VideoFormat
        var captureDelay: Duration
        var orientation: VideoOrientation = .up
    }

    private let lock = NSLock()
    private let target: Int
    private let keepIndex: Int
    private var signalled = false
    private(set) var records: [Record] = []
    /// The kept frame's planes, copied, with their strides.
    private(set) var kept: [(bytes: [UInt8], bytesPerRow: Int)] = []
    private(set) var keptFormat: VideoFormat?
    private(set) var stopError: MediaDevicesError?
    private(set) var stopCount = 0
    let reached = DispatchSemaphore(value: 0)

    /// Signals after `target` frames; keeps a copy of frame number `keepIndex` (0-based).
    init(target: Int, keepIndex: Int = 5) {
        self.target = target
        self.keepIndex = keepIndex
        records.reserveCapacity(target * 4)
    }

    func consumeFrame(_ frame: VideoFrame) {
        lock.lock(); defer { lock.unlock() }
        if records.count == keepIndex {
            kept = (0..<frame.planeCount).map { (Array(frame.plane($0).bytes), frame.plane($0).bytesPerRow) }
            keptFormat = frame.format
        }
        records.append(Record(timestamp: frame.timestamp.nanoseconds, sequence: frame.sequence, format: frame.format, captureDelay: frame.captureDelay,
                              orientation: frame.orientation))
        if records.count == target { signal() }
    }

    func captureDidStop(error: MediaDevicesError?) {
        lock.lock(); defer { lock.unlock() }
        stopError = error
        stopCount += 1
        signal()
    }

    private func signal() {
        if !signalled { signalled = true; reached.signal() }
    }

    /// Waits up to `seconds` for the target; false on timeout.
    func wait(seconds: Double) -> Bool { reached.wait(timeout: .now() + seconds) == .success }

    /// The same for async tests: it sleeps instead of blocking its thread, which may be the
    /// cooperative pool's only one (one CPU), needed by the tasks the test waits for.
    func wait(seconds: Double) async -> Bool { await Soak.wait(reached, seconds: seconds) }

    /// Waits up to `seconds` until the consumer has heard `captureDidStop` (the source reports
    /// `isCapturing == false` just before it tells the consumer, so a test that read
    /// `stopError` as soon as `isCapturing` turned false raced the capture thread); false on
    /// timeout. It does not consume the stop: asking again returns true at once.
    func waitForStop(seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if hasStopped { return true }
            usleep(10_000)
        }
        return hasStopped
    }

    /// The same for async tests, sleeping instead of blocking its thread.
    func waitForStop(seconds: Double) async -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if hasStopped { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return hasStopped
    }

    private var hasStopped: Bool { lock.lock(); defer { lock.unlock() }; return stopCount > 0 }

    /// The number of frames seen so far.
    var count: Int { lock.lock(); defer { lock.unlock() }; return records.count }

    /// A copy of the records so far.
    var snapshot: [Record] { lock.lock(); defer { lock.unlock() }; return records }
}

/// 100% colour bars in BT.601 limited range, left to right (ITU-R BT.601 / EBU values):
/// white, yellow, cyan, green, magenta, red, blue, black as (Y, Cb, Cr).
let colourBarsYCbCr: [(y: Int, cb: Int, cr: Int)] = [
    (235, 128, 128), (210, 16, 146), (170, 166, 16), (145, 54, 34),
    (106, 202, 222), (81, 90, 240), (41, 240, 110), (16, 128, 128),
]

/// Reads Y, Cb, Cr at pixel (x, y) of a kept frame in YUYV, NV12 or NV12M.
func sampleYCbCr(_ planes: [(bytes: [UInt8], bytesPerRow: Int)], format: VideoFormat, x: Int, y: Int) -> (y: Int, cb: Int, cr: Int) {
    let even = x & ~1
    switch format.pixelFormat {
    case .yuyv:
        let row = y * planes[0].bytesPerRow
        return (Int(planes[0].bytes[row + x * 2]), Int(planes[0].bytes[row + even * 2 + 1]), Int(planes[0].bytes[row + even * 2 + 3]))
    default:  // NV12, NV12M: Y plane, then interleaved CbCr at half resolution
        let luma = Int(planes[0].bytes[y * planes[0].bytesPerRow + x])
        let chroma = (y / 2) * planes[1].bytesPerRow + even
        return (luma, Int(planes[1].bytes[chroma]), Int(planes[1].bytes[chroma + 1]))
    }
}
