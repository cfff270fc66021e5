import XCTest
@testable import MediaDevices
@testable import MediaDevicesAudio
@testable import MediaDevicesVideo
@testable import MediaDevicesCore
import TestSupport

/// Levels (peak and RMS per channel, dBFS, the meter line) and the chunk sequence over a bus:
/// fixed-size chunks in order, the rest as a short last chunk once capture is not running.
final class AudioChunksTests: XCTestCase {
    func testLevelsOfASineAndOfSilencePerChannel() {
        // Left: a 0.5 sine (RMS 0.354, −9.03 dBFS; peak 0.5, −6.02 dBFS). Right: silence.
        var sine = SineGenerator(frequency: 1000, amplitude: 0.5, sampleRate: 48000)
        var mono = [Float](repeating: 0, count: 4800)
        mono.withUnsafeMutableBufferPointer { sine.fill($0, channels: 1) }
        let stereo: [Float] = mono.flatMap { [$0, Float(0)] }
        let level = stereo.withUnsafeBufferPointer { AudioLevel(samples: $0, channels: 2) }
        XCTAssertEqual(level.rmsDecibels[0], -9.03, accuracy: 0.02)
        XCTAssertEqual(level.peakDecibels[0], -6.02, accuracy: 0.02)
        XCTAssertEqual(level.rms[1], 0)
        XCTAssertEqual(level.rmsDecibels[1], -.infinity)
        let meter = level.meter(width: 30)
        XCTAssertTrue(meter.hasPrefix("ch1 [" + String(repeating: "#", count: 25)), meter)  // −9.03 dBFS on a −60…0 dBFS scale of 30 cells
        XCTAssertTrue(meter.contains("rms   -9.0 peak   -6.0 dBFS"), meter)
        XCTAssertTrue(meter.contains("ch2 [" + String(repeating: " ", count: 30) + "] rms   -inf peak   -inf dBFS"), meter)
    }

    func testChunksComeInOrderAndTheRestComesShortOnceStopped() async throws {
        let driver = AudioDriver()
        let format = AudioFormat(sampleRate: 48000, channels: 2, sampleFormat: .s16LE)
        driver.bus.setCaptureFormat(format)
        // 1000 frames whose left sample counts frames and whose right sample is its negative.
        let samples: [Int16] = (0..<1000).flatMap { [Int16($0), -Int16($0)] }
        XCTAssertEqual(samples.withUnsafeBufferPointer { driver.bus.writeCaptureData($0) }, 2000)
        var chunks: [AudioChunk] = []
        for try await chunk in driver.capturedChunks() { chunks.append(chunk) }  // not capturing: drains, then ends
        XCTAssertEqual(chunks.map(\.frames), [480, 480, 40], "10 ms chunks, the rest short")
        XCTAssertEqual(chunks.map(\.startFrame), [0, 480, 960])
        for chunk in chunks {
            XCTAssertEqual(chunk.format, format)
            for frame in [0, chunk.frames - 1] {
                XCTAssertEqual(chunk.samples[2 * frame], Float(chunk.startFrame + frame) / 32768, "left of frame \(frame)")
                XCTAssertEqual(chunk.samples[2 * frame + 1], -Float(chunk.startFrame + frame) / 32768)
            }
            XCTAssertEqual(chunk.level.peak[0], Float(chunk.startFrame + chunk.frames - 1) / 32768)
        }
        XCTAssertEqual(driver.bus.captureSamplesAvailable, 0)
    }
}
