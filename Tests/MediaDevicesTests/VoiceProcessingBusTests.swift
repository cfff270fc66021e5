import AllocationCounter
@testable import MediaDevices
@testable import MediaDevicesAudio
@testable import MediaDevicesVideo
@testable import MediaDevicesCore
import TestSupport
import XCTest

/// The driver's voice-processing path without devices: what the audio threads do in the bus
/// (`writeCaptureBytes` processes the capture, `readRenderBytes` feeds the reference), with the
/// render side at another format (48 kHz stereo S16 against 16 kHz mono float: the reference is
/// resampled) and the reference aligned by the times the sides stamp: a render period read at
/// T is heard at T + 50 ms, a capture period handed over at T was recorded at T - 70 ms, so the
/// echo comes back 120 ms after the render tap. At 3 s the capture loses 100 ms (an overrun:
/// the thread fell behind; the device reports the gap), from 5 s the stamps jitter, and one
/// strays by 40 ms alone.
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
        let processor = try VoiceProcessor(format: captureFormat, options: VoiceProcessingOptions(processing: VoiceProcessing(echoCancellation: true)))
        bus.voice.install(try VoiceSession(processor: processor, renderFormat: renderFormat))
        let start: Int64 = 1_000_000_000_000  // the monotonic clock at step 0
        // From 5 s on the stamps jitter by up to 3 ms; at 6 s one stamp on each side is 40 ms off
        // (a late timer), the next back.
        func jitter(_ step: Int) -> Int64 { step == 600 ? 40_000_000 : step >= 500 ? Int64(step * 7919 % 7 - 3) * 1_000_000 : 0 }

        let steps = min(far48.count / 480, echo.count / 160)
        var playable = [Int16](repeating: 0, count: 960), played = [UInt8](repeating: 0, count: 960 * 2)
        var captured = [Float](repeating: 0, count: 160), out = [Float](repeating: 0, count: 160)
        var output: [Float] = [], written: [Int] = []
        output.reserveCapacity(steps * 160)
        written.reserveCapacity(steps * 160)
        var allocations: UInt64 = 0, refusals: [String] = []
        for step in 0..<steps {
            for frame in 0..<480 {
                let sample = SampleConversion.int16(far48[step * 480 + frame])
                playable[2 * frame] = sample
                playable[2 * frame + 1] = sample
            }
            for index in 0..<160 { captured[index] = echo[step * 160 + index] }
            _ = playable.withUnsafeBufferPointer { bus.writeRenderData($0) }
            let before = allocation_counter_this_thread(), blocks = processor.processedBlocks
            let now = start + Int64(step) * 10_000_000
            _ = played.withUnsafeMutableBytes {
                bus.readRenderBytes(into: $0.baseAddress!, count: 960 * 2, frameBytes: 4, sampleBytes: 2, countShortfall: true, time: now + 50_000_000 + jitter(step))
            }
            if (300..<310).contains(step) { continue }  // lost in an overrun
            captured.withUnsafeBytes {
                bus.writeCaptureBytes($0.baseAddress!, count: 160 * 4, frameBytes: 4, sampleBytes: 4, time: now - 70_000_000 + jitter(step + 3),
                                     afterGap: step == 310)
            }
            if step >= 100 {
                let made = allocation_counter_this_thread() - before
                allocations += made
                // None, but AEC3's own report every 10 s (webrtc 1.x: see VoiceLibraryAllocations).
                if let refusal = VoiceLibraryAllocations.refusal(made, library: .webRTC, blocks: blocks, processor.processedBlocks) { refusals.append("step \(step): \(refusal)") }
            }
            let got = out.withUnsafeMutableBufferPointer { bus.readCaptureData(into: $0) }
            XCTAssertEqual(got, 160)
            output += out
            written += step * 160..<(step + 1) * 160
        }
        // Output position j holds the processed input written `latencyFrames` before it.
        let aligned = Array(output.dropFirst(processor.latencyFrames))
        let activity = VoiceRoomScenario.blockLevels(echo, blockFrames: 160)
        let loudest = activity.max() ?? 0
        func erle(_ steps: Range<Int>) -> Double {
            var a = 0.0, b = 0.0
            for position in 0..<aligned.count where steps.contains(written[position] / 160) && activity[written[position] / 160] > loudest - 30 {
                a += Double(echo[written[position]] * echo[written[position]])
                b += Double(aligned[position] * aligned[position])
            }
            return 10 * log10(a / max(b, 1e-20))
        }
        let before = erle(200..<300), after = erle(320..<500), jittered = erle(500..<steps)
        print("bus path, render 48 kHz stereo, capture 16 kHz mono: ERLE \(String(format: "%.1f", before)) dB, after 100 ms lost \(String(format: "%.1f", after)) dB, with 3 ms jitter \(String(format: "%.1f", jittered)) dB; capture jumps \(processor.captureJumps), render jumps \(processor.renderJumps); \(allocations) allocations\(VoiceProcessingLibrary.webRTCIsAEC3 ? " (AEC3's own reports every 10 s allowed)" : "")")
        XCTAssertGreaterThanOrEqual(before, 25)
        XCTAssertGreaterThanOrEqual(after, 25, "re-aligned after the capture lost 100 ms")
        XCTAssertGreaterThanOrEqual(jittered, 25, "jitter, and a stamp straying alone, move nothing")
        XCTAssertEqual(processor.captureJumps, 1, "the overrun, and only it")
        XCTAssertEqual(processor.renderJumps, 0)
        if allocation_counter_is_active() != 0 { XCTAssertEqual(refusals, [], "the voice path allocated (\(allocations) in all)") }
    }
}
