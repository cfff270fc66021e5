import Foundation
import TestSupport
import XCTest
@testable import MediaDevices
@testable import MediaDevicesAudio
@testable import MediaDevicesVideo
@testable import MediaDevicesCore

/// Y4M files at the source's chroma resolution: the `C` tag and range of the header, what the
/// pipeline converts first, and the planes written for packed, semi-planar and RGB sources
/// (made here by hand), read back byte for byte; writing allocates nothing per frame.
final class Y4MWriterTests: XCTestCase {
    static let width = 8, height = 2

    func header(_ format: PixelFormat, colorimetry: Colorimetry = .bt601Limited) -> String {
        FrameFileWriter.y4mHeader(VideoFormat(pixelFormat: format, width: 640, height: 480, colorimetry: colorimetry), frameRate: nil)
    }

    func testTheHeaderNamesTheChromaTheSourceHas() {
        XCTAssertEqual(header(.yu12), "YUV4MPEG2 W640 H480 F30:1 Ip A1:1 C420jpeg XCOLORRANGE=LIMITED\n")
        for format in [PixelFormat.yuyv, .uyvy, .vyuy, .nv16, .nv61m, .yuv422p, .yvu422m] {
            XCTAssertTrue(header(format).contains(" C422 "), "\(format): \(header(format))")
        }
        for format in [PixelFormat.nv24, .nv42, .yuv444m, .ayuv32, .vuyx32, .yuv444, .yuv555, .yuv565] {
            XCTAssertTrue(header(format).contains(" C444 "), "\(format): \(header(format))")
        }
        for format in [PixelFormat.grey, .y10, .y16, .y16BigEndian] {
            XCTAssertTrue(header(format, colorimetry: .jpeg).contains(" Cmono XCOLORRANGE=FULL"), "\(format): \(header(format, colorimetry: .jpeg))")
        }
        // ARGB (RGB, Bayer and HSV sources) is written as BT.601 limited-range 4:4:4.
        XCTAssertEqual(header(.argb, colorimetry: .jpeg), "YUV4MPEG2 W640 H480 F30:1 Ip A1:1 C444 XCOLORRANGE=LIMITED\n")
    }

    func testWhatThePipelineConvertsFirst() {
        for format in [PixelFormat.rgb24, .bgr666, .rgb332, .xrgb32, .sbggr12, .hsv32] {
            XCTAssertEqual(FrameFileWriter.y4mIntermediate(for: format), .argb, "\(format)")
        }
        for format in [PixelFormat.mjpeg, .nv12, .nv21m] {
            XCTAssertEqual(FrameFileWriter.y4mIntermediate(for: format), .yu12, "\(format)")
        }
        for format in [PixelFormat.yuyv, .yvyu, .yu12, .yv12, .nv24, .grey, .y12, .argb] {
            XCTAssertNil(FrameFileWriter.y4mIntermediate(for: format), "\(format) goes in as it comes")
        }
    }

    /// A Y4M file of one frame of `image`: the bytes after the header's line and `FRAME\n`.
    func written(_ image: PaddedImage) throws -> (header: String, planes: [UInt8]) {
        let path = NSTemporaryDirectory() + "y4m-\(UUID().uuidString).y4m"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let writer = try FrameFileWriter(path: path, format: image.format, frameRate: nil, container: .y4m)
        try image.withFrame { try writer.write($0) }
        try writer.close()
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let end = try XCTUnwrap(bytes.firstIndex(of: 0x0A))
        let header = String(decoding: bytes[..<end], as: UTF8.self)
        XCTAssertEqual(Array(bytes[(end + 1)..<(end + 7)]), Array("FRAME\n".utf8))
        return (header, Array(bytes[(end + 7)...]))
    }

    /// Y, Cb, Cr samples that differ everywhere: Y 16 + x + 8y, Cb 100 + column, Cr 200 + column.
    static func luma(_ x: Int, _ y: Int) -> UInt8 { UInt8(16 + x + 8 * y) }

    func testPacked422SplitsIntoPlanesInY4MOrder() throws {
        // YUYV and its swapped twin VYUY hold the same samples in other places.
        for (format, order) in [(PixelFormat.yuyv, "YUYV"), (.vyuy, "VYUY"), (.uyvy, "UYVY"), (.yvyu, "YVYU")] {
            var bytes: [UInt8] = []
            for y in 0..<Self.height {
                for pair in 0..<(Self.width / 2) {
                    let samples: [Character: UInt8] = ["U": UInt8(100 + pair), "V": UInt8(200 + pair)]
                    var lumas = [Self.luma(2 * pair, y), Self.luma(2 * pair + 1, y)]
                    for c in order { bytes.append(c == "Y" ? lumas.removeFirst() : samples[c]!) }
                }
            }
            let file = try written(PaddedImage(tight: bytes, pixelFormat: format, width: Self.width, height: Self.height))
            XCTAssertTrue(file.header.hasSuffix(" C422 XCOLORRANGE=LIMITED"), file.header)
            let y = (0..<Self.height).flatMap { row in (0..<Self.width).map { Self.luma($0, row) } }
            let u = (0..<Self.height).flatMap { _ in (0..<(Self.width / 2)).map { UInt8(100 + $0) } }
            let v = (0..<Self.height).flatMap { _ in (0..<(Self.width / 2)).map { UInt8(200 + $0) } }
            XCTAssertEqual(file.planes, y + u + v, "\(format): Y, then Cb, then Cr")
        }
    }

    func testSemiPlanar444AndPlanarSwappedGiveCbFirst() throws {
        let y = (0..<Self.height).flatMap { row in (0..<Self.width).map { Self.luma($0, row) } }
        let u = (0..<(Self.width * Self.height)).map { UInt8(100 + $0) }
        let v = (0..<(Self.width * Self.height)).map { UInt8(150 + $0) }
        let nv42 = y + zip(v, u).flatMap { [$0, $1] }
        let file = try written(PaddedImage(tight: nv42, pixelFormat: .nv42, width: Self.width, height: Self.height))
        XCTAssertTrue(file.header.contains(" C444 "), file.header)
        XCTAssertEqual(file.planes, y + u + v, "NV42: Cr-first pairs split into Cb, then Cr")
        let cu = (0..<(Self.width / 2 * Self.height / 2)).map { UInt8(100 + $0) }, cv = cu.map { $0 + 50 }
        let yv12 = try written(PaddedImage(tight: y + cv + cu, pixelFormat: .yv12, width: Self.width, height: Self.height))
        XCTAssertEqual(yv12.planes, y + cu + cv, "YV12: Cr plane first in memory, Cb first in the file")
    }

    func testARGBIsWrittenAs444() throws {
        // White, red, green, blue, two pixels each: BT.601 limited Y 235, 81, 145, 41.
        let colours: [[UInt8]] = [[255, 255, 255, 255], [0, 0, 255, 255], [0, 255, 0, 255], [255, 0, 0, 255]]
        let bytes = (0..<Self.height).flatMap { _ in (0..<Self.width).flatMap { colours[$0 / 2] } }
        let file = try written(PaddedImage(tight: bytes, pixelFormat: .argb, width: Self.width, height: Self.height))
        XCTAssertTrue(file.header.hasSuffix(" C444 XCOLORRANGE=LIMITED"), file.header)
        XCTAssertEqual(file.planes.count, Self.width * Self.height * 3)
        let wantY: [Int] = [235, 81, 145, 41], wantU: [Int] = [128, 90, 54, 240], wantV: [Int] = [128, 240, 34, 110]
        let n = Self.width * Self.height
        for x in 0..<Self.width {
            XCTAssertLessThanOrEqual(abs(Int(file.planes[x]) - wantY[x / 2]), 2, "Y of pixel \(x)")
            XCTAssertLessThanOrEqual(abs(Int(file.planes[n + x]) - wantU[x / 2]), 2, "Cb of pixel \(x)")
            XCTAssertLessThanOrEqual(abs(Int(file.planes[2 * n + x]) - wantV[x / 2]), 2, "Cr of pixel \(x)")
        }
    }

    /// Writing frames that need splitting (YUYV, NV24, packed 16-bit YUV, ARGB) allocates nothing
    /// after the first frames.
    func testWritingY4MAllocatesNothingPerFrame() throws {
        if let why = AllocationProbe.unavailableReason { throw XCTSkip(why) }
        for format in [PixelFormat.yuyv, .nv24, .yuv444, .argb, .y16BigEndian] {
            let bytes = [UInt8](repeating: 0x5A, count: 64 * 16 * 4)
            let image = PaddedImage(tight: Array(bytes.prefix(format.layout!.planes.reduce(0) { $0 + $1.minimumBytesPerRow(width: 64) * $1.rows(height: 16) })),
                                    pixelFormat: format, width: 64, height: 16)
            let path = NSTemporaryDirectory() + "y4m-\(UUID().uuidString).y4m"
            defer { try? FileManager.default.removeItem(atPath: path) }
            let writer = try FrameFileWriter(path: path, format: image.format, frameRate: nil, container: .y4m)
            let probe = AllocationProbe(warmUp: 3, measured: 20)
            try image.withFrame { frame in
                for _ in 0..<23 {
                    try writer.write(frame)
                    probe.consumeFrame(frame)
                }
            }
            try writer.close()
            XCTAssertEqual(probe.allocations, 0, "\(format): heap allocations over 20 frames")
        }
    }
}
