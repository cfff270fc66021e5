import XCTest
@testable import MediaDevices
@testable import MediaDevicesAudio
@testable import MediaDevicesVideo
@testable import MediaDevicesCore

/// Crop, scale, rotation and mirroring on a pattern whose every pixel is known: four coloured
/// quadrants inside black side bands that a centre crop must remove.
final class GeometryTests: XCTestCase {
    typealias RGB = (r: UInt8, g: UInt8, b: UInt8)
    static let red: RGB = (255, 0, 0), green: RGB = (0, 255, 0), blue: RGB = (0, 0, 255), white: RGB = (255, 255, 255)
    static let black: RGB = (0, 0, 0)

    /// 64x48 ARGB (bytes B, G, R, A): black bands 8 px wide at the left and right, and inside
    /// them red | green over blue | white.
    static func pattern(width: Int = 64, height: Int = 48, band: Int = 8) -> PaddedImage {
        var bytes = [UInt8]()
        for y in 0..<height {
            for x in 0..<width {
                let c: RGB
                if x < band || x >= width - band { c = black }
                else if y < height / 2 { c = x < width / 2 ? red : green }
                else { c = x < width / 2 ? blue : white }
                bytes += [c.b, c.g, c.r, 255]
            }
        }
        return PaddedImage(tight: bytes, pixelFormat: .argb, width: width, height: height)
    }

    func pixel(_ frame: VideoFrame, _ x: Int, _ y: Int) -> RGB {
        let plane = frame.plane(0)
        let i = y * plane.bytesPerRow + x * 4
        return (plane.bytes[i + 2], plane.bytes[i + 1], plane.bytes[i])
    }

    func assertColour(_ frame: VideoFrame, _ x: Int, _ y: Int, _ expected: RGB, _ what: String,
                      file: StaticString = #filePath, line: UInt = #line) {
        let p = pixel(frame, x, y)
        XCTAssertTrue(abs(Int(p.r) - Int(expected.r)) <= 2 && abs(Int(p.g) - Int(expected.g)) <= 2 && abs(Int(p.b) - Int(expected.b)) <= 2,
                      "\(what): pixel (\(x), \(y)) is \(p), expected \(expected)", file: file, line: line)
    }

    /// Converts the pattern with `output` and checks the four corners (3 px in).
    func check(_ output: OutputFormat, orientation: VideoOrientation = .up, size: Size,
               corners: (RGB, RGB, RGB, RGB), file: StaticString = #filePath, line: UInt = #line) throws {
        let converter = try FrameConverter(output: output)
        try Self.pattern().withFrame(orientation: orientation) { frame in
            try converter.convert(frame) { out in
                XCTAssertEqual(out.format.size, size, "output size", file: file, line: line)
                let (w, h) = (out.width, out.height)
                assertColour(out, 3, 3, corners.0, "\(output) top left", file: file, line: line)
                assertColour(out, w - 4, 3, corners.1, "\(output) top right", file: file, line: line)
                assertColour(out, 3, h - 4, corners.2, "\(output) bottom left", file: file, line: line)
                assertColour(out, w - 4, h - 4, corners.3, "\(output) bottom right", file: file, line: line)
                if output.upright { XCTAssertEqual(out.orientation, .up, file: file, line: line) }
            }
        }
    }

    func testWithoutGeometryTheBandsStay() throws {
        try check(OutputFormat(.argb), size: Size(width: 64, height: 48),
                  corners: (Self.black, Self.black, Self.black, Self.black))
    }

    func testSquareRequestCentreCropsAwayTheBandsThenScales() throws {
        // 64x48 → 24x24: the centre 48x48 (x 8..<56) scaled by one half.
        try check(OutputFormat(.argb, size: Size(width: 24, height: 24)), size: Size(width: 24, height: 24),
                  corners: (Self.red, Self.green, Self.blue, Self.white))
    }

    func testScaleKeepingTheAspectRatio() throws {
        let converter = try FrameConverter(output: OutputFormat(.argb, size: Size(width: 32, height: 24)))
        try Self.pattern().withFrame { frame in
            try converter.convert(frame) { out in
                XCTAssertEqual(out.format.size, Size(width: 32, height: 24))
                assertColour(out, 1, 12, Self.black, "left band, halved")
                assertColour(out, 8, 3, Self.red, "red quadrant")
                assertColour(out, 23, 20, Self.white, "white quadrant")
            }
        }
    }

    func testRotations() throws {
        let (r, g, b, w) = (Self.red, Self.green, Self.blue, Self.white)
        let crop = Rect(x: 8, y: 0, width: 48, height: 48)
        try check(OutputFormat(.argb, rotation: .clockwise90, crop: crop), size: Size(width: 48, height: 48), corners: (b, r, w, g))
        try check(OutputFormat(.argb, rotation: .upsideDown, crop: crop), size: Size(width: 48, height: 48), corners: (w, b, g, r))
        try check(OutputFormat(.argb, rotation: .clockwise270, crop: crop), size: Size(width: 48, height: 48), corners: (g, w, r, b))
        // A non-square region: the output's width and height trade places.
        let wide = Rect(x: 8, y: 8, width: 48, height: 32)
        try check(OutputFormat(.argb, rotation: .clockwise90, crop: wide), size: Size(width: 32, height: 48), corners: (b, r, w, g))
    }

    func testMirrorAndRotateThenMirror() throws {
        let (r, g, b, w) = (Self.red, Self.green, Self.blue, Self.white)
        let crop = Rect(x: 8, y: 0, width: 48, height: 48)
        try check(OutputFormat(.argb, mirrored: true, crop: crop), size: Size(width: 48, height: 48), corners: (g, r, w, b))
        try check(OutputFormat(.argb, rotation: .clockwise90, mirrored: true, crop: crop), size: Size(width: 48, height: 48),
                  corners: (r, b, g, w))
    }

    func testUprightRotatesByTheFramesOrientation() throws {
        let (r, g, b, w) = (Self.red, Self.green, Self.blue, Self.white)
        let crop = Rect(x: 8, y: 0, width: 48, height: 48)
        // `.left` content needs a quarter turn clockwise to be upright.
        try check(OutputFormat(.argb, upright: true, crop: crop), orientation: .left, size: Size(width: 48, height: 48),
                  corners: (b, r, w, g))
        try check(OutputFormat(.argb, upright: true, crop: crop), orientation: .up, size: Size(width: 48, height: 48),
                  corners: (r, g, b, w))
    }

    func testSizeIsAfterRotation() throws {
        // 64x48 → 24x32 portrait with a quarter turn: before turning, the target is 32x24 (4:3,
        // the source's own aspect), so nothing is cropped; it is scaled to 32x24, then turned.
        let plan = ConversionPlan(source: Size(width: 64, height: 48), orientation: .up,
                                  request: OutputFormat(.nv12, size: Size(width: 24, height: 32), rotation: .clockwise90),
                                  alignment: (2, 2))
        XCTAssertEqual(plan.crop, Rect(x: 0, y: 0, width: 64, height: 48))
        XCTAssertEqual(plan.scaledSize, Size(width: 32, height: 24))
        XCTAssertEqual(plan.outputSize, Size(width: 24, height: 32))
    }

    func testVGAToSquarePlan() {
        let plan = ConversionPlan(source: .vga, orientation: .up, request: OutputFormat(.nv12, size: Size(width: 480, height: 480)),
                                  alignment: (2, 1))
        XCTAssertEqual(plan.crop, Rect(x: 80, y: 0, width: 480, height: 480))
        XCTAssertTrue(plan.isDirect, "a crop to the exact size needs no scaling: one libyuv call")
    }

    func testOddCropEdgesSnapToChromaSamples() {
        let plan = ConversionPlan(source: .vga, orientation: .up, request: OutputFormat(.nv12, crop: Rect(x: 3, y: 5, width: 101, height: 51)),
                                  alignment: (2, 2))
        XCTAssertEqual(plan.crop.x % 2, 0)
        XCTAssertEqual(plan.crop.y % 2, 0)
        XCTAssertTrue(plan.crop.x >= 3 && plan.crop.x + plan.crop.width <= 104, "\(plan.crop)")
    }

    func testNV12OutputRotatedMatchesTheUnrotatedLuma() throws {
        let crop = Rect(x: 8, y: 0, width: 48, height: 48)
        let straight = try FrameConverter(output: OutputFormat(.nv12, crop: crop))
        let turned = try FrameConverter(output: OutputFormat(.nv12, rotation: .clockwise90, crop: crop))
        let image = Self.pattern()
        let a = try image.withFrame { f in try straight.convert(f) { tightBytes($0) } }
        let b = try image.withFrame { f in try turned.convert(f) { tightBytes($0) } }
        // Rotating 90° clockwise: output (x, y) comes from source (y, 47 - x).
        for (x, y) in [(3, 3), (44, 3), (3, 44), (44, 44), (20, 30)] {
            XCTAssertEqual(b[y * 48 + x], a[(47 - x) * 48 + y], "luma at (\(x), \(y))")
        }
        XCTAssertEqual(b.count, 48 * 48 * 3 / 2)
    }
}
