import Foundation
import TestSupport
import XCTest
@testable import MediaDevices
@testable import MediaDevicesAudio
@testable import MediaDevicesVideo
@testable import MediaDevicesCore

/// Still-image files: the extension decides the format (refused before anything is opened), and
/// a JPEG written from a frame decodes (with libjpeg-turbo on its own) to the frame's colours.
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

    func testAJPEGIntoAMissingFolderIsAClearError() throws {
        try PaddedImage(tight: [UInt8](repeating: 128, count: 16 * 16 * 4), pixelFormat: .argb, width: 16, height: 16).withFrame { frame in
            XCTAssertThrowsError(try JPEGWriter.write(frame, to: "/nonexistent-md/x.jpg")) { error in
                XCTAssertEqual((error as? MediaDevicesError)?.code, .notFound, "\(error)")
            }
        }
    }
}
