import AllocationCounter
import Synchronization
import TestSupport
import USBDevices
import XCTest
@testable import MediaDevices
@testable import MediaDevicesAudio
@testable import MediaDevicesVideo
@testable import MediaDevicesCore

/// MJPEG decoded at a reduced DCT scale (TurboJPEG scaling) when the request is at most half
/// the picture, against decode-then-scale (the full decode, then libyuv's box scaler, as the
/// pipeline did before), on the emulated USB camera's pictures.
final class ScaledJPEGDecodeTests: XCTestCase {
    /// The USB camera's picture `variant` at `width`x`height` (`subsampling` 20: 4:2:0, 22: 4:2:2).
    static func picture(_ width: Int, _ height: Int, subsampling: UInt8 = 20, variant: UInt32 = 1) -> [UInt8] {
        let length = usbdev_camera_picture_jpeg(UInt16(width), UInt16(height), subsampling, variant, nil, 0)
        precondition(length > 0, "libjpeg-turbo could not encode the camera's picture")
        var bytes = [UInt8](repeating: 0, count: length)
        _ = usbdev_camera_picture_jpeg(UInt16(width), UInt16(height), subsampling, variant, &bytes, length)
        return bytes
    }

    static func frame(_ jpeg: [UInt8], _ width: Int, _ height: Int) -> PaddedImage {
        PaddedImage(tight: jpeg, pixelFormat: .mjpeg, width: width, height: height, padding: 4096)
    }

    /// Converts `jpeg` with `output` the pipeline's way; returns the tight bytes, the size and the
    /// DCT scale the converter decoded at.
    func scaled(_ jpeg: [UInt8], _ width: Int, _ height: Int, _ output: OutputFormat) throws -> (bytes: [UInt8], size: Size, scale: JPEGScale?) {
        let converter = try FrameConverter(output: output)
        return try Self.frame(jpeg, width, height).withFrame { frame in
            try converter.convert(frame) { ($0.format.pixelFormat == .argb ? tightBytes($0) : tightBytes($0), $0.format.size, converter.lastDecodeScale) }
        }
    }

    /// Decode-then-scale: the whole picture decoded (I420, the fast IDCT), then that I420 frame
    /// converted with `output` (crop, box scale, rotation, mirroring) as a raw source.
    func reference(_ jpeg: [UInt8], _ width: Int, _ height: Int, _ output: OutputFormat) throws -> [UInt8] {
        let decoder = try FrameConverter(output: OutputFormat(.yu12))
        let i420 = try Self.frame(jpeg, width, height).withFrame { frame in
            try decoder.convert(frame) { out -> [UInt8] in
                XCTAssertEqual(decoder.lastDecodeScale, .full)
                return tightBytes(out)
            }
        }
        let whole = PaddedImage(tight: i420, pixelFormat: .yu12, width: width, height: height, colorimetry: .jpeg)
        let converter = try FrameConverter(output: output)
        return try whole.withFrame { try converter.convert($0) { tightBytes($0) } }
    }

    /// The scaled path against decode-then-scale: same size, PSNR >= 40 dB, decoded at `scale`.
    func assertMatchesDecodeThenScale(_ width: Int, _ height: Int, subsampling: UInt8 = 20, _ output: OutputFormat,
                                      size: Size, scale: Fraction, file: StaticString = #filePath, line: UInt = #line) throws {
        let jpeg = Self.picture(width, height, subsampling: subsampling)
        let ours = try scaled(jpeg, width, height, output)
        XCTAssertEqual(ours.size, size, "\(width)x\(height) -> \(output): size", file: file, line: line)
        XCTAssertEqual(ours.scale?.fraction, scale, "\(width)x\(height) -> \(output): DCT scale", file: file, line: line)
        let expected = try reference(jpeg, width, height, output)
        XCTAssertEqual(ours.bytes.count, expected.count, file: file, line: line)
        guard ours.bytes.count == expected.count else { return }
        let ratio = psnr(ours.bytes, expected, skipAlphaOf: output.pixelFormat == .argb ? 4 : nil)
        XCTAssertGreaterThanOrEqual(ratio, 40, "\(width)x\(height) -> \(output): PSNR \(ratio) dB against decode-then-scale",
                                    file: file, line: line)
        print("scaled decode \(width)x\(height) -> \(output) at \(scale): PSNR \(String(format: "%.1f", ratio)) dB")
    }

    func test1080pTo640x360DecodesAtOneHalf() throws {
        try assertMatchesDecodeThenScale(1920, 1080, OutputFormat(.yu12, size: Size(width: 640, height: 360)),
                                         size: Size(width: 640, height: 360), scale: Fraction(1, 2))
    }

    func test720pTo320x180DecodesAtOneQuarter() throws {
        try assertMatchesDecodeThenScale(1280, 720, subsampling: 22, OutputFormat(.yu12, size: Size(width: 320, height: 180)),
                                         size: Size(width: 320, height: 180), scale: Fraction(1, 4))
        try assertMatchesDecodeThenScale(1280, 720, OutputFormat(.nv12, size: Size(width: 320, height: 180)),
                                         size: Size(width: 320, height: 180), scale: Fraction(1, 4))
    }

    func testOddSizes() throws {
        // 1080 rows are not whole 16-row MCUs; 270 rows give odd chroma; 800x600 has a half MCU.
        try assertMatchesDecodeThenScale(1920, 1080, OutputFormat(.yu12, size: Size(width: 480, height: 270)),
                                         size: Size(width: 480, height: 270), scale: Fraction(1, 4))
        try assertMatchesDecodeThenScale(800, 600, subsampling: 22, OutputFormat(.yu12, size: Size(width: 200, height: 150)),
                                         size: Size(width: 200, height: 150), scale: Fraction(1, 4))
        try assertMatchesDecodeThenScale(1920, 1080, OutputFormat(.yu12, size: Size(width: 395, height: 223)),
                                         size: Size(width: 395, height: 223), scale: Fraction(1, 2))
        try assertMatchesDecodeThenScale(1920, 1080, OutputFormat(.yu12, size: Size(width: 200, height: 112)),
                                         size: Size(width: 200, height: 112), scale: Fraction(1, 2))
    }

    func testRotationMirroringAndARGB() throws {
        try assertMatchesDecodeThenScale(1920, 1080, OutputFormat(.yu12, size: Size(width: 360, height: 640), rotation: .clockwise90),
                                         size: Size(width: 360, height: 640), scale: Fraction(1, 2))
        try assertMatchesDecodeThenScale(1280, 720, OutputFormat(.argb, size: Size(width: 320, height: 180), rotation: .upsideDown,
                                                                 mirrored: true),
                                         size: Size(width: 320, height: 180), scale: Fraction(1, 4))
        try assertMatchesDecodeThenScale(1920, 1080, OutputFormat(.nv12, size: Size(width: 270, height: 480), rotation: .clockwise270),
                                         size: Size(width: 270, height: 480), scale: Fraction(1, 4))
    }

    func testCrop() throws {
        // A 1280x720 region of a 1080p picture to 320x180: exactly a quarter.
        try assertMatchesDecodeThenScale(1920, 1080, OutputFormat(.yu12, size: Size(width: 320, height: 180),
                                                                  crop: Rect(x: 200, y: 104, width: 1280, height: 720)),
                                         size: Size(width: 320, height: 180), scale: Fraction(1, 4))
        // A crop off the centre, whose edges fall on whole decoded pixels at 1/2.
        try assertMatchesDecodeThenScale(1920, 1080, OutputFormat(.yu12, size: Size(width: 300, height: 300),
                                                                  crop: Rect(x: 1000, y: 30, width: 900, height: 1000)),
                                         size: Size(width: 300, height: 300), scale: Fraction(1, 2))
    }

    /// Every size of a sweep either decodes whole (the same bytes as before) or within 0.25 output
    /// pixels of the crop asked for and at least 34 dB from decode-then-scale. Measured: where
    /// libyuv's box scale finishes by a ratio of 1, 1.5 or 2, 44-53 dB (the tests above); by
    /// other ratios, the two paths' box boundaries fall differently on this sharp-edged picture
    /// (bars, and a 32-pixel sawtooth texture): 34.6-40.5 dB.
    func testSweepOfSizesStaysCloseOrDecodesWhole() throws {
        var cases = stride(from: 150, through: 960, by: 49).map { (1920, 1080, $0, $0 * 9 / 16) }
        cases += stride(from: 150, through: 640, by: 49).map { (1280, 720, $0, $0 * 3 / 4) }
        cases += [(1001, 603, 250, 150), (1918, 1078, 479, 269), (1366, 768, 341, 192)]
        var scaledCount = 0
        for (width, height, outputWidth, outputHeight) in cases {
            let jpeg = Self.picture(width, height)
            let output = OutputFormat(.yu12, size: Size(width: outputWidth, height: outputHeight))
            let ours = try scaled(jpeg, width, height, output)
            let expected = try reference(jpeg, width, height, output)
            if ours.scale == .full {
                XCTAssertEqual(ours.bytes, expected, "\(width)x\(height) -> \(output): a whole decode is unchanged")
                continue
            }
            scaledCount += 1
            let plan = ConversionPlan(source: Size(width: width, height: height), orientation: .up, request: output, alignment: (2, 2))
            let scale = ours.scale!
            let crop = plan.onDecoded(at: scale, decoded: scale.scaled(Size(width: width, height: height))).crop
            XCTAssertLessThanOrEqual(plan.shift(of: crop, at: scale), 0.25)
            print("sweep \(width)x\(height) -> \(output) at \(scale.fraction): \(psnr(ours.bytes, expected)) dB")
            XCTAssertGreaterThanOrEqual(psnr(ours.bytes, expected), 34, "\(width)x\(height) -> \(output) at \(scale.fraction)")
        }
        XCTAssertGreaterThanOrEqual(scaledCount, 8, "the sizes within the tolerance decode scaled")
    }

    func testMoreThanHalfOrNoSizeDecodesWhole() throws {
        let jpeg = Self.picture(1920, 1080)
        XCTAssertEqual(try scaled(jpeg, 1920, 1080, OutputFormat(.yu12, size: Size(width: 1280, height: 720))).scale, .full)
        XCTAssertEqual(try scaled(jpeg, 1920, 1080, OutputFormat(.yu12, size: Size(width: 961, height: 540))).scale, .full,
                       "a pixel more than half the width needs the whole picture")
        XCTAssertEqual(try scaled(jpeg, 1920, 1080, OutputFormat(.nv12)).scale, .full)
        XCTAssertEqual(try scaled(jpeg, 1920, 1080, OutputFormat(.yu12, size: Size(width: 960, height: 540))).scale?.fraction,
                       Fraction(1, 2), "exactly half decodes at half")
        XCTAssertEqual(try scaled(jpeg, 1920, 1080, OutputFormat(.yu12, size: Size(width: 680, height: 382))).scale, .full,
                       "at 1/2 the crop would move 0.71 output pixels: decoded whole")
        let whole = OutputFormat(.yu12, size: Size(width: 640, height: 360), jpegScaledDecoding: false)
        let wholeResult = try scaled(jpeg, 1920, 1080, whole)
        XCTAssertEqual(wholeResult.scale, .full, "asked to decode whole")
        XCTAssertEqual(wholeResult.bytes, try reference(jpeg, 1920, 1080, whole), "decode-then-scale, as before")
    }

    func testTheReductionsAreTurboJPEGsHalfQuarterAndEighth() {
        XCTAssertEqual(JPEGScale.reductions.map(\.fraction), [Fraction(1, 8), Fraction(1, 4), Fraction(1, 2)])
    }

    func testCorruptFrameAtAReducedScaleIsCountedAndTheNextDecodes() async throws {
        let good = Self.picture(1920, 1080)
        let delivery = FrameDelivery()
        let frames = delivery.makeFrames(bufferSize: 4, converter: try FrameConverter(output: OutputFormat(.yu12, size: Size(width: 640, height: 360))))
        delivery.beginRun()
        Self.frame(good, 1920, 1080).withFrame { delivery.deliver($0) }
        Self.frame(Array(good.prefix(good.count / 3)), 1920, 1080).withFrame { delivery.deliver($0) }
        Self.frame(good, 1920, 1080).withFrame { delivery.deliver($0) }
        let statistics = delivery.statistics
        XCTAssertEqual(statistics.corruptFrames, 1)
        XCTAssertTrue(statistics.lastCorruptFrameReason?.contains("JPEG") == true, "\(statistics.lastCorruptFrameReason ?? "nil")")
        XCTAssertEqual(statistics.scaledDecodeFrames, 2, "the two good frames decode at 1/2")
        XCTAssertEqual(statistics.lastDecodeScale, Fraction(1, 2))
        XCTAssertEqual(statistics.sharedDecodeFrames, 0, "one consumer: nothing to share")
        delivery.finish(error: nil)
        var sizes: [Size] = []
        while let buffer = try await frames.queue.next() { sizes.append(buffer.format.size) }
        XCTAssertEqual(sizes, [Size(width: 640, height: 360), Size(width: 640, height: 360)], "the good frames arrive")
    }

    /// A consumer that has a frame reads statistics that count that frame's decode: a shared
    /// decode is recorded before any consumer or sequence gets the frame (the rig's test of the
    /// USB camera read two decodes after three frames on a busy machine, when it was recorded
    /// after them).
    func testASharedDecodeIsCountedBeforeConsumersSeeTheFrame() async throws {
        let jpeg = Self.picture(1920, 1080)
        let delivery = FrameDelivery()
        let frames = delivery.makeFrames(bufferSize: 2, converter: try FrameConverter(output: OutputFormat(.yu12, size: Size(width: 640, height: 360))))
        let reader = StatisticsReader(delivery)
        delivery.consumer = try ConvertingConsumer(output: OutputFormat(.nv12, size: Size(width: 320, height: 180)), consumer: reader)
        delivery.beginRun()
        for _ in 0..<2 { Self.frame(jpeg, 1920, 1080).withFrame { delivery.deliver($0) } }
        XCTAssertEqual(reader.seen.withLock { $0 }, [1, 2], "shared decodes counted when the consumer had frame 1, 2")
        let first = try await frames.queue.next()
        XCTAssertNotNil(first, "the sequence has the frames too")
        XCTAssertEqual(delivery.statistics.scaledDecodeFrames, 2)
    }

    /// Two sequences and a converting consumer of one 1080p run: one decode, at the larger scale
    /// (1/2 for 640x360, which also serves 480x270 and 320x180, 1/4 each by itself), and each
    /// output as good as its own decode-then-scale.
    func testConsumersShareOneDecodeAtTheLargestScale() async throws {
        let jpeg = Self.picture(1920, 1080)
        let delivery = FrameDelivery()
        let large = OutputFormat(.yu12, size: Size(width: 640, height: 360))
        let small = OutputFormat(.yu12, size: Size(width: 320, height: 180))
        let tiny = OutputFormat(.nv12, size: Size(width: 480, height: 270))
        let smallFrames = delivery.makeFrames(bufferSize: 2, converter: try FrameConverter(output: small))
        let largeFrames = delivery.makeFrames(bufferSize: 2, converter: try FrameConverter(output: large))
        let recorder = BytesRecorder()
        let converting = try ConvertingConsumer(output: tiny, consumer: recorder)
        delivery.consumer = converting
        delivery.beginRun()
        Self.frame(jpeg, 1920, 1080).withFrame { delivery.deliver($0) }
        let statistics = delivery.statistics
        XCTAssertEqual(statistics.sharedDecodeFrames, 1)
        XCTAssertEqual(statistics.scaledDecodeFrames, 1)
        XCTAssertEqual(statistics.lastDecodeScale, Fraction(1, 2), "the largest need (640x360) sets the scale")
        XCTAssertEqual(converting.converter.lastDecodeScale?.fraction, Fraction(1, 2))
        XCTAssertEqual(converting.converter.decodeScale(source: Size(width: 1920, height: 1080), layout: .yu12, orientation: .up),
                       JPEGScale(numerator: 1, denominator: 4), "by itself it would decode at 1/4")
        let smallBytes = try await smallFrames.queue.next()!.withFrame { tightBytes($0) }
        let largeBytes = try await largeFrames.queue.next()!.withFrame { tightBytes($0) }
        let tinyBytes = recorder.frames.withLock { $0 }
        XCTAssertEqual(tinyBytes.count, 1)
        for (bytes, output) in [(smallBytes, small), (largeBytes, large), (tinyBytes.first ?? [], tiny)] {
            let expected = try reference(jpeg, 1920, 1080, output)
            XCTAssertEqual(bytes.count, expected.count, "\(output)")
            if bytes.count == expected.count {
                XCTAssertGreaterThanOrEqual(psnr(bytes, expected), 40, "\(output) from the shared decode")
            }
        }
        // A consumer that needs the whole picture makes the one shared decode full size.
        let whole = delivery.makeFrames(bufferSize: 2, converter: try FrameConverter(output: OutputFormat(.yu12)))
        Self.frame(jpeg, 1920, 1080).withFrame { delivery.deliver($0) }
        XCTAssertEqual(delivery.statistics.sharedDecodeFrames, 2)
        XCTAssertEqual(delivery.statistics.scaledDecodeFrames, 1, "a full-size decode is not a scaled one")
        XCTAssertEqual(delivery.statistics.lastDecodeScale, Fraction(1, 1))
        let wholeBytes = try await whole.queue.next()!.withFrame { tightBytes($0) }
        XCTAssertEqual(wholeBytes, try reference(jpeg, 1920, 1080, OutputFormat(.yu12)), "the full decode, unchanged")
        // A corrupt frame: one decode fails, every converting consumer drops it, counted once.
        Self.frame(Array(jpeg.prefix(jpeg.count / 2)), 1920, 1080).withFrame { delivery.deliver($0) }
        XCTAssertEqual(delivery.statistics.corruptFrames, 1)
        XCTAssertEqual(converting.corruptFrames, 1)
        XCTAssertEqual(recorder.frames.withLock { $0.count }, 2)
        // A consumer asking for the other IDCT: each decodes for itself, with the IDCT it asked for.
        let accurate = delivery.makeFrames(bufferSize: 2, converter: try FrameConverter(output: OutputFormat(.yu12, jpegDecoding: .accurate)))
        Self.frame(jpeg, 1920, 1080).withFrame { delivery.deliver($0) }
        XCTAssertEqual(delivery.statistics.sharedDecodeFrames, 2, "not shared (nor counted as shared)")
        let accurateBytes = try await accurate.queue.next()!.withFrame { tightBytes($0) }
        let planes = try XCTUnwrap(LibjpegReference.planes(jpeg, fastDCT: false))
        XCTAssertEqual(accurateBytes, planes.y + planes.u + planes.v, "the accurate IDCT's decode")
        let fastBytes = try await whole.queue.next()!.withFrame { tightBytes($0) }
        XCTAssertEqual(fastBytes, wholeBytes, "the fast IDCT's, as before")
        withExtendedLifetime(accurate) {}
        XCTAssertEqual(recorder.frames.withLock { $0.count }, 3)
    }
}

extension ScaledJPEGDecodeTests {
    /// The shared scaled decode of three converting consumers allocates nothing of ours per
    /// frame: no more than libjpeg's own memory manager allocates reading one header and decoding
    /// at that scale.
    func testSharedScaledDecodeAllocatesNoMoreThanLibjpegsOwnDecode() throws {
        if let why = AllocationProbe.unavailableReason { throw XCTSkip(why) }
        XCTAssertTrue(AllocationProbe.isActive, "malloc is interposed in the test binary")
        let jpeg = Self.picture(1920, 1080)
        let delivery = FrameDelivery()
        // Sizes libyuv reaches from the 960x540 decode without a row buffer of its own (it
        // allocates one per call for other ratios: libyuv's, in the full-size path as well).
        let small = delivery.makeFrames(bufferSize: 2, converter: try FrameConverter(output: OutputFormat(.yu12, size: Size(width: 240, height: 134))))
        let large = delivery.makeFrames(bufferSize: 2, converter: try FrameConverter(output: OutputFormat(.nv12, size: Size(width: 960, height: 540))))
        let converting = try ConvertingConsumer(output: OutputFormat(.argb, size: Size(width: 480, height: 270)), consumer: NothingConsumer())
        delivery.consumer = converting
        delivery.beginRun()
        let frames = 10
        let (ours, libjpegs) = try Self.frame(jpeg, 1920, 1080).withFrame { frame -> (UInt64, UInt64) in
            for _ in 0..<3 { delivery.deliver(frame) }
            let trace = getenv("ALLOCATION_TRACE") != nil
            var start = allocation_counter_this_thread()
            if trace { allocation_counter_trace(1) }
            var count = 0
            while count < frames { delivery.deliver(frame); count += 1 }  // no `for in`: its debug iterator allocates
            allocation_counter_trace(0)
            let ours = allocation_counter_this_thread() - start
            let decoder = JPEGFrameDecoder()
            let (data, header) = try decoder.header(of: frame, device: nil)
            _ = try decoder.decode(data, header: header, scale: JPEGScale(numerator: 1, denominator: 2), decoding: .fast, device: nil)
            start = allocation_counter_this_thread()
            count = 0
            while count < frames {
                let (data, header) = try decoder.header(of: frame, device: nil)
                _ = try decoder.decode(data, header: header, scale: JPEGScale(numerator: 1, denominator: 2), decoding: .fast, device: nil)
                count += 1
            }
            return (ours, allocation_counter_this_thread() - start)
        }
        print("figure: heap allocations per 1080p frame, shared 1/2 decode for 3 consumers: \(Double(ours) / Double(frames)); libjpeg's own header read and 1/2 decode: \(Double(libjpegs) / Double(frames))")
        XCTAssertEqual(delivery.statistics.sharedDecodeFrames, 3 + frames)
        XCTAssertEqual(delivery.statistics.lastDecodeScale, Fraction(1, 2))
        XCTAssertEqual(delivery.statistics.corruptFrames + converting.corruptFrames, 0)
        XCTAssertLessThanOrEqual(ours, libjpegs, "the delivery, the converters and the queues add no allocation to libjpeg's")
        XCTAssertGreaterThan(small.droppedFrames + large.droppedFrames, 0, "the unread sequences were fed")
    }
}

/// Takes frames and does nothing (allocates nothing).
private final class NothingConsumer: VideoFrameConsumer {
    func consumeFrame(_ frame: VideoFrame) {}
    func captureDidStop(error: MediaDevicesError?) {}
}

/// Keeps the tight bytes of every frame it is handed.
private final class BytesRecorder: VideoFrameConsumer {
    let frames = Mutex<[[UInt8]]>([])
    func consumeFrame(_ frame: VideoFrame) { frames.withLock { $0.append(tightBytes(frame)) } }
    func captureDidStop(error: MediaDevicesError?) {}
}

/// Reads its delivery's shared-decode count whenever it gets a frame.
private final class StatisticsReader: VideoFrameConsumer, @unchecked Sendable {
    let seen = Mutex<[Int]>([])
    private let delivery: FrameDelivery
    init(_ delivery: FrameDelivery) { self.delivery = delivery }
    func consumeFrame(_ frame: VideoFrame) { let count = delivery.statistics.sharedDecodeFrames; seen.withLock { $0.append(count) } }
    func captureDidStop(error: MediaDevicesError?) {}
}
