import Glibc
import MediaDevices

/// A picture the benchmarks own, in one buffer laid out as a V4L2 driver lays out a frame of its
/// format: a smooth diagonal gradient with colour bars (so that JPEG compresses it as it would a
/// camera's picture, not as noise), and the same picture as a JPEG made by the library's own
/// `JPEGWriter` (libjpeg-turbo), read back from a temporary file.
final class TestImage {
    let format: VideoFormat
    let bytes: UnsafeMutableRawBufferPointer
    let byteCount: Int

    /// A YUYV picture of `size`.
    init(yuyv size: Size) {
        format = VideoFormat(pixelFormat: .yuyv, width: size.width, height: size.height)
        byteCount = format.bufferSizes[0]
        bytes = .allocate(byteCount: byteCount, alignment: 64)
        let stride = format.bytesPerRow[0]
        let pixels = bytes.baseAddress!.assumingMemoryBound(to: UInt8.self)
        for y in 0..<size.height {
            let row = pixels + y * stride
            for pair in 0..<(size.width / 2) {
                let x = pair * 2
                let bar = x * 8 / size.width
                row[pair * 4] = UInt8(truncatingIfNeeded: 16 + (x + y) * 219 / (size.width + size.height))
                row[pair * 4 + 1] = UInt8(truncatingIfNeeded: 128 + (bar & 1 == 0 ? 60 : -60))
                row[pair * 4 + 2] = UInt8(truncatingIfNeeded: 16 + (x + 1 + y) * 219 / (size.width + size.height))
                row[pair * 4 + 3] = UInt8(truncatingIfNeeded: 128 + (bar & 2 == 0 ? 50 : -50))
            }
        }
    }

    /// The JPEG of `source` (quality 90, 4:2:0), as an MJPEG camera delivers it.
    init(jpegOf source: TestImage) throws {
        let path = "/tmp/mediadevices-benchmark-\(getpid()).jpg"
        defer { unlink(path) }
        try JPEGWriter.write(source.frame, to: path, quality: 90)
        guard let file = fopen(path, "rb") else { throw BenchmarkSetupError("cannot read back \(path)") }
        defer { fclose(file) }
        fseek(file, 0, SEEK_END)
        byteCount = ftell(file)
        fseek(file, 0, SEEK_SET)
        bytes = .allocate(byteCount: byteCount, alignment: 64)
        guard fread(bytes.baseAddress, 1, byteCount, file) == byteCount else {
            throw BenchmarkSetupError("short read of \(path)")
        }
        format = VideoFormat(pixelFormat: .mjpeg, width: source.format.width, height: source.format.height,
                             bytesPerRow: [0], bufferSizes: [byteCount])
    }

    deinit { bytes.deallocate() }

    /// The picture as a captured frame, as a camera source hands it to consumers.
    var frame: VideoFrame {
        VideoFrame(format: format, timestamp: MonotonicInstant(nanoseconds: 0), sequence: 0, orientation: .up,
                   captureDelay: .zero, planeCount: 1, bytesUsed: byteCount,
                   plane0: FramePlane(bytes: UnsafeRawBufferPointer(bytes), bytesPerRow: format.bytesPerRow[0]))
    }
}

/// A benchmark that could not prepare its input.
struct BenchmarkSetupError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
