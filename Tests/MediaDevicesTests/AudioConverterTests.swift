import AllocationCounter
import MediaDevices
import TestSupport
import XCTest

/// The converter between a device's format and the application's: a 997 Hz tone through it
/// keeps its frequency (within 0.1 Hz), its level (within 0.1 dB) and stays clean (THD+N below
/// −80 dB), with each resampling library, in both directions; channels mix as documented; and
/// nothing is allocated once it is made.
final class AudioConverterTests: XCTestCase {
    static let frequency = 997.0, amplitude = 0.5

    /// `seconds` of the test tone in `format`, as raw bytes.
    private func tone(_ format: AudioFormat, seconds: Double) -> [UInt8] {
        var sine = SineGenerator(frequency: Self.frequency, amplitude: Self.amplitude, sampleRate: format.sampleRate)
        let floats = sine.samples(frames: Int(seconds * Double(format.sampleRate)), channels: format.channels)
        var bytes = [UInt8](repeating: 0, count: floats.count * format.sampleFormat.bytesPerSample)
        floats.withUnsafeBytes { source in
            bytes.withUnsafeMutableBytes { SampleConversion.convert(source.baseAddress!, .floatLE, to: $0.baseAddress!, format.sampleFormat, count: floats.count) }
        }
        return bytes
    }

    /// Raw bytes in `format` as floats.
    private func floats(_ bytes: [UInt8], _ format: AudioFormat) -> [Float] {
        let count = bytes.count / format.sampleFormat.bytesPerSample
        var result = [Float](repeating: 0, count: count)
        bytes.withUnsafeBytes { source in
            result.withUnsafeMutableBytes { SampleConversion.convert(source.baseAddress!, format.sampleFormat, to: $0.baseAddress!, .floatLE, count: count) }
        }
        return result
    }

    /// Checks each channel of `samples` (after the first 0.1 s: the filter's start) against the tone.
    private func assertClean(_ samples: [Float], _ format: AudioFormat, label: String) {
        XCTAssertGreaterThan(samples.count / format.channels, format.sampleRate / 2, "\(label): frames out")
        for channel in 0..<format.channels {
            let one = Array(ToneAnalysis.channel(channel, of: samples, channels: format.channels).dropFirst(format.sampleRate / 10))
            guard let fit = SineFit(one, sampleRate: format.sampleRate) else { return XCTFail("\(label): no tone") }
            XCTAssertEqual(fit.frequency, Self.frequency, accuracy: 0.1, "\(label) channel \(channel): frequency")
            XCTAssertEqual(fit.levelDecibels, ToneAnalysis.sineDecibels(amplitude: Self.amplitude), accuracy: 0.1, "\(label) channel \(channel): level")
            XCTAssertLessThan(fit.thdPlusNoiseDecibels, -80, "\(label) channel \(channel): THD+N")
            print(String(format: "figure: %@ channel %d: %.4f Hz, %.3f dBFS, THD+N %.1f dB", label, channel, fit.frequency, fit.levelDecibels, fit.thdPlusNoiseDecibels))
        }
    }

    func testDeviceFortyFourStereoToAppFortyEightMonoAndBack() throws {
        let device = AudioFormat(sampleRate: 44100, channels: 2, sampleFormat: .floatLE)
        let app = AudioFormat(sampleRate: 48000, channels: 1, sampleFormat: .s16LE)
        for library in AudioResamplerLibrary.allCases {
            // Capture: pushed a 441-frame period at a time, as a device delivers.
            let capture = try AudioConverter(from: device, to: app, library: library)
            let input = tone(device, seconds: 1.2)
            var output: [UInt8] = []
            let period = 441 * device.bytesPerFrame
            input.withUnsafeBytes { all in
                var offset = 0
                while offset < all.count {
                    let bytes = min(period, all.count - offset)
                    capture.convert(all.baseAddress! + offset, frames: bytes / device.bytesPerFrame) { converted, frames in
                        output.append(contentsOf: UnsafeRawBufferPointer(start: converted, count: frames * app.bytesPerFrame))
                    }
                    offset += bytes
                }
            }
            assertClean(floats(output, app), app, label: "\(library) capture 44.1 kHz stereo float → 48 kHz mono S16")
            XCTAssertEqual(Double(output.count / app.bytesPerFrame), 1.2 * 48000, accuracy: 2 * capture.delayFrames + 16, "\(library): every frame out, less the filter's delay")

            // Render: pulled a 512-frame device period at a time from the application's frames.
            let render = try AudioConverter(from: app, to: device, library: library)
            let source = tone(app, seconds: 1.2)
            var read = 0
            var played = [UInt8](repeating: 0, count: 1024 * device.bytesPerFrame)
            var rendered: [UInt8] = []
            while true {
                let got = played.withUnsafeMutableBytes { destination in
                    render.pull(into: destination.baseAddress!, frames: 512) { buffer, maximum in
                        let bytes = min(maximum * app.bytesPerFrame, source.count - read)
                        source.withUnsafeBytes { buffer.copyMemory(from: $0.baseAddress! + read, byteCount: bytes) }
                        read += bytes
                        return bytes / app.bytesPerFrame
                    }
                }
                rendered.append(contentsOf: played[0..<got * device.bytesPerFrame])
                if got < 512 { break }
            }
            XCTAssertEqual(read, source.count, "\(library): the render side read every application frame")
            assertClean(floats(rendered, device), device, label: "\(library) render 48 kHz mono S16 → 44.1 kHz stereo float")
        }
    }

    func testChannelMixing() {
        let stereo: [Float] = [0.2, 0.4, -1, 1, 0.5, 0.5]
        var mono = [Float](repeating: 9, count: 3)
        ChannelMixer.mix(stereo, channels: 2, into: &mono, channels: 1, frames: 3)
        XCTAssertEqual(mono, [0.3, 0, 0.5], "stereo → mono: the average")
        var back = [Float](repeating: 9, count: 6)
        ChannelMixer.mix(mono, channels: 1, into: &back, channels: 2, frames: 3)
        XCTAssertEqual(back, [0.3, 0.3, 0, 0, 0.5, 0.5], "mono → stereo: copied")
        var four = [Float](repeating: 9, count: 8)
        ChannelMixer.mix(stereo, channels: 2, into: &four, channels: 4, frames: 2)
        XCTAssertEqual(four, [0.2, 0.4, 0, 0, -1, 1, 0, 0], "2 → 4: one to one, the rest silent")
        var two = [Float](repeating: 9, count: 4)
        ChannelMixer.mix(four, channels: 4, into: &two, channels: 2, frames: 2)
        XCTAssertEqual(two, [0.2, 0.4, -1, 1], "4 → 2: the first two")
    }

    func testSampleFormatOnlyAndRateConversionAllocateNothing() throws {
        try XCTSkipIf(allocation_counter_is_active() == 0, "malloc is not interposed in this build")
        let cases: [(AudioFormat, AudioFormat)] = [
            (AudioFormat(sampleRate: 44100, channels: 2, sampleFormat: .s16LE), AudioFormat(sampleRate: 48000, channels: 1, sampleFormat: .s16LE)),
            (AudioFormat(sampleRate: 48000, channels: 1, sampleFormat: .floatLE), AudioFormat(sampleRate: 44100, channels: 2, sampleFormat: .s32LE)),
            (AudioFormat(sampleRate: 48000, channels: 2, sampleFormat: .s32LE), AudioFormat(sampleRate: 48000, channels: 2, sampleFormat: .s16LE)),
        ]
        for library in AudioResamplerLibrary.allCases {
            for (from, to) in cases {
                let converter = try AudioConverter(from: from, to: to, library: library)
                let input = UnsafeMutableRawPointer.allocate(byteCount: 2048 * from.bytesPerFrame, alignment: 16)
                let output = UnsafeMutableRawPointer.allocate(byteCount: 2048 * to.bytesPerFrame, alignment: 16)
                defer { input.deallocate(); output.deallocate() }
                input.initializeMemory(as: UInt8.self, repeating: 0, count: 2048 * from.bytesPerFrame)
                var delivered = 0
                let before = allocation_counter_this_thread()
                for step in 0..<200 {
                    converter.convert(input, frames: 256 + step % 300) { _, frames in delivered += frames }
                    _ = converter.pull(into: output, frames: 480 + step % 64) { _, maximum in min(maximum, 700) }
                }
                let allocations = allocation_counter_this_thread() - before
                XCTAssertEqual(allocations, 0, "\(library) \(from) → \(to): heap allocations over 200 pushes and pulls")
                XCTAssertGreaterThan(delivered, 0)
            }
        }
    }
}
