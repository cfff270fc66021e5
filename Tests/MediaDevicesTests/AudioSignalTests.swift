import Foundation
import MediaDevices
import XCTest
import TestSupport

/// Sine and noise generators, tone analysis and WAV files.
final class AudioSignalTests: XCTestCase {
    func testSineFrequencyAndLevelMeasureAsGenerated() throws {
        for (frequency, rate) in [(997.0, 48000), (440.0, 44100), (3000.0, 16000)] {
            var sine = SineGenerator(frequency: frequency, amplitude: 0.5, sampleRate: rate)
            // Two calls: the phase carries over, so the halves join without a click.
            let samples = sine.samples(frames: rate / 2, channels: 1) + sine.samples(frames: rate / 2, channels: 1)
            let measured = try XCTUnwrap(ToneAnalysis.frequency(of: samples, sampleRate: rate))
            XCTAssertEqual(measured, frequency, accuracy: 0.01)
            XCTAssertEqual(ToneAnalysis.medianFrequency(of: samples, sampleRate: rate) ?? 0, frequency, accuracy: 0.1, "100 ms windows: linear interpolation of 5-sample cycles")
            XCTAssertEqual(ToneAnalysis.rmsDecibels(of: samples), ToneAnalysis.sineDecibels(amplitude: 0.5), accuracy: 0.01)
        }
        XCTAssertEqual(ToneAnalysis.sineDecibels(amplitude: 1), -3.0103, accuracy: 0.001)
        XCTAssertNil(ToneAnalysis.frequency(of: [Float](repeating: 0, count: 1000), sampleRate: 48000), "silence has no frequency")
    }

    func testStereoSineHasTheToneOnBothChannelsAndAnalysisSeesAWrongTone() throws {
        var sine = SineGenerator(frequency: 1000, amplitude: 0.25, sampleRate: 48000)
        let samples = sine.samples(frames: 24000, channels: 2)
        for channel in 0..<2 {
            let one = ToneAnalysis.channel(channel, of: samples, channels: 2)
            XCTAssertEqual(one.count, 24000)
            XCTAssertEqual(ToneAnalysis.frequency(of: one, sampleRate: 48000) ?? 0, 1000, accuracy: 0.01)
        }
        // Read as mono, the interleaved stereo tone halves: the analysis is not fooled.
        XCTAssertEqual(ToneAnalysis.frequency(of: samples, sampleRate: 48000) ?? 0, 500, accuracy: 0.01)
        // A gap lowers the whole-span estimate, the windowed median stays on the tone.
        var gapped = ToneAnalysis.channel(0, of: samples, channels: 2)
        for i in 9000..<11000 { gapped[i] = 0 }
        XCTAssertGreaterThan(abs(ToneAnalysis.frequency(of: gapped, sampleRate: 48000)! - 1000), 1)
        XCTAssertEqual(ToneAnalysis.medianFrequency(of: gapped, sampleRate: 48000) ?? 0, 1000, accuracy: 0.05)
        XCTAssertLessThan(ToneAnalysis.rmsDecibels(of: gapped), ToneAnalysis.sineDecibels(amplitude: 0.25) - 0.3, "the gap lowers the overall level")
        XCTAssertEqual(ToneAnalysis.medianRMSDecibels(of: gapped, sampleRate: 48000), ToneAnalysis.sineDecibels(amplitude: 0.25), accuracy: 0.01)
        XCTAssertEqual(ToneAnalysis.onset(in: [0, 0.01, -0.3, 0.5], threshold: 0.2), 2)
    }

    func testWhiteNoiseIsUniformZeroMeanAndRepeatable() {
        var noise = WhiteNoiseGenerator(amplitude: 0.5, seed: 42)
        var samples = [Float](repeating: 0, count: 100_000)
        samples.withUnsafeMutableBufferPointer { noise.fill($0) }
        let mean = samples.reduce(0, +) / Float(samples.count)
        XCTAssertEqual(mean, 0, accuracy: 0.01)
        XCTAssertLessThanOrEqual(samples.map(abs).max()!, 0.5)
        XCTAssertGreaterThan(samples.map(abs).max()!, 0.49)
        // Uniform in -A...A: RMS is A/sqrt(3).
        XCTAssertEqual(ToneAnalysis.rmsDecibels(of: samples), 20 * log10(0.5 / 3.0.squareRoot()), accuracy: 0.1)
        var again = WhiteNoiseGenerator(amplitude: 0.5, seed: 42)
        XCTAssertEqual((0..<10).map { _ in again.next() }, Array(samples[0..<10]))
        var other = WhiteNoiseGenerator(amplitude: 0.5, seed: 43)
        XCTAssertNotEqual((0..<10).map { _ in other.next() }, Array(samples[0..<10]))
        var ints = [Int16](repeating: 0, count: 1000)
        ints.withUnsafeMutableBufferPointer { noise.fill($0) }
        XCTAssertTrue(ints.allSatisfy { abs(Int($0)) <= 16384 })
    }

    func testWAVRoundTripInEachSampleFormat() throws {
        let directory = FileManager.default.temporaryDirectory.path
        var sine = SineGenerator(frequency: 997, amplitude: 0.5, sampleRate: 44100)
        let samples = sine.samples(frames: 4410, channels: 2)
        for sampleFormat in SampleFormat.allCases {
            let path = "\(directory)/mediadevices-\(sampleFormat).wav"
            let format = AudioFormat(sampleRate: 44100, channels: 2, sampleFormat: sampleFormat)
            let writer = try WAVWriter(path: path, format: format)
            try writer.write(samples)
            try writer.close()
            let size = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int
            XCTAssertEqual(size, 44 + 4410 * format.bytesPerFrame)
            let file = try WAVFile(path: path)
            XCTAssertEqual(file.format, format)
            XCTAssertEqual(file.frames, 4410)
            let back = file.floatSamples()
            let tolerance: Float = sampleFormat == .s16LE ? 1.0 / 32768 : 1e-7
            XCTAssertEqual(zip(back, samples).map { abs($0 - $1) }.max()!, 0, accuracy: tolerance, "\(sampleFormat)")
            try? FileManager.default.removeItem(atPath: path)
        }
    }

    func testWAVReaderAcceptsExtensibleAndRejectsWhatItCannotRead() throws {
        // WAVE_FORMAT_EXTENSIBLE (0xFFFE) with the float sub-format, and an odd chunk before data.
        var bytes: [UInt8] = Array("RIFF".utf8) + le32(0) + Array("WAVE".utf8)
        bytes += Array("fmt ".utf8) + le32(40) + le16(0xFFFE) + le16(1) + le32(8000) + le32(32000) + le16(4) + le16(32)
        bytes += le16(22) + le16(32) + le32(4) + le16(3) + [UInt8](repeating: 0, count: 14)
        bytes += Array("LIST".utf8) + le32(3) + [1, 2, 3, 0]
        bytes += Array("data".utf8) + le32(8) + withUnsafeBytes(of: Float(0.5)) { Array($0) } + withUnsafeBytes(of: Float(-1)) { Array($0) }
        let file = try WAVFile(bytes: bytes)
        XCTAssertEqual(file.format, AudioFormat(sampleRate: 8000, channels: 1, sampleFormat: .floatLE))
        XCTAssertEqual(file.floatSamples(), [0.5, -1])

        XCTAssertThrowsError(try WAVFile(bytes: Array("RIFX0000WAVE".utf8))) { XCTAssertEqual(($0 as? MediaDevicesError)?.code, .io) }
        var eightBit: [UInt8] = Array("RIFF".utf8) + le32(0) + Array("WAVE".utf8)
        eightBit += Array("fmt ".utf8) + le32(16) + le16(1) + le16(1) + le32(8000) + le32(8000) + le16(1) + le16(8)
        XCTAssertThrowsError(try WAVFile(bytes: eightBit)) { error in
            XCTAssertEqual((error as? MediaDevicesError)?.code, .unsupportedFormat)
            XCTAssertTrue("\(error)".contains("pcm_s16le"), "names a remedy: \(error)")
        }
        XCTAssertThrowsError(try WAVWriter(path: "/nonexistent-dir/x.wav", format: AudioFormat(sampleRate: 8000, channels: 1))) {
            XCTAssertEqual(($0 as? MediaDevicesError)?.code, .notFound)
        }
    }

    private func le32(_ value: Int) -> [UInt8] { withUnsafeBytes(of: UInt32(value).littleEndian) { Array($0) } }
    private func le16(_ value: Int) -> [UInt8] { withUnsafeBytes(of: UInt16(value).littleEndian) { Array($0) } }
}
