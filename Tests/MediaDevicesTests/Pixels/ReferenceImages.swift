import Foundation
import TestSupport
import XCTest
@testable import MediaDevices
@testable import MediaDevicesAudio
@testable import MediaDevicesVideo
@testable import MediaDevicesCore

/// Test images and reference conversions made by FFmpeg (swscale), independent of libyuv.
enum ReferenceImages {
    static let width = 64
    static let height = 48

    /// A picture with smooth gradients and flat blocks, as RGB24 bytes (R, G, B).
    static let picture: [UInt8] = {
        var bytes = [UInt8](repeating: 0, count: width * height * 3)
        for y in 0..<height {
            for x in 0..<width {
                let i = (y * width + x) * 3
                var (r, g, b) = (x * 4, y * 5, 255 - (x + y) * 2)
                if x >= 40, x < 56, y >= 8, y < 24 { (r, g, b) = (200, 40, 60) }
                if x >= 8, x < 24, y >= 30, y < 44 { (r, g, b) = (30, 180, 220) }
                bytes[i] = UInt8(clamping: r); bytes[i + 1] = UInt8(clamping: g); bytes[i + 2] = UInt8(clamping: b)
            }
        }
        return bytes
    }()

    static let ffmpeg: String? = ["/usr/bin/ffmpeg", "/usr/local/bin/ffmpeg"].first { FileManager.default.isExecutableFile(atPath: $0) }

    /// Runs ffmpeg on raw video: `input` in `inputFormat` at `size` → the bytes of each of
    /// `outputs` (pixel formats), raw or in `container` (`mjpeg` makes a JPEG).
    static func convert(_ input: [UInt8], from inputFormat: String, width: Int = width, height: Int = height,
                        to outputs: [String], filter: String? = nil, container: String = "rawvideo",
                        file: StaticString = #filePath, line: UInt = #line) throws -> [[UInt8]] {
        guard let ffmpeg else {
            XCTFail("ffmpeg is not installed: the converter tests compare against it (scripts/install.sh installs it)", file: file, line: line)
            throw XCTSkip("no ffmpeg")
        }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("mediadevices-ref-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let inputURL = dir.appendingPathComponent("in.raw")
        try Data(input).write(to: inputURL)
        var arguments = ["-hide_banner", "-loglevel", "error", "-f", "rawvideo", "-pix_fmt", inputFormat,
                         "-s", "\(width)x\(height)", "-i", inputURL.path]
        for (index, output) in outputs.enumerated() {
            if let filter { arguments += ["-vf", filter] }
            arguments += ["-sws_flags", "bilinear+accurate_rnd+full_chroma_int", "-f", container, "-pix_fmt", output,
                          "-y", dir.appendingPathComponent("out\(index).raw").path]
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: ffmpeg)
        process.arguments = arguments
        try process.run()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, "ffmpeg \(arguments.joined(separator: " "))", file: file, line: line)
        return try outputs.indices.map { [UInt8](try Data(contentsOf: dir.appendingPathComponent("out\($0).raw"))) }
    }
}

/// Tight raw image bytes laid out as a frame with padded rows (and, for multi-planar formats,
/// separate buffers), so that conversions must honour strides.
struct PaddedImage {
    let format: VideoFormat
    let planes: [[UInt8]]
    /// The payload length of a compressed frame.
    let bytesUsed: Int?

    /// Lays `tight` (planes one after another, no padding) out with `padding` bytes per row.
    init(tight: [UInt8], pixelFormat: PixelFormat, width: Int, height: Int, padding: Int = 16,
         colorimetry: Colorimetry? = nil) {
        let layout = pixelFormat.layout!
        if layout.isCompressed {
            // A JPEG: one buffer holding the bytes as they are, with room to spare as a driver's.
            planes = [tight + [UInt8](repeating: 0, count: padding)]
            format = VideoFormat(pixelFormat: pixelFormat, width: width, height: height, bytesPerRow: [0],
                                 bufferSizes: [planes[0].count], colorimetry: colorimetry)
            bytesUsed = tight.count
            return
        }
        bytesUsed = nil
        var offset = 0
        var planes: [[UInt8]] = []
        var strides: [Int] = []
        for description in layout.planes {
            let row = description.minimumBytesPerRow(width: width)
            let rows = description.rows(height: height)
            let stride = row + padding
            var plane = [UInt8](repeating: 0xEE, count: stride * rows)
            for r in 0..<rows {
                plane[(r * stride)..<(r * stride + row)] = tight[(offset + r * row)..<(offset + r * row + row)]
            }
            offset += row * rows
            planes.append(plane)
            strides.append(stride)
        }
        self.planes = planes
        format = VideoFormat(pixelFormat: pixelFormat, width: width, height: height, bytesPerRow: strides,
                             bufferSizes: planes.map(\.count), colorimetry: colorimetry)
    }

    /// Lends the image as a frame.
    func withFrame<R>(orientation: VideoOrientation = .up, _ body: (VideoFrame) throws -> R) rethrows -> R {
        let copies = planes.map { bytes -> UnsafeMutableRawBufferPointer in
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: bytes.count, alignment: 64)
            buffer.copyBytes(from: bytes)
            return buffer
        }
        defer { copies.forEach { $0.deallocate() } }
        func plane(_ i: Int) -> FramePlane {
            i < copies.count ? FramePlane(bytes: UnsafeRawBufferPointer(copies[i]), bytesPerRow: format.bytesPerRow[i]) : .empty
        }
        let frame = VideoFrame(format: format, timestamp: MonotonicInstant(nanoseconds: 1), sequence: 7, orientation: orientation, captureDelay: .zero,
                               planeCount: planes.count, bytesUsed: bytesUsed ?? planes[0].count,
                               plane0: plane(0), plane1: plane(1), plane2: plane(2))
        return try body(frame)
    }
}

/// The planes of a converted frame, tightly packed (row padding removed).
func tightBytes(_ frame: VideoFrame) -> [UInt8] {
    var bytes: [UInt8] = []
    let layout = frame.format.pixelFormat.layout!
    for (index, description) in layout.planes.enumerated() {
        let plane = frame.plane(index)
        let row = description.minimumBytesPerRow(width: frame.width)
        for r in 0..<description.rows(height: frame.height) {
            bytes += plane.bytes[(r * plane.bytesPerRow)..<(r * plane.bytesPerRow + row)]
        }
    }
    return bytes
}

/// Feeds `image` 23 times to a converting consumer per output (round robin) and asserts that the
/// last 20 conversions of each allocated nothing and that no frame was corrupt. `label` names
/// the case in failures.
func assertConvertingAllocatesNothing(_ image: PaddedImage, to outputs: [OutputFormat], label: String,
                                      file: StaticString = #filePath, line: UInt = #line) throws {
    let probes = outputs.map { _ in AllocationProbe(warmUp: 3, measured: 20) }
    let consumers = try zip(outputs, probes).map { try ConvertingConsumer(output: $0, consumer: $1) }
    image.withFrame { frame in
        var index = 0
        while index < 23 * consumers.count {
            consumers[index % consumers.count].consumeFrame(frame)
            index += 1
        }
    }
    for (probe, consumer) in zip(probes, consumers) {
        XCTAssertEqual(consumer.corruptFrames, 0, "\(label) → \(consumer.output.pixelFormat): \(consumer.lastCorruptFrameReason ?? "")", file: file, line: line)
        XCTAssertEqual(probe.allocations, 0, "\(label) → \(consumer.output.pixelFormat): heap allocations over 20 frames", file: file, line: line)
    }
}
