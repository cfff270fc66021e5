import MediaDevices
import TestSupport
import XCTest

/// `VoiceProcessor.latency` is what the processing delays the capture by: with it taken out, the
/// processed near-end talker lines up with the clean one (found by cross-correlation).
final class VoiceProcessorLatencyTests: XCTestCase {
    /// The lag (frames) at which the processed capture correlates best with its input, once the
    /// processor's reported latency is taken out; searched over ±20 ms.
    func residualLag(rate: Int, processing: VoiceProcessing, library: VoiceProcessingLibrary) throws -> (lag: Int, correlation: Double) {
        let s = try VoiceRoomScenario(sampleRate: rate)
        let talk = Array(s.near[Int(s.nearStart) * rate..<(Int(s.nearStart) + 4) * rate])
        let processor = try VoiceProcessor(format: AudioFormat(sampleRate: rate, channels: 1, sampleFormat: .floatLE),
                                           options: VoiceProcessingOptions(processing: processing, library: library))
        let out = VoiceRoomScenario.run(processor, far: [Float](repeating: 0, count: talk.count), capture: talk, chunkFrames: rate * 7 / 1000) { _ in .milliseconds(100) }
        let window = rate / 50, a = Array(talk[rate..<3 * rate])
        var best = (lag: 0, correlation: -1.0)
        for lag in -window...window {
            let c = s.correlation(a, Array(out[rate + lag..<3 * rate + lag])) { _ in true }
            if c > best.correlation { best = (lag, c) }
        }
        return best
    }

    func testReportedLatencyLinesTheCaptureUp() throws {
        let cases: [(Int, VoiceProcessing, VoiceProcessingLibrary)] = [
            (48000, .all, .webRTC), (16000, .all, .webRTC), (8000, VoiceProcessing(echoCancellation: true), .webRTC), (32000, VoiceProcessing(noiseSuppression: true), .webRTC),
            (16000, .all, .speexDSP), (16000, .none, .webRTC),
        ]
        for (rate, processing, library) in cases {
            let (lag, correlation) = try residualLag(rate: rate, processing: processing, library: library)
            print("\(library) \(rate) Hz \(processing): residual lag \(lag) frames (correlation \(String(format: "%.3f", correlation)))")
            XCTAssertLessThanOrEqual(abs(lag), 1, "\(library) \(rate) Hz \(processing)")
            XCTAssertGreaterThan(correlation, 0.8, "\(library) \(rate) Hz \(processing)")
        }
    }
}
