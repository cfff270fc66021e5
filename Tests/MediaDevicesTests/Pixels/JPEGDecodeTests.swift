import CTurboJPEG
import Foundation
import TestSupport
import XCTest
@testable import MediaDevices
@testable import MediaDevicesAudio
@testable import MediaDevicesVideo
@testable import MediaDevicesCore

/// MJPEG decoding against libjpeg's own output, on JPEGs FFmpeg made from a known picture, and
/// the handling of the truncated and corrupt frames real webcams send.
final class JPEGDecodeTests: XCTestCase {
    static let w = ReferenceImages.width, h = ReferenceImages.height

    /// A JPEG of the reference picture at `subsampling` (`yuvj420p`, `yuvj422p`), made by FFmpeg.
    static func jpeg(_ subsampling: String) throws -> [UInt8] {
        let jpeg = try ReferenceImages.convert(ReferenceImages.picture, from: "rgb24", to: [subsampling],
                                               container: "mjpeg")
        return jpeg[0]
    }

    /// libjpeg-turbo's own decode of `jpeg` into planes at the JPEG's subsampling, with the
    /// pipeline's default IDCT (fast) unless `fastDCT` is false.
    static func libjpegPlanes(_ jpeg: [UInt8], chromaHeight: Int, fastDCT: Bool = true) -> (y: [UInt8], u: [UInt8], v: [UInt8]) {
        let planes = LibjpegReference.planes(jpeg, fastDCT: fastDCT)!
        precondition(planes.width == w && planes.chromaHeight == chromaHeight, "not the reference JPEG")
        return (planes.y, planes.u, planes.v)
    }

    func frame(_ jpeg: [UInt8]) -> PaddedImage {
        PaddedImage(tight: jpeg, pixelFormat: .mjpeg, width: Self.w, height: Self.h, padding: 4096)
    }

    func decode(_ jpeg: [UInt8], to format: PixelFormat, decoding: JPEGDecoding = .fast) throws -> [UInt8] {
        let converter = try FrameConverter(output: OutputFormat(format, jpegDecoding: decoding))
        return try frame(jpeg).withFrame { try converter.convert($0) { out in
            XCTAssertEqual(out.format.colorimetry, format == .argb ? Colorimetry(matrix: .bt601, range: .full) : .jpeg)
            return tightBytes(out)
        } }
    }

    func test420DecodesExactlyAsLibjpeg() throws {
        let jpeg = try Self.jpeg("yuvj420p")
        let reference = Self.libjpegPlanes(jpeg, chromaHeight: Self.h / 2)
        let ours = try decode(jpeg, to: .yu12)
        XCTAssertEqual(ours, reference.y + reference.u + reference.v, "I420 from a 4:2:0 JPEG must be libjpeg's planes")
        let nv12 = try decode(jpeg, to: .nv12)
        XCTAssertEqual(Array(nv12[0..<(Self.w * Self.h)]), reference.y)
        XCTAssertEqual(nv12[Self.w * Self.h], reference.u[0])
        XCTAssertEqual(nv12[Self.w * Self.h + 1], reference.v[0])
    }

    func testEachIDCTDecodesExactlyAsLibjpegWithThatIDCT() throws {
        let jpeg = try Self.jpeg("yuvj420p")
        let fast = Self.libjpegPlanes(jpeg, chromaHeight: Self.h / 2, fastDCT: true)
        let accurate = Self.libjpegPlanes(jpeg, chromaHeight: Self.h / 2, fastDCT: false)
        let fastBytes = fast.y + fast.u + fast.v, accurateBytes = accurate.y + accurate.u + accurate.v
        let differing = zip(fastBytes, accurateBytes).filter { $0 != $1 }.count
        XCTAssertGreaterThan(differing, 0, "libjpeg's two IDCTs differ on this picture (else this test shows nothing)")
        XCTAssertEqual(try decode(jpeg, to: .yu12), fastBytes, "the default is libjpeg's fast IDCT")
        XCTAssertEqual(try decode(jpeg, to: .yu12, decoding: .fast), fastBytes)
        XCTAssertEqual(try decode(jpeg, to: .yu12, decoding: .accurate), accurateBytes, ".accurate is libjpeg's accurate IDCT")
        let worst = zip(fastBytes, accurateBytes).map { abs(Int($0) - Int($1)) }.max() ?? 0
        print("figure: MJPEG fast vs accurate IDCT: \(differing) of \(fastBytes.count) samples differ, by at most \(worst), \(String(format: "%.1f", psnr(fastBytes, accurateBytes))) dB")
        XCTAssertEqual(OutputFormat(.yu12).jpegDecoding, .fast)
        XCTAssertEqual(OutputFormat(.yu12, jpegDecoding: .accurate).description, "YU12 accurate IDCT")
    }

    func test422DecodesAsLibjpegWithChromaAveragedVertically() throws {
        let jpeg = try Self.jpeg("yuvj422p")
        let reference = Self.libjpegPlanes(jpeg, chromaHeight: Self.h)
        let ours = try decode(jpeg, to: .yu12)
        XCTAssertEqual(Array(ours[0..<(Self.w * Self.h)]), reference.y, "luma is libjpeg's")
        let cw = Self.w / 2, ch = Self.h / 2
        var worst = 0
        for (plane, offset) in [(reference.u, Self.w * Self.h), (reference.v, Self.w * Self.h + cw * ch)] {
            for row in 0..<ch {
                for x in 0..<cw {
                    let expected = (Int(plane[2 * row * cw + x]) + Int(plane[(2 * row + 1) * cw + x]) + 1) / 2
                    worst = max(worst, abs(Int(ours[offset + row * cw + x]) - expected))
                }
            }
        }
        XCTAssertLessThanOrEqual(worst, 1, "4:2:0 chroma is the mean of two 4:2:2 rows")
    }

    func testDecodedPictureMatchesTheOriginal() throws {
        for subsampling in ["yuvj420p", "yuvj422p"] {
            let argb = try decode(try Self.jpeg(subsampling), to: .argb)
            var rgb = [UInt8]()
            for i in stride(from: 0, to: argb.count, by: 4) { rgb += [argb[i + 2], argb[i + 1], argb[i]] }
            let quality = psnr(rgb, ReferenceImages.picture)
            print("figure: MJPEG \(subsampling) decoded to ARGB vs the original picture: \(String(format: "%.1f", quality)) dB")
            XCTAssertGreaterThan(quality, 28, "\(subsampling): the decoded picture is not the one encoded")
        }
    }

    func assertCorrupt(_ bytes: [UInt8], _ what: String, file: StaticString = #filePath, line: UInt = #line) {
        let converter = try! FrameConverter(output: OutputFormat(.nv12))
        var delivered = false
        XCTAssertThrowsError(try frame(bytes).withFrame { try converter.convert($0) { _ in delivered = true } },
                             what, file: file, line: line) { error in
            XCTAssertEqual((error as? MediaDevicesError)?.code, .corruptFrame, "\(what): \(error)", file: file, line: line)
            XCTAssertTrue("\(error)".contains("dropped"), "\(error)", file: file, line: line)
        }
        XCTAssertFalse(delivered, "\(what): a corrupt frame must not be delivered", file: file, line: line)
    }

    func testTruncatedAndCorruptFramesAreErrorsNotPictures() throws {
        let jpeg = try Self.jpeg("yuvj420p")
        assertCorrupt(Array(jpeg.prefix(jpeg.count / 2)), "truncated at half")
        assertCorrupt(Array(jpeg.prefix(jpeg.count - 40)), "truncated near the end")
        var scrambled = jpeg
        for i in (jpeg.count / 2)..<(jpeg.count / 2 + 48) { scrambled[i] = 0xFF }
        assertCorrupt(scrambled, "0xFF run in the entropy-coded data")
        assertCorrupt([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A], "a PNG signature")
        assertCorrupt([0xFF, 0xD8], "start-of-image only")
        assertCorrupt(Array(jpeg.prefix(200)), "headers only")
    }

    func testCorruptFramesAreCountedByTheSourceAndCaptureGoesOn() throws {
        let delivery = FrameDelivery()
        let frames = delivery.makeFrames(bufferSize: 4, converter: try FrameConverter(output: OutputFormat(.nv12)))
        delivery.beginRun()
        let good = try Self.jpeg("yuvj420p")
        frame(good).withFrame { delivery.deliver($0) }
        frame(Array(good.prefix(good.count / 3))).withFrame { delivery.deliver($0) }
        frame(good).withFrame { delivery.deliver($0) }
        let statistics = delivery.statistics
        XCTAssertEqual(statistics.corruptFrames, 1)
        XCTAssertTrue(statistics.lastCorruptFrameReason?.contains("JPEG") == true, "\(statistics.lastCorruptFrameReason ?? "nil")")
        delivery.finish(error: nil)
        let received = try awaitCount(frames)
        XCTAssertEqual(received, 2, "the two good frames arrive; the corrupt one is dropped")
    }

    private func awaitCount(_ frames: VideoFrames) throws -> Int {
        let expectation = expectation(description: "sequence ends")
        let counter = Counter()
        Task {
            for try await buffer in frames {
                XCTAssertEqual(buffer.format.pixelFormat, .nv12)
                counter.add()
            }
            expectation.fulfill()
        }
        wait(for: [expectation], timeout: 10)
        return counter.value
    }
}

private final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func add() { lock.lock(); count += 1; lock.unlock() }
    var value: Int { lock.lock(); defer { lock.unlock() }; return count }
}
