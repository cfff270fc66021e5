import Foundation
import MediaDevices
import TestSupport
import XCTest

/// The emulated USB webcam's 1080p MJPEG through the real uvcvideo, read by two converting
/// sequences that want at most half the picture: each frame is decoded once, at 1/2 in the DCT,
/// and what arrives matches decode-then-scale of the JPEG the camera sent.
final class USBCameraScaledDecodeTests: XCTestCase {
    override func setUpWithError() throws { try Rig.require() }

    func test1080pMJPEGTo640x360I420DecodesOnceAtHalfAsDecodeThenScale() async throws {
        let camera = try Rig.usbCamera()
        defer { camera.close() }
        let size = Size(width: 1920, height: 1080)
        let output = OutputFormat(.yu12, size: Size(width: 640, height: 360))
        let source = CameraSource(device: try camera.device(), request: FormatRequest(pixelFormat: .mjpeg, size: size, frameRate: FrameRate(30)))
        let log = USBFrameLog(camera: camera)
        source.consumer = log
        let preview = try source.frameSequence(bufferSize: 4, output: output)
        let thumbnail = try source.frameSequence(bufferSize: 4, output: OutputFormat(.nv12, size: Size(width: 320, height: 180)))
        try source.start()
        let frames = try await firstFrames(preview, count: 3, seconds: 120, stopping: source)
        let thumbnails = try await firstFrames(thumbnail, count: 1, seconds: 60, stopping: source)
        let statistics = source.statistics
        XCTAssertEqual(source.negotiation?.format.size, size)
        source.release()
        XCTAssertEqual(frames.count, 3, "640x360 frames")
        XCTAssertEqual(thumbnails.first?.size, Size(width: 320, height: 180))
        XCTAssertEqual(log.byteMismatches, [], "every JPEG arrives as the camera sent it")
        XCTAssertEqual(statistics.corruptFrames, 0)
        XCTAssertGreaterThanOrEqual(statistics.scaledDecodeFrames, 3, "decoded scaled")
        XCTAssertEqual(statistics.sharedDecodeFrames, statistics.scaledDecodeFrames, "one decode for both sequences, every frame")
        XCTAssertEqual(statistics.lastDecodeScale, Fraction(1, 2), "the larger request (640x360) sets the scale")
        var worst = Double.infinity
        for frame in frames {
            let counter = try XCTUnwrap(log.counter(sequence: frame.sequence), "frame \(frame.sequence) carries a counter")
            let expected = try Self.decodeThenScale(camera.jpeg(size, counter: UInt32(counter)), size, output)
            XCTAssertEqual(frame.size, Size(width: 640, height: 360))
            let got = frame.planes.flatMap { $0 }
            XCTAssertEqual(got.count, expected.count)
            if got.count == expected.count { worst = min(worst, psnr(got, expected)) }
        }
        XCTAssertGreaterThanOrEqual(worst, 40, "PSNR against decode-then-scale")
        print(String(format: "figure: USB camera MJPEG 1920x1080 -> I420 640x360 (+ NV12 320x180): decoded once at %@ for both, %.1f dB against decode-then-scale (worst of 3); %d of %d frames decoded scaled",
                     statistics.lastDecodeScale?.description ?? "-", worst, statistics.scaledDecodeFrames, statistics.deliveredFrames))
    }

    /// The pipeline's result before scaled decoding: the whole JPEG decoded (libjpeg-turbo, fast
    /// IDCT, 4:2:0 planes as they are), then converted to `output` as a raw I420 frame.
    static func decodeThenScale(_ jpeg: [UInt8], _ size: Size, _ output: OutputFormat) throws -> [UInt8] {
        let planes = try XCTUnwrap(LibjpegReference.planes(jpeg, fastDCT: true))
        let tight = planes.y + planes.u + planes.v
        let chroma = Size(width: (size.width + 1) / 2, height: (size.height + 1) / 2)
        let luma = size.width * size.height
        let format = VideoFormat(pixelFormat: .yu12, width: size.width, height: size.height, colorimetry: .jpeg)
        let converter = try FrameConverter(output: output)
        return try tight.withUnsafeBytes { bytes in
            func plane(_ start: Int, _ plane: Size) -> FramePlane {
                FramePlane(bytes: UnsafeRawBufferPointer(rebasing: bytes[start..<(start + plane.width * plane.height)]), bytesPerRow: plane.width)
            }
            let frame = VideoFrame(format: format, timestamp: MonotonicInstant(nanoseconds: 0), sequence: 0, orientation: .up, captureDelay: .zero, planeCount: 3,
                                   bytesUsed: tight.count, plane0: plane(0, size), plane1: plane(luma, chroma),
                                   plane2: plane(luma + chroma.width * chroma.height, chroma))
            return try converter.convert(frame) { out in
                var result: [UInt8] = []
                for index in 0..<3 {
                    let p = out.plane(index)
                    let width = index == 0 ? out.width : (out.width + 1) / 2
                    let rows = index == 0 ? out.height : (out.height + 1) / 2
                    for row in 0..<rows { result += p.bytes[(row * p.bytesPerRow)..<(row * p.bytesPerRow + width)] }
                }
                return result
            }
        }
    }
}
