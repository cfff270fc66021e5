import AllocationCounter
import CPNG
import CTurboJPEG
import Foundation
import TestSupport
import XCTest
@testable import MediaDevices
@testable import MediaDevicesAudio
@testable import MediaDevicesVideo
@testable import MediaDevicesCore

/// Still images: the extension decides the format (refused before anything is opened); a JPEG
/// written from a frame decodes (with libjpeg-turbo on its own) to the frame's colours; the
/// in-memory encoders give the bytes the writers write, keep YUV's range, and lend frame after
/// frame without allocating.
final class ImageFileTests: XCTestCase {
    func testTheExtensionDecidesTheFormat() throws {
        XCTAssertEqual(try ImageFileFormat(path: "shot.png"), .png)
        XCTAssertEqual(try ImageFileFormat(path: "/tmp/a.b/SHOT.JPG"), .jpeg)
        XCTAssertEqual(try ImageFileFormat(path: "shot.jpeg"), .jpeg)
        for refused in ["shot.gif", "shot", "png", "dir.png/shot", "shot.png.txt"] {
            XCTAssertThrowsError(try ImageFileFormat(path: refused), refused) { error in
                XCTAssertEqual((error as? MediaDevicesError)?.code, .unsupportedFormat, refused)
                XCTAssertTrue("\(error)".contains(".png or .jpg"), "\(error)")
            }
        }
    }

    /// Eight 40-pixel bars of known colours as an ARGB frame (libyuv ARGB: bytes B, G, R, A).
    static let bars: [(r: UInt8, g: UInt8, b: UInt8)] = [(255, 255, 255), (255, 255, 0), (0, 255, 255), (0, 255, 0),
                                                         (255, 0, 255), (255, 0, 0), (0, 0, 255), (0, 0, 0)]

    func testAJPEGOfBarsDecodesToTheBars() throws {
        let width = 320, height = 64
        var tight = [UInt8](repeating: 0, count: width * height * 4)
        for y in 0..<height {
            for x in 0..<width {
                let bar = Self.bars[x / 40], i = (y * width + x) * 4
                (tight[i], tight[i + 1], tight[i + 2], tight[i + 3]) = (bar.b, bar.g, bar.r, 255)
            }
        }
        let path = NSTemporaryDirectory() + "md-bars-\(getpid()).jpg"
        defer { try? FileManager.default.removeItem(atPath: path) }
        try PaddedImage(tight: tight, pixelFormat: .argb, width: width, height: height).withFrame { frame in
            try ImageFileFormat(path: path).write(frame, to: path)
        }
        let data = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        XCTAssertEqual(Array(data.prefix(3)), [0xFF, 0xD8, 0xFF], "a JPEG")
        let decoded = try XCTUnwrap(LibjpegReference.bgra(data), "libjpeg-turbo decodes it")
        XCTAssertEqual(decoded.width, width)
        XCTAssertEqual(decoded.height, height)
        for (index, bar) in Self.bars.enumerated() {
            // The middle of each bar; 4:2:0 and quantization blur the edges only.
            let i = ((height / 2) * width + index * 40 + 20) * 4
            let error = max(abs(Int(decoded.bytes[i + 2]) - Int(bar.r)), abs(Int(decoded.bytes[i + 1]) - Int(bar.g)),
                            abs(Int(decoded.bytes[i]) - Int(bar.b)))
            XCTAssertLessThanOrEqual(error, 8, "bar \(index)")
        }
    }

    /// The bars as a padded ARGB frame.
    static func barsImage(width: Int = 320, height: Int = 64) -> PaddedImage {
        var tight = [UInt8](repeating: 0, count: width * height * 4)
        for y in 0..<height {
            for x in 0..<width {
                let bar = bars[x * 8 / width], i = (y * width + x) * 4
                (tight[i], tight[i + 1], tight[i + 2], tight[i + 3]) = (bar.b, bar.g, bar.r, 255)
            }
        }
        return PaddedImage(tight: tight, pixelFormat: .argb, width: width, height: height)
    }

    /// The largest channel difference from each bar's colour, in the middle of each bar of
    /// `pixels` (`stride` bytes a pixel, channels at `r`, `g`, `b`).
    static func worstBarError(_ pixels: [UInt8], width: Int, height: Int, stride: Int, r: Int, g: Int, b: Int) -> Int {
        bars.enumerated().map { index, bar in
            let i = ((height / 2) * width + index * width / 8 + width / 16) * stride
            return max(abs(Int(pixels[i + r]) - Int(bar.r)), abs(Int(pixels[i + g]) - Int(bar.g)), abs(Int(pixels[i + b]) - Int(bar.b)))
        }.max() ?? .max
    }

    func testTheEncodersGiveTheWritersBytesAndDecodeToTheBars() throws {
        let directory = NSTemporaryDirectory() + "md-encoders-\(getpid())"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try Self.barsImage().withFrame { frame in
            let jpeg = try JPEGEncoder(quality: 90).encode(frame)
            try JPEGWriter.write(frame, to: directory + "/bars.jpg")
            XCTAssertEqual(jpeg, [UInt8](try Data(contentsOf: URL(fileURLWithPath: directory + "/bars.jpg"))), "the writer writes the encoder's bytes")
            let decoded = try XCTUnwrap(LibjpegReference.bgra(jpeg))
            XCTAssertLessThanOrEqual(Self.worstBarError(decoded.bytes, width: 320, height: 64, stride: 4, r: 2, g: 1, b: 0), 8)

            let png = try PNGEncoder().encode(frame)
            try PNGWriter.write(frame, to: directory + "/bars.png")
            XCTAssertEqual(png, [UInt8](try Data(contentsOf: URL(fileURLWithPath: directory + "/bars.png"))), "the writer writes the encoder's bytes")
            XCTAssertEqual(Array(png.prefix(8)), [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A], "a PNG")
            let read = try ToolRun.rgb(directory + "/bars.png")
            XCTAssertEqual(Self.worstBarError(read.pixels, width: read.width, height: read.height, stride: 3, r: 0, g: 1, b: 2), 0, "PNG is lossless")
        }
    }

    /// Grey Y 200 is RGB 200 in JPEG's full range and (200 − 16) × 255 / 219 = 214 in limited
    /// range: the first goes to libjpeg-turbo as planes, the second through ARGB.
    func testJPEGKeepsTheRangeOfI420() throws {
        let width = 64, height = 32
        let tight = [UInt8](repeating: 200, count: width * height) + [UInt8](repeating: 128, count: width * height / 2)
        for (colorimetry, expected) in [(Colorimetry.jpeg, 200), (.bt601Limited, 214)] {
            let decoded = try PaddedImage(tight: tight, pixelFormat: .yu12, width: width, height: height, colorimetry: colorimetry).withFrame { frame in
                try XCTUnwrap(LibjpegReference.bgra(try JPEGEncoder(quality: 95).encode(frame)))
            }
            let middle = ((height / 2) * width + width / 2) * 4
            XCTAssertEqual(Int(decoded.bytes[middle + 1]), expected, accuracy: 2, "\(colorimetry)")
        }
    }

    /// libjpeg-turbo's own allocations for one compression (its memory manager's pools, made
    /// and freed by every call), counted on raw calls into a buffer of their own: from BGRX
    /// pixels (`tjCompress2`) and from I420 planes (`tjCompressFromYUVPlanes`).
    static func libjpegAllocationsPerCompression(width: Int, height: Int) throws -> (pixels: UInt64, planes: UInt64) {
        let handle = try XCTUnwrap(tjInitCompress())
        defer { tjDestroy(handle) }
        let pixels = [UInt8](repeating: 120, count: width * height * 4)
        let luma = UnsafeMutablePointer<UInt8>.allocate(capacity: width * height)
        let chroma = UnsafeMutablePointer<UInt8>.allocate(capacity: width * height / 4)
        defer { luma.deallocate(); chroma.deallocate() }
        luma.initialize(repeating: 120, count: width * height)
        chroma.initialize(repeating: 128, count: width * height / 4)
        var planes: [UnsafePointer<UInt8>?] = [UnsafePointer(luma), UnsafePointer(chroma), UnsafePointer(chroma)]
        var strides: [Int32] = [Int32(width), Int32(width / 2), Int32(width / 2)]
        let capacity = tjBufSize(Int32(width), Int32(height), Int32(TJSAMP_420.rawValue))
        var buffer: UnsafeMutablePointer<UInt8>? = tjAlloc(Int32(capacity))
        defer { tjFree(buffer) }
        func fromPixels() -> Int32 {
            var size = capacity
            return tjCompress2(handle, pixels, Int32(width), Int32(width * 4), Int32(height), Int32(TJPF_BGRX.rawValue), &buffer, &size,
                               Int32(TJSAMP_420.rawValue), 80, TJFLAG_NOREALLOC)
        }
        func fromPlanes() -> Int32 {
            var size = capacity
            return tjCompressFromYUVPlanes(handle, &planes, Int32(width), &strides, Int32(height), Int32(TJSAMP_420.rawValue),
                                           &buffer, &size, 80, TJFLAG_NOREALLOC)
        }
        func counted(_ compress: () -> Int32) -> UInt64 {
            XCTAssertEqual(compress(), 0)
            let before = allocation_counter_this_thread()
            XCTAssertEqual(compress(), 0)
            return allocation_counter_this_thread() - before
        }
        return (counted(fromPixels), counted(fromPlanes))
    }

    func testJPEGEncoderLendsFrameAfterFrameAllocatingOnlyWhatLibjpegDoes() throws {
        try XCTSkipIf(allocation_counter_is_active() == 0, "malloc is not interposed in this build")
        let libjpeg = try Self.libjpegAllocationsPerCompression(width: 64, height: 32)
        print("figure: libjpeg-turbo allocates \(libjpeg.pixels) times per compression from pixels, \(libjpeg.planes) from planes (its memory pools)")
        let grey = [UInt8](repeating: 90, count: 64 * 32) + [UInt8](repeating: 128, count: 64 * 32 / 2)
        let images = [("ARGB through the converter", Self.barsImage(width: 64, height: 32), libjpeg.pixels),
                      ("I420 planes", PaddedImage(tight: grey, pixelFormat: .yu12, width: 64, height: 32, colorimetry: .jpeg), libjpeg.planes)]
        for (label, image, libjpegPerFrame) in images {
            let encoder = try JPEGEncoder(quality: 80)
            try image.withFrame { frame in
                var bytes = 0
                try encoder.encode(frame) { bytes += $0.count }  // the first frame sets up
                let before = allocation_counter_this_thread()
                for _ in 0..<20 { try encoder.encode(frame) { bytes += $0.count } }
                XCTAssertEqual(allocation_counter_this_thread() - before, 20 * libjpegPerFrame, "\(label): heap allocations over 20 frames, beyond libjpeg-turbo's own")
                XCTAssertGreaterThan(bytes, 0)
            }
        }
    }

    func testAJPEGIntoAMissingFolderIsAClearError() throws {
        try PaddedImage(tight: [UInt8](repeating: 128, count: 16 * 16 * 4), pixelFormat: .argb, width: 16, height: 16).withFrame { frame in
            XCTAssertThrowsError(try JPEGWriter.write(frame, to: "/nonexistent-md/x.jpg")) { error in
                XCTAssertEqual((error as? MediaDevicesError)?.code, .notFound, "\(error)")
            }
        }
    }
}
