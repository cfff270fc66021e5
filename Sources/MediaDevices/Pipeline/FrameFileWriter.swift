import Glibc

/// Writes frames to a file: YUV4MPEG2 (`.y4m`, playable by ffplay and mpv) for the formats Y4M
/// can hold without conversion (YU12/I420, YV12, YUV420M as `C420jpeg`; GREY as `Cmono`), and
/// raw frames one after another for everything else. Rows are written without stride padding.
/// Writing a frame allocates nothing.
public final class FrameFileWriter: @unchecked Sendable {
    /// How frames are stored.
    public enum Container: String, Sendable, Codable {
        /// YUV4MPEG2 with a `FRAME` header per frame.
        case y4m
        /// Raw frames, tightly packed, one after another (JPEG frames as they came).
        case raw
    }

    /// The file path.
    public let path: String
    /// The container chosen for the format.
    public let container: Container
    /// The frame format written.
    public let format: VideoFormat
    /// Frames written so far.
    public private(set) var framesWritten = 0
    private var file: UnsafeMutablePointer<FILE>?
    /// The Y4M plane order: YV12 stores Cr before Cb, Y4M wants Cb first.
    private let planeOrder: [Int]

    /// Whether Y4M can hold `pixelFormat` without conversion.
    public static func canWriteY4M(_ pixelFormat: PixelFormat) -> Bool {
        [PixelFormat.yu12, .yv12, .yuv420m, .grey].contains(pixelFormat)
    }

    /// Creates (truncates) `path` for frames of `format` at `frameRate`. `container` defaults
    /// to Y4M when the format allows it.
    public init(path: String, format: VideoFormat, frameRate: FrameRate?, container: Container? = nil) throws {
        self.path = path
        self.format = format
        let chosen = container ?? (FrameFileWriter.canWriteY4M(format.pixelFormat) ? .y4m : .raw)
        guard chosen == .raw || FrameFileWriter.canWriteY4M(format.pixelFormat) else {
            throw MediaDevicesError(.unsupportedFormat, device: nil, operation: "write \(path)",
                                    detail: "Y4M cannot hold \(format.pixelFormat.name) without conversion; capture YU12, YV12, YUV420M or GREY, or write raw")
        }
        self.container = chosen
        planeOrder = format.pixelFormat == .yv12 ? [0, 2, 1] : [0, 1, 2]
        guard let file = fopen(path, "wb") else {
            throw MediaDevicesError.fromFileErrno(errno, path: path, operation: "open \(path) for writing")
        }
        self.file = file
        if chosen == .y4m {
            let rate = frameRate?.framesPerSecond ?? Fraction(30)
            let colour = format.pixelFormat == .grey ? "mono" : "420jpeg"
            let header = "YUV4MPEG2 W\(format.width) H\(format.height) F\(rate.numerator):\(rate.denominator) Ip A1:1 C\(colour)\n"
            try write(Array(header.utf8))
        }
    }

    deinit { try? close() }

    /// Appends one frame.
    public func write(_ frame: VideoFrame) throws {
        if container == .y4m { try write(FrameFileWriter.frameHeader) }
        if frame.format.pixelFormat.isCompressed || frame.format.pixelFormat.layout == nil {
            let bytes = frame.plane(0).bytes
            try write(UnsafeRawBufferPointer(rebasing: bytes.prefix(min(frame.bytesUsed, bytes.count))))
        } else {
            let planes = frame.format.pixelFormat.layout!.planes
            for index in planeOrder where index < min(planes.count, frame.planeCount) {
                let plane = frame.plane(index)
                let rowBytes = planes[index].minimumBytesPerRow(width: frame.width)
                let rows = planes[index].rows(height: frame.height)
                if plane.bytesPerRow == rowBytes, plane.bytes.count >= rowBytes * rows {
                    // No row padding: one write for the plane (one syscall, as v4l2-ctl does).
                    try write(UnsafeRawBufferPointer(rebasing: plane.bytes[0..<(rowBytes * rows)]))
                    continue
                }
                for row in 0..<rows {
                    let start = row * plane.bytesPerRow
                    guard start + rowBytes <= plane.bytes.count else { break }
                    try write(UnsafeRawBufferPointer(rebasing: plane.bytes[start..<(start + rowBytes)]))
                }
            }
        }
        framesWritten += 1
    }

    /// Flushes and closes the file. Safe to call more than once.
    public func close() throws {
        guard let file else { return }
        self.file = nil
        if fclose(file) != 0 { throw MediaDevicesError.fromFileErrno(errno, path: path, operation: "close \(path)") }
    }

    private static let frameHeader = Array("FRAME\n".utf8)

    private func write(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { try write($0) }
    }

    private func write(_ bytes: UnsafeRawBufferPointer) throws {
        guard let file else {
            throw MediaDevicesError(.invalidState, device: nil, operation: "write \(path)", detail: "The file is already closed")
        }
        guard bytes.count > 0 else { return }
        if fwrite(bytes.baseAddress, 1, bytes.count, file) != bytes.count {
            throw MediaDevicesError.fromFileErrno(errno, path: path, operation: "write \(path)")
        }
    }
}
