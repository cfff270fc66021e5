import AllocationCounter
import MediaDevices
import TestSupport
import XCTest

/// `VoiceProcessor`'s contract apart from the room: the formats it takes, switching while
/// running, no allocation per block.
final class VoiceProcessorTests: XCTestCase {
    func testFormatsItCannotTakeAreRefusedNamingWhatItTakes() {
        let refused = [AudioFormat(sampleRate: 44100, channels: 1), AudioFormat(sampleRate: 48000, channels: 3),
                       AudioFormat(sampleRate: 48000, channels: 1, sampleFormat: .s32LE)]
        for format in refused {
            XCTAssertThrowsError(try VoiceProcessor(format: format)) { error in
                let error = error as? MediaDevicesError
                XCTAssertEqual(error?.code, .unsupportedFormat, "\(format)")
                XCTAssertTrue(error?.detail.contains("8000, 16000, 32000 or 48000 Hz") == true, error?.detail ?? "")
            }
        }
        XCTAssertThrowsError(try VoiceProcessor(format: AudioFormat(sampleRate: 48000, channels: 2), options: VoiceProcessingOptions(library: .speexDSP)))
        for rate in VoiceProcessor.sampleRates {
            XCTAssertNoThrow(try VoiceProcessor(format: AudioFormat(sampleRate: rate, channels: 2)), "\(rate) Hz stereo")
            XCTAssertNoThrow(try VoiceProcessor(format: AudioFormat(sampleRate: rate, channels: 1, sampleFormat: .floatLE)), "\(rate) Hz mono float")
        }
    }

    func testProcessingParsesAndPrints() {
        XCTAssertEqual(VoiceProcessing(parsing: "echo,noise,gain"), .all)
        XCTAssertEqual(VoiceProcessing(parsing: "none"), VoiceProcessing.none)
        XCTAssertEqual(VoiceProcessing(parsing: "Gain, echo"), VoiceProcessing(echoCancellation: true, gainControl: true))
        XCTAssertNil(VoiceProcessing(parsing: "echo,reverb"))
        XCTAssertEqual(VoiceProcessing.all.description, "echo,noise,gain")
    }

    /// Echo cancellation switched off while running lets the echo through from the next block;
    /// switched on again, it cancels again (the latency follows what runs).
    func testProcessingSwitchesWhileRunning() throws {
        let rate = 16000
        let s = try VoiceRoomScenario(sampleRate: rate)
        let echo = SimulatedRoom(sampleRate: rate, echoDelay: 0.1, echoLossDB: 10).echo(of: s.far)
        let processor = try VoiceProcessor(format: AudioFormat(sampleRate: rate, channels: 1, sampleFormat: .floatLE),
                                           options: VoiceProcessingOptions(processing: VoiceProcessing(echoCancellation: true)))
        let withEcho = processor.latencyFrames
        var out: [Float] = []
        // 0-4 s on, 4-7 s off, 7 s on; latency taken out per stretch by hand below.
        var frames = 0
        var chunk = [Float](repeating: 0, count: 160), farChunk = chunk
        var offsets: [Int] = []
        while frames + 160 <= echo.count {
            if frames == 4 * rate { processor.processing = .none }
            if frames == 7 * rate { processor.processing = VoiceProcessing(echoCancellation: true) }
            for index in 0..<160 { chunk[index] = echo[frames + index]; farChunk[index] = s.far[frames + index] }
            farChunk.withUnsafeBytes { processor.processRender($0.baseAddress!, frames: 160) }
            chunk.withUnsafeMutableBytes { processor.processCapture($0.baseAddress!, frames: 160, delay: .milliseconds(100)) }
            out += chunk
            offsets.append(processor.latencyFrames)
            frames += 160
        }
        XCTAssertEqual(offsets[100], withEcho)
        XCTAssertEqual(offsets[500], processor.blockFrames)
        let active = s.activity(of: echo)
        let on = s.ratioDB(echo, Array(out.dropFirst(withEcho))) { $0 >= 200 && $0 < 400 && active[$0] }
        let off = s.ratioDB(echo, Array(out.dropFirst(processor.blockFrames))) { $0 >= 450 && $0 < 700 && active[$0] }
        let again = s.ratioDB(echo, Array(out.dropFirst(withEcho))) { $0 >= 800 && active[$0] }
        print("ERLE on \(on) dB, off \(off) dB, on again \(again) dB")
        XCTAssertGreaterThanOrEqual(on, 25)
        XCTAssertLessThan(abs(off), 1)
        XCTAssertGreaterThanOrEqual(again, 20)
    }

    /// A render side that stops leaves the canceller without a reference: it says so
    /// (`blocksWithoutReference`) and passes the capture on.
    func testBlocksWithoutReferenceAreCountedWhenTheRenderSideStops() throws {
        let processor = try VoiceProcessor(format: AudioFormat(sampleRate: 16000, channels: 1, sampleFormat: .floatLE),
                                           options: VoiceProcessingOptions(processing: VoiceProcessing(echoCancellation: true)))
        var far = [Float](repeating: 0, count: 160), near = far
        var generator = SystemRandomNumberGenerator()
        func step(rendering: Bool) {
            for index in 0..<160 {
                far[index] = Float.random(in: -0.3...0.3, using: &generator)
                near[index] = far[index] * 0.5
            }
            if rendering { far.withUnsafeBytes { processor.processRender($0.baseAddress!, frames: 160) } }
            near.withUnsafeMutableBytes { processor.processCapture($0.baseAddress!, frames: 160, delay: .milliseconds(50)) }
        }
        for _ in 0..<100 { step(rendering: true) }
        let whilePlaying = processor.blocksWithoutReference
        XCTAssertLessThanOrEqual(whilePlaying, 2, "only the blocks before anything was played")
        for _ in 0..<100 { step(rendering: false) }
        XCTAssertEqual(processor.processedBlocks, 200)
        XCTAssertGreaterThanOrEqual(processor.blocksWithoutReference - whilePlaying, 98, "render stopped: no reference")
    }

    func testNoAllocationPerBlock() throws {
        try XCTSkipIf(allocation_counter_is_active() == 0, "malloc is not interposed in this build")
        for library in VoiceProcessingLibrary.allCases {
            for format in [AudioFormat(sampleRate: 48000, channels: 1), AudioFormat(sampleRate: 16000, channels: 1, sampleFormat: .floatLE)] {
                let processor = try VoiceProcessor(format: format, options: VoiceProcessingOptions(library: library))
                let bytes = 441 * format.bytesPerFrame   // periods that are not whole blocks
                let render = UnsafeMutableRawPointer.allocate(byteCount: bytes, alignment: 16)
                let capture = UnsafeMutableRawPointer.allocate(byteCount: bytes, alignment: 16)
                defer { render.deallocate(); capture.deallocate() }
                var noise = WhiteNoiseGenerator(amplitude: 0.3)
                let fill = { (pointer: UnsafeMutableRawPointer) in
                    if format.sampleFormat == .floatLE {
                        noise.fill(UnsafeMutableBufferPointer(start: pointer.assumingMemoryBound(to: Float.self), count: 441))
                    } else {
                        noise.fill(UnsafeMutableBufferPointer(start: pointer.assumingMemoryBound(to: Int16.self), count: 441))
                    }
                }
                for round in 0..<400 {
                    fill(render); fill(capture)
                    let blocks = processor.processedBlocks
                    let before = allocation_counter_this_thread()
                    processor.processRender(render, frames: 441)
                    processor.processCapture(capture, frames: 441, delay: .milliseconds(50))
                    let allocations = allocation_counter_this_thread() - before
                    // None, but AEC3's own report every 10 s (webrtc 1.x: see VoiceLibraryAllocations).
                    if round >= 50, let refusal = VoiceLibraryAllocations.refusal(allocations, library: library, blocks: blocks, processor.processedBlocks) {
                        XCTFail("\(library) \(format): round \(round): \(refusal)"); break
                    }
                }
            }
        }
    }
}
