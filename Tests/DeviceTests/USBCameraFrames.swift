import Foundation
import MediaDevices
import XCTest

/// What a test keeps of the USB camera's raw frames: each frame's V4L2 sequence number and the
/// frame counter the camera put in it, and (for MJPEG) whether its bytes equal the JPEG the
/// camera sent for that counter.
final class USBFrameLog: VideoFrameConsumer, @unchecked Sendable {
    struct Entry { var sequence: UInt32; var counter: Int? }
    private let lock = NSLock()
    private let camera: USBCamera
    private var entries: [Entry] = []
    private var mismatches: [String] = []
    private var stops: [MediaDevicesError?] = []
    private var stopTime: UInt64 = 0

    init(camera: USBCamera) { self.camera = camera }

    func consumeFrame(_ frame: VideoFrame) {
        let plane = frame.plane(0)
        let size = Size(width: frame.width, height: frame.height)
        var counter: Int?
        var mismatch: String?
        if frame.format.pixelFormat == .mjpeg {
            let bytes = UnsafeRawBufferPointer(rebasing: plane.bytes[0..<min(frame.bytesUsed, plane.bytes.count)])
            counter = USBCamera.counter(jpeg: bytes)
            if let counter, camera.jpeg(size, counter: UInt32(counter)) != Array(bytes) {
                mismatch = "sequence \(frame.sequence) (counter \(counter)): \(bytes.count) bytes differ from the JPEG the camera sent"
            }
        } else {
            counter = USBCamera.counter(yuyv: plane.bytes, bytesPerRow: plane.bytesPerRow, size: size)
        }
        lock.withLock {
            entries.append(Entry(sequence: frame.sequence, counter: counter))
            if let mismatch { mismatches.append(mismatch) }
        }
    }

    func captureDidStop(error: MediaDevicesError?) {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        lock.withLock {
            stops.append(error)
            stopTime = UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
        }
    }

    var all: [Entry] { lock.withLock { entries } }
    var count: Int { lock.withLock { entries.count } }
    var byteMismatches: [String] { lock.withLock { mismatches } }
    var stopErrors: [MediaDevicesError?] { lock.withLock { stops } }
    /// CLOCK_MONOTONIC nanoseconds of the last `captureDidStop`.
    var stoppedAt: UInt64 { lock.withLock { stopTime } }

    /// The counter of the frame with V4L2 sequence `sequence`.
    func counter(sequence: UInt32) -> Int? { lock.withLock { entries.first { $0.sequence == sequence }?.counter } }

    /// Waits until `count` frames arrived; false after `seconds`.
    func wait(for count: Int, seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if self.count >= count { return true }
            usleep(10_000)
        }
        return false
    }

    /// Waits until a frame with a counter above `counter` arrived; false after `seconds`.
    func wait(forCounterAbove counter: UInt32, seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if all.contains(where: { ($0.counter ?? -1) > Int(counter) }) { return true }
            usleep(10_000)
        }
        return false
    }

    /// Waits until capture stopped; false after `seconds`.
    func waitForStop(seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if !stopErrors.isEmpty { return true }
            usleep(5_000)
        }
        return false
    }
}

/// A converted frame copied out of a `frames(bufferSize:output:)` sequence, planes tight.
struct CopiedFrame {
    var sequence: UInt32
    var size: Size
    var planes: [[UInt8]]

    init(_ buffer: VideoFrameBuffer) {
        sequence = buffer.sequence
        size = Size(width: buffer.format.width, height: buffer.format.height)
        planes = buffer.withFrame { frame in
            (0..<frame.planeCount).map { index in
                let plane = frame.plane(index)
                let isChroma = index > 0
                let rowBytes = frame.format.pixelFormat == .argb ? frame.width * 4 : isChroma ? (frame.width + 1) / 2 : frame.width
                let rows = isChroma ? (frame.height + 1) / 2 : frame.height
                var bytes = [UInt8]()
                bytes.reserveCapacity(rowBytes * rows)
                for row in 0..<rows { bytes += plane.bytes[(row * plane.bytesPerRow)..<(row * plane.bytesPerRow + rowBytes)] }
                return bytes
            }
        }
    }
}

/// The first `count` frames of `frames`, or fewer if `source` had to be stopped after `seconds`.
func firstFrames(_ frames: VideoFrames, count: Int, seconds: Double, stopping source: VideoSource) async throws -> [CopiedFrame] {
    let watchdog = Task {
        try await Task.sleep(for: .seconds(seconds))
        source.stop()
    }
    defer { watchdog.cancel() }
    var copied: [CopiedFrame] = []
    for try await buffer in frames {
        copied.append(CopiedFrame(buffer))
        if copied.count == count { break }
    }
    return copied
}

/// How many numbers between the least and the greatest of `numbers` never came (frames lost on
/// the way), whatever order the rest came in: uvcvideo completes buffers from an unbound
/// workqueue, so a frame can be dequeued after a newer one (in a rig run the raw consumer saw
/// a number one below the one before it).
func missingNumbers<Numbers: Collection>(_ numbers: Numbers) -> Int where Numbers.Element: BinaryInteger {
    guard let least = numbers.min(), let greatest = numbers.max() else { return 0 }
    return Int(greatest - least) + 1 - Set(numbers.map { Int($0) }).count
}
