import Foundation
@testable import MediaDevices
@testable import MediaDevicesAudio
@testable import MediaDevicesVideo
@testable import MediaDevicesCore
import XCTest

/// The lock-free SPSC ring and the bus conversions on top of it.
final class AudioRingBufferTests: XCTestCase {
    func testCapacityRoundsUpAndWrapKeepsOrder() {
        let ring = AudioRingBuffer(minimumCapacity: 100)
        XCTAssertEqual(ring.capacity, 128)
        var next: UInt8 = 0, expected: UInt8 = 0
        for round in 0..<50 {
            let chunk = (0..<(37 + round % 20)).map { _ -> UInt8 in defer { next &+= 1 }; return next }
            let written = chunk.withUnsafeBytes { ring.write($0.baseAddress!, count: $0.count) }
            XCTAssertEqual(written, chunk.count, "room for it: the reader keeps up")
            var out = [UInt8](repeating: 0, count: 64)
            let got = out.withUnsafeMutableBytes { ring.read(into: $0.baseAddress!, count: chunk.count) }
            XCTAssertEqual(got, chunk.count)
            for byte in out[0..<got] { XCTAssertEqual(byte, expected); expected &+= 1 }
        }
        XCTAssertEqual(ring.availableToRead, 0)
    }

    func testFullRingRefusesAndGranularityKeepsWholeFrames() {
        let ring = AudioRingBuffer(minimumCapacity: 64)
        let data = [UInt8](repeating: 7, count: 100)
        XCTAssertEqual(data.withUnsafeBytes { ring.write($0.baseAddress!, count: 100, granularity: 6) }, 60, "64 bytes of room hold 10 six-byte frames")
        XCTAssertEqual(data.withUnsafeBytes { ring.write($0.baseAddress!, count: 6, granularity: 6) }, 0, "4 bytes left: no whole frame")
        var out = [UInt8](repeating: 0, count: 100)
        XCTAssertEqual(out.withUnsafeMutableBytes { ring.read(into: $0.baseAddress!, count: 100, granularity: 4) }, 60)
        XCTAssertEqual(out.withUnsafeMutableBytes { ring.read(into: $0.baseAddress!, count: 100) }, 0, "empty")
    }

    func testProducerAndConsumerThreadsSeeEveryByteInOrder() {
        let ring = AudioRingBuffer(minimumCapacity: 4096)
        let total = 4_000_000
        let producer = Thread {
            var chunk = [UInt32](repeating: 0, count: 333)
            var value: UInt32 = 0
            var sent = 0
            while sent < total {
                let n = min(chunk.count, (total - sent))
                for i in 0..<n { chunk[i] = value &+ UInt32(i) }
                let bytes = chunk.withUnsafeBytes { ring.write($0.baseAddress!, count: n * 4, granularity: 4) } / 4
                value &+= UInt32(bytes)
                sent += bytes
            }
        }
        producer.start()
        var received = 0
        var expected: UInt32 = 0
        var mismatches = 0
        var buffer = [UInt32](repeating: 0, count: 500)
        let deadline = Date().addingTimeInterval(60)
        while received < total && Date() < deadline {
            let got = buffer.withUnsafeMutableBytes { ring.read(into: $0.baseAddress!, count: $0.count, granularity: 4) } / 4
            for i in 0..<got where buffer[i] != expected &+ UInt32(i) { mismatches += 1 }
            expected &+= UInt32(got)
            received += got
        }
        XCTAssertEqual(received, total)
        XCTAssertEqual(mismatches, 0, "every value arrived in order, none torn")
    }

    func testBusConvertsBetweenInt16AndFloatAndCountsShortfalls() {
        let bus = AudioBus(capacityBytes: 256)
        XCTAssertEqual(bus.renderFormat, nil)
        // Render side in S16 stereo: the application writes floats, the device reads Int16.
        bus.setRenderFormat(AudioFormat(sampleRate: 48000, channels: 2, sampleFormat: .s16LE))
        let floats: [Float] = [0, 0.5, -0.5, 1.0, -1.0, 0.25]
        XCTAssertEqual(floats.withUnsafeBufferPointer { bus.writeRenderData($0) }, 6)
        var ints = [Int16](repeating: 0, count: 8)
        XCTAssertEqual(ints.withUnsafeMutableBufferPointer { bus.readRenderData(into: $0) }, 6)
        XCTAssertEqual(Array(ints[0..<6]), [0, 16384, -16384, 32767, -32768, 8192])
        XCTAssertEqual(bus.missingRenderSamples, 2, "8 asked, 6 there")
        // Capture side in FLOAT: the device writes Int16, the application reads both ways.
        bus.setCaptureFormat(AudioFormat(sampleRate: 44100, channels: 1, sampleFormat: .floatLE))
        let captured: [Int16] = [0, 16384, -32768, 32767]
        XCTAssertEqual(captured.withUnsafeBufferPointer { bus.writeCaptureData($0) }, 4)
        var out = [Float](repeating: 9, count: 2)
        XCTAssertEqual(out.withUnsafeMutableBufferPointer { bus.readCaptureData(into: $0) }, 2)
        XCTAssertEqual(out, [0, 0.5])
        var rest = [Int16](repeating: 0, count: 4)
        XCTAssertEqual(rest.withUnsafeMutableBufferPointer { bus.readCaptureData(into: $0) }, 2)
        XCTAssertEqual(Array(rest[0..<2]), [-32768, 32767])
        // 256 bytes hold 64 floats: the rest of a larger write is dropped and counted.
        let many = [Int16](repeating: 1, count: 100)
        XCTAssertEqual(many.withUnsafeBufferPointer { bus.writeCaptureData($0) }, 64)
        XCTAssertEqual(bus.droppedCaptureSamples, 36)
    }

    func testSampleConversionRoundTripsAndClips() {
        var s32 = [Int32](repeating: 0, count: 3)
        let input: [Float] = [0.5, 2.0, -3.0]
        input.withUnsafeBytes { src in s32.withUnsafeMutableBytes { SampleConversion.convert(src.baseAddress!, .floatLE, to: $0.baseAddress!, .s32LE, count: 3) } }
        XCTAssertEqual(s32, [1 << 30, .max, .min])
        var s16 = [Int16](repeating: 0, count: 3)
        s32.withUnsafeBytes { src in s16.withUnsafeMutableBytes { SampleConversion.convert(src.baseAddress!, .s32LE, to: $0.baseAddress!, .s16LE, count: 3) } }
        XCTAssertEqual(s16, [16384, 32767, -32768])
        XCTAssertEqual([Float.nan, 1e9, -1e9, 0.1 / 32768, -0.6 / 32768].map(SampleConversion.int16), [0, 32767, -32768, 0, -1], "NaN, clipping, rounding")
        XCTAssertEqual([Float.nan, 1e9, -1e9].map(SampleConversion.int32), [0, .max, .min])
        XCTAssertEqual(SampleFormat(named: "s16"), .s16LE)
        XCTAssertEqual(SampleFormat(named: "FLOAT_LE"), .floatLE)
        XCTAssertEqual(SampleFormat(named: "f32"), .floatLE)
        XCTAssertEqual(SampleFormat(named: "S32_LE"), .s32LE)
        XCTAssertNil(SampleFormat(named: "U8"))
        XCTAssertEqual(AudioFormat(sampleRate: 48000, channels: 2, sampleFormat: .s32LE).bytesPerFrame, 8)
    }
}
