import XCTest
@testable import MediaDevicesAudio
@testable import MediaDevicesCore

/// A chunk's timestamp: derived from the capture side's anchor (a period's recording time and
/// its place in the bus), advancing at the sample rate, with fake times.
final class AudioChunkTimestampTests: XCTestCase {
    private let format = AudioFormat(sampleRate: 48000, channels: 2, sampleFormat: .s16LE)

    /// Writes `frames` frames through the drivers' path, the first recorded at `time` ns.
    private func writePeriod(_ bus: AudioBus, frames: Int, time: Int64) {
        let samples = [Int16](repeating: 7, count: frames * 2)
        samples.withUnsafeBytes { bytes in
            bus.writeCaptureBytes(bytes.baseAddress!, count: bytes.count, frameBytes: 4, sampleBytes: 2, time: time)
        }
    }

    func testChunksTakeTheirTimeFromThePeriodsTheyCameIn() async throws {
        let driver = AudioDriver()
        driver.bus.setCaptureFormat(format)
        // Two periods of 960 frames (20 ms); the second recorded 20 ms after the first, as a device
        // gives it; read back as 10 ms chunks.
        writePeriod(driver.bus, frames: 960, time: 5_000_000_000)
        var chunks: [AudioChunk] = []
        var iterator = driver.capturedChunks().makeAsyncIterator()
        chunks.append(try await iterator.next()!)  // frames 0..<480, first period
        writePeriod(driver.bus, frames: 960, time: 5_020_000_000)
        while let chunk = try await iterator.next() { chunks.append(chunk) }
        XCTAssertEqual(chunks.map(\.frames), [480, 480, 480, 480])
        XCTAssertEqual(chunks.map(\.timestamp.nanoseconds), [5_000_000_000, 5_010_000_000, 5_020_000_000, 5_030_000_000],
                       "each chunk 10 ms (480 frames at 48 kHz) after the one before, from the period's time")
    }

    func testAPeriodRecordedLateMovesTheChunksThatFollowIt() async throws {
        let driver = AudioDriver()
        driver.bus.setCaptureFormat(format)
        // The device lost 5 ms between the periods (its clock says so): the chunk of the second
        // period carries that time, not a count of frames.
        writePeriod(driver.bus, frames: 480, time: 1_000_000_000)
        var iterator = driver.capturedChunks().makeAsyncIterator()
        let first = try await iterator.next()!
        writePeriod(driver.bus, frames: 480, time: 1_015_000_000)
        let second = try await iterator.next()!
        XCTAssertEqual(first.timestamp.nanoseconds, 1_000_000_000)
        XCTAssertEqual(second.timestamp.nanoseconds, 1_015_000_000)
        XCTAssertEqual(second.startFrame, 480, "the frame count goes on; the time tells the gap")
    }

    func testTheAnchorExtrapolatesAtTheByteRateBothWays() {
        let anchor = (position: 19_200, time: Int64(2_000_000_000))
        // 192 000 bytes a second (48 kHz stereo s16): 1920 bytes are 10 ms.
        XCTAssertEqual(CaptureTimeAnchor.time(at: 19_200 + 1920, anchor: anchor, bytesPerSecond: 192_000), 2_010_000_000)
        XCTAssertEqual(CaptureTimeAnchor.time(at: 19_200 - 1920, anchor: anchor, bytesPerSecond: 192_000), 1_990_000_000)
        XCTAssertEqual(CaptureTimeAnchor.time(at: 19_200 + 192_000 * 3600, anchor: anchor, bytesPerSecond: 192_000), 3_602_000_000_000,
                       "an hour ahead without overflowing")
        let stored = CaptureTimeAnchor()
        XCTAssertNil(stored.load(), "no time before the capture side gives one")
        stored.store(position: 100, time: 42)
        XCTAssertEqual(stored.load()?.position, 100)
        XCTAssertEqual(stored.load()?.time, 42)
    }

    func testWithoutADeviceTimeAPeriodWasRecordedItsDelayAndLengthBeforeItWasRead() {
        // Read at 10 s with 30 ms still buffered behind it (the Pulse stream's latency), 480
        // frames at 48 kHz (10 ms): its first frame was recorded at 10 s − 40 ms.
        XCTAssertEqual(AudioBusPort.recordingTime(readAt: 10_000_000_000, delaySeconds: 0.030, frames: 480, sampleRate: 48000), 9_960_000_000)
        XCTAssertEqual(AudioBusPort.recordingTime(readAt: 10_000_000_000, delaySeconds: 0, frames: 0, sampleRate: 48000), 10_000_000_000)
    }

    func testThePublicWritePathStampsSamplesAsEndingWhenHandedOver() async throws {
        let driver = AudioDriver()
        driver.bus.setCaptureFormat(format)
        let before = MonotonicClock.now()
        let samples = [Int16](repeating: 1, count: 960)  // 480 frames: 10 ms
        _ = samples.withUnsafeBufferPointer { driver.bus.writeCaptureData($0) }
        let after = MonotonicClock.now()
        var iterator = driver.capturedChunks().makeAsyncIterator()
        let chunk = try await iterator.next()!
        XCTAssertGreaterThanOrEqual(chunk.timestamp.nanoseconds, before - 10_000_000)
        XCTAssertLessThanOrEqual(chunk.timestamp.nanoseconds, after - 10_000_000)
    }
}
