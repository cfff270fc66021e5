import Foundation
import MediaDevices
import TestSupport
import XCTest

/// The pixel pipeline on real V4L2 frames: every raw format vivid offers that the pipeline reads
/// (single- and multi-planar) converted to ARGB gives vivid's 100% colour bars; conversion with
/// three outputs allocates nothing per frame; `snapshot` writes a PNG and a JPEG that FFmpeg
/// reads back as the bars.
final class ConversionTests: XCTestCase {
    override func setUpWithError() throws { try Rig.require() }

    typealias RGB = (r: Int, g: Int, b: Int)
    /// vivid's 100% colour bars, left to right.
    static let bars: [RGB] = [(255, 255, 255), (255, 255, 0), (0, 255, 255), (0, 255, 0),
                              (255, 0, 255), (255, 0, 0), (0, 0, 255), (0, 0, 0)]

    /// Captures a few frames of `pixelFormat` from `node` at 320x180, converted to ARGB, and
    /// checks the centre of each bar; returns the largest difference seen.
    func barError(node: String, pixelFormat: PixelFormat) throws -> Int {
        let source = CameraSource(device: try CaptureDevice(path: node),
                                  request: FormatRequest(pixelFormat: pixelFormat, size: Size(width: 320, height: 180)))
        let recorder = FrameRecorder(target: 4, keepIndex: 2)
        source.consumer = try ConvertingConsumer(output: OutputFormat(.argb), consumer: recorder)
        try source.start()
        let finished = recorder.wait(seconds: 20)
        source.stop()
        XCTAssertTrue(finished, "\(pixelFormat): 4 frames did not arrive")
        guard finished, let format = recorder.keptFormat else { return .max }
        XCTAssertEqual(format.pixelFormat, .argb)
        XCTAssertEqual(source.negotiation?.format.pixelFormat, pixelFormat)
        let plane = recorder.kept[0]
        let barWidth = format.width / Self.bars.count
        var worst = 0
        for (index, expected) in Self.bars.enumerated() {
            let x = barWidth * index + barWidth / 2, y = format.height / 2
            let i = y * plane.bytesPerRow + x * 4
            let got: RGB = (Int(plane.bytes[i + 2]), Int(plane.bytes[i + 1]), Int(plane.bytes[i]))
            var want = expected
            if Self.greyFormats.contains(pixelFormat) {
                // Grey carries luma only; vivid computes it with BT.709 weights, full range
                // (measured: BT.601 weights miss green by 32).
                let luma = Int((0.2126 * Double(expected.r) + 0.7152 * Double(expected.g) + 0.0722 * Double(expected.b)).rounded())
                want = (luma, luma, luma)
            }
            worst = max(worst, abs(got.r - want.r), abs(got.g - want.g), abs(got.b - want.b))
        }
        return worst
    }

    /// The grey formats: luma only, compared with the bars' luma.
    static let greyFormats: Set<PixelFormat> = [.grey, .y10, .y12, .y16, .y16BigEndian]

    /// The largest bar-colour error allowed for `format`. YUV: libyuv's fixed-point BT.601
    /// misses saturated blue by 5 (measured; FFmpeg's swscale by 1). Packed 16-bit YUV keeps 4
    /// or 5 bits of its coarsest field, which the kernel truncates to: one step of it (17 levels
    /// for 4 bits, 8 for 5) plus libyuv's 3 (measured: YUV444 17, YUV555 8, YUV565 6). 15/16-bit
    /// RGB keeps 4 to 6 bits per channel: one step of its coarsest channel (16 for 4 bits, 8 for
    /// 5). HSV: one step of its hue (2° of 180 steps, or 1.4° of 256: 8.5 levels at full
    /// saturation; the kernel's own RGB → HSV rounds magenta a step off). Lossless RGB and grey
    /// (8 bits or more), RGB332 and BGR666 (the bars are all ones or zero in each channel, which
    /// any bit depth keeps), and Bayer (demosaicing mixes colours only at the bars' edges; the
    /// centres are checked): 2.
    static func tolerance(_ format: PixelFormat) -> Int {
        switch format {
        case .yuv444: return 20
        case .yuv555, .yuv565: return 11
        case _ where format.isYUV: return 6
        case .rgb444, .xrgb444, .argb444, .rgbx444, .rgba444, .xbgr444, .abgr444, .bgrx444, .bgra444: return 16
        case .rgb565, .rgb565BigEndian, .rgb555, .xrgb555, .argb555, .xbgr555, .abgr555,
             .rgb555BigEndian, .xrgb555BigEndian, .argb555BigEndian, .rgbx555, .rgba555, .bgrx555, .bgra555: return 8
        case .hsv24, .hsv32: return 9
        default: return 2
        }
    }

    func testEveryReadableVividFormatGivesTheBarsInARGB() throws {
        let nodes = try Rig.loadVivid("n_devs=2 multiplanar=1,2")
        var report: [String] = []
        var converted: Set<PixelFormat> = []
        for node in nodes {
            try Rig.colourBars(node)
            let offered = try CaptureDevice(path: node).supportedFormats()
                .filter { !$0.isCompressed && FrameConverter.canConvert($0.pixelFormat) }
                .filter { $0.frameSizes.contains { $0.sizes.contains(Size(width: 320, height: 180)) } }
            XCTAssertGreaterThanOrEqual(offered.count, node == nodes[0] ? 15 : 3, "\(node) offers the formats the pipeline reads")
            // The multi-planar node offers the single-planar node's formats and its own (NV12M,
            // YUV420M, ...): those, and one packed, one semi-planar, one planar and one RGB format
            // in a single buffer through the multi-planar API. The other ~80 read exactly as on the
            // first node (~45 s of the emulated guest).
            let throughMultiplanar: Set<PixelFormat> = [.yuyv, .nv12, .yu12, .rgb24]
            for format in offered where !converted.contains(format.pixelFormat) || throughMultiplanar.contains(format.pixelFormat) {
                converted.insert(format.pixelFormat)
                let worst = try barError(node: node, pixelFormat: format.pixelFormat)
                report.append("\(format.pixelFormat.name) \(worst)")
                let tolerance = Self.tolerance(format.pixelFormat)
                XCTAssertLessThanOrEqual(worst, tolerance, "\(node) \(format.pixelFormat): bar colours off by \(worst)")
            }
        }
        print("figure: vivid formats converted to ARGB, largest bar-colour error: " + report.joined(separator: ", "))
        // What `formats` says is convertible is what the pipeline reads.
        for (index, node) in nodes.enumerated() {
            let formats = try CaptureDevice(path: node).supportedFormats()
            let printed = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(Rig.run("\(Rig.tool) formats \(node) --json").utf8)) as? [String: Any])
            let marks = (printed["formats"] as? [[String: Any]])?.map { $0["convertible"] as? Bool } ?? []
            XCTAssertEqual(marks, formats.map { $0.isConvertible }, "\(node): formats --json marks")
            let readable = formats.filter(\.isConvertible).map(\.pixelFormat.name)
            // Each format left out, with the reason (`mediadevices formats` marks them too).
            let left = formats.filter { !$0.isConvertible }.map { format in
                "\(format.pixelFormat.name) (\(format.pixelFormat.isKnown ? "the pipeline has no reader for it" : "a fourcc MediaDevices does not know"))"
            }
            print("figure: vivid node \(index) (\(node)): \(readable.count) of \(formats.count) formats convertible (\(readable.joined(separator: " ")))"
                  + (left.isEmpty ? "; none left out" : "; not converted: " + left.joined(separator: ", ")))
            XCTAssertEqual(left, [], "\(node): every format vivid offers converts")
        }
    }

    func testConversionOnRealFramesAllocatesNothingPerFrame() throws {
        try Rig.requireAllocationCounting()
        let node = try Rig.loadVivid("n_devs=1")[0]
        let source = CameraSource(device: try CaptureDevice(path: node),
                                  request: FormatRequest(pixelFormat: .yuyv, size: Size(width: 320, height: 180), frameRate: FrameRate(50)))
        let probe = AllocationProbe(warmUp: 10, measured: 200)
        let square = try ConvertingConsumer(output: OutputFormat(.nv12, size: Size(width: 180, height: 180)), consumer: probe)
        source.consumer = square
        let turned = try source.frameSequence(bufferSize: 2, output: OutputFormat(.argb, rotation: .clockwise90, mirrored: true))
        let small = try source.frameSequence(bufferSize: 2, output: OutputFormat(.yu12, size: Size(width: 160, height: 90)))
        try source.start()
        XCTAssertEqual(probe.done.wait(timeout: .now() + 90), .success, "210 frames arrived")
        source.stop()
        print("figure: heap allocations on the capture thread over 200 vivid frames converted to 3 outputs: \(probe.allocations)")
        XCTAssertEqual(probe.allocations, 0)
        XCTAssertGreaterThan(turned.droppedFrames + small.droppedFrames, 300, "the unread sequences were fed")
    }

    func testSnapshotWritesAPNGAndAJPEGOfTheBars() throws {
        let node = try Rig.loadVivid("n_devs=1")[0]
        try Rig.colourBars(node)
        // PNG is lossless after the conversion; JPEG (4:2:0, quality 90) costs a few levels.
        for (suffix, tolerance) in [("png", 6), ("jpg", 10)] {
            let image = Rig.scratch + "/bars.\(suffix)"
            try? FileManager.default.removeItem(atPath: image)
            let result = Rig.shell("\(Rig.tool) snapshot \(node) --format YUYV --size 320x180 --output \(image) --json")
            XCTAssertEqual(result.status, 0, result.output + result.errors)
            XCTAssertTrue(result.output.contains("\"width\" : 320"), result.output)
            // FFmpeg decodes the file on its own (by its content); the middle row must be the bars.
            let raw = Rig.scratch + "/bars.rgb"
            let probe = try Rig.run("ffprobe -v error -show_entries stream=codec_name -of csv=p=0 \(image)")
            XCTAssertEqual(probe.trimmingCharacters(in: .whitespacesAndNewlines), suffix == "png" ? "png" : "mjpeg", "\(image) holds what its name says")
            try Rig.run("ffmpeg -hide_banner -loglevel error -y -i \(image) -f rawvideo -pix_fmt rgb24 \(raw)")
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: raw)))
            XCTAssertEqual(bytes.count, 320 * 180 * 3)
            guard bytes.count == 320 * 180 * 3 else { return }
            for (index, expected) in Self.bars.enumerated() {
                let i = (90 * 320 + 40 * index + 20) * 3
                XCTAssertLessThanOrEqual(max(abs(Int(bytes[i]) - expected.r), abs(Int(bytes[i + 1]) - expected.g),
                                             abs(Int(bytes[i + 2]) - expected.b)), tolerance, "bar \(index) in the \(suffix)")
            }
        }
        // A name the tool cannot honour is refused before the device is opened.
        let refused = Rig.shell("\(Rig.tool) snapshot /dev/video-none --output \(Rig.scratch)/bars.gif")
        XCTAssertNotEqual(refused.status, 0)
        XCTAssertTrue(refused.errors.contains(".png or .jpg"), refused.errors)
    }
}
