import AllocationCounter
@testable import MediaDevices
import TestSupport
import XCTest

/// The driver's voice-processing path without devices: what the audio threads do in the bus
/// (`writeCaptureBytes` processes the capture, `readRenderBytes` feeds the reference), with the
/// render side at another format (48 kHz stereo S16 against 16 kHz mono float: the reference is
/// resampled) and the echo delay taken from the delays the sides report.
final class VoiceProcessingBusTests: XCTestCase {
    func testBusPathCancelsEchoAcrossFormatsWithoutAllocating() throws {
        let captureFormat = AudioFormat(sampleRate: 16000, channels: 1, sampleFormat: .floatLE)
        let renderFormat = AudioFormat(sampleRate: 48000, channels: 2, sampleFormat: .s16LE)
        let far48 = SimulatedRoom.scaled(try SpokenSpeech.speak(VoiceRoomScenario.farText, voice: "en-us", sampleRate: 48000), toRMS: -20)
        let far16 = try SpokenSpeech.resample(far48, from: 48000, to: 16000)
        let echo = SimulatedRoom(sampleRate: 16000, echoDelay: 0.12, echoLossDB: 10).echo(of: far16)

        let bus = AudioBus()
        bus.setCaptureFormat(captureFormat)
        bus.setRenderFormat(renderFormat)
        let processor = try VoiceProcessor(format: captureFormat, options: VoiceProcessingOptions(processing: .echoCancellation))
        bus.voice.install(try VoiceSession(processor: processor, renderFormat: renderFormat))
        // What the ports report each period: 50 ms render delay, 70 ms capture delay.
        bus.voice.setRenderDelay(0.05)
        bus.voice.setCaptureDelay(0.07)

        let steps = min(far48.count / 480, echo.count / 160)
        var playable = [Int16](repeating: 0, count: 960), played = [UInt8](repeating: 0, count: 960 * 2)
        var captured = [Float](repeating: 0, count: 160), out = [Float](repeating: 0, count: 160)
        var output: [Float] = []
        output.reserveCapacity(steps * 160)
        var allocations: UInt64 = 0
        for step in 0..<steps {
            for frame in 0..<480 {
                let sample = SampleConversion.int16(far48[step * 480 + frame])
                playable[2 * frame] = sample
                playable[2 * frame + 1] = sample
            }
            for index in 0..<160 { captured[index] = echo[step * 160 + index] }
            _ = playable.withUnsafeBufferPointer { bus.writeRenderData($0) }
            let before = allocation_counter_this_thread()
            _ = played.withUnsafeMutableBytes { bus.readRenderBytes(into: $0.baseAddress!, count: 960 * 2, frameBytes: 4, sampleBytes: 2, countShortfall: true) }
            captured.withUnsafeBytes { bus.writeCaptureBytes($0.baseAddress!, count: 160 * 4, frameBytes: 4, sampleBytes: 4) }
            if step >= 100 { allocations += allocation_counter_this_thread() - before }
            let got = out.withUnsafeMutableBufferPointer { bus.readCaptureData(into: $0) }
            XCTAssertEqual(got, 160)
            output += out
        }
        let aligned = Array(output.dropFirst(processor.latencyFrames))
        let activity = VoiceRoomScenario.blockLevels(echo, blockFrames: 160)
        let loudest = activity.max() ?? 0
        var a = 0.0, b = 0.0
        for block in 200..<aligned.count / 160 where activity[block] > loudest - 30 {
            for index in block * 160..<(block + 1) * 160 {
                a += Double(echo[index] * echo[index])
                b += Double(aligned[index] * aligned[index])
            }
        }
        let erle = 10 * log10(a / max(b, 1e-20))
        print("bus path, render 48 kHz stereo, capture 16 kHz mono: ERLE \(String(format: "%.1f", erle)) dB, \(allocations) allocations")
        XCTAssertGreaterThanOrEqual(erle, 25)
        if allocation_counter_is_active() != 0 { XCTAssertEqual(allocations, 0) }
    }
}
