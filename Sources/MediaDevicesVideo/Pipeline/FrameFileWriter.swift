import MediaDevicesCore
import Glibc

/// Writes frames to a file, or to standard output for the path `-`: YUV4MPEG2 (`.y4m`, playable
/// by ffplay and mpv) at the chroma resolution the source has — 4:2:0 (`C420jpeg`: YU12, YV12,
/// YUV420M), 4:2:2 (`C422`: YUYV, UYVY and their swapped twins, NV16, NV61, 422P, YUV422M...),
/// 4:4:4 (`C444`: NV24, NV42, YUV444M, packed 4:4:4 YUV, and ARGB, which is how RGB, Bayer and
/// HSV sources reach the file once converted to ARGB), `Cmono` for grey (8 to 16 bits) —, or raw
/// frames one after another where Y4M cannot hold the format as it comes (ask the source for
/// I420, `OutputFormat(.yu12)`, for a playable file). The command-line tool's `--output` also
/// writes the camera's JPEGs as they came (`.mjpeg`) and picks the container by the file name,
/// as FFmpeg does. Rows are written without stride padding. Writing a frame allocates nothing.
public final class FrameFileWriter {
    /// How frames are stored.
    package enum Container: String, Sendable, Codable {
        /// YUV4MPEG2 with a `FRAME` header per frame.
        case y4m
        /// Raw frames, tightly packed, one after another (JPEG frames as they came).
        case raw
        /// Motion JPEG: the camera's JPEG frames as they came, no decode.
        case mjpeg
    }

    /// The file name extensions that mean raw frames.
    package static let rawExtensions: Set<String> = ["raw", "yuv", "rgb", "bgr", "rgba", "bgra", "argb", "gray", "grey",
                                                    "nv12", "nv21", "nv16", "yuyv", "uyvy", "i420", "yv12", "yu12", "rgb565"]

    /// The container a file name asks for, as FFmpeg decides by the name: `.y4m` and `-`
    /// (standard output) are Y4M, `.mjpeg`/`.mjpg` motion JPEG, a raw extension (`.yuv`,
    /// `.nv12`, …) raw frames, and so does a character device such as `/dev/null`. Any other name
    /// is an error that says what the names mean.
    package static func container(for path: String) throws(MediaDevicesError) -> Container {
        if path == "-" { return .y4m }
        // A device such as /dev/null takes the frames as they come (benchmarks, pipes to a driver).
        var status = stat()
        if stat(path, &status) == 0, status.st_mode & S_IFMT == S_IFCHR { return .raw }
        let name = path.split(separator: "/").last.map(String.init) ?? path
        let ext = name.contains(".") ? String(name.split(separator: ".").last!).lowercased() : ""
        switch ext {
        case "y4m": return .y4m
        case "mjpeg", "mjpg": return .mjpeg
        case _ where rawExtensions.contains(ext): return .raw
        default:
            throw MediaDevicesError(.unsupportedFormat, device: nil, operation: "write \(path)",
                                    detail: "The file name decides what is written: .y4m (YUV4MPEG2, converted as needed; plays in ffplay and mpv), - (Y4M to standard output), .mjpeg (the camera's JPEG frames, no decode), or a raw extension (\(rawExtensions.sorted().map { "." + $0 }.joined(separator: " ")))")
        }
    }

    /// The file path.
    public let path: String
    /// The container chosen for the format.
    package let container: Container
    /// The frame format written.
    public let format: VideoFormat
    /// Frames written so far.
    public private(set) var framesWritten = 0
    private var file: AtomicFile?
    /// Frames as Y4M planes (`container == .y4m`).
    private let y4mPlanes = Y4MPlanes()

    /// Whether a Y4M file takes frames of `pixelFormat` as they come (splitting packed and
    /// semi-planar layouts itself), without the pixel pipeline converting them first.
    package static func canWriteY4M(_ pixelFormat: PixelFormat) -> Bool {
        Y4MPlanes.chroma(of: pixelFormat) != nil
    }

    /// What the pixel pipeline converts frames of `pixelFormat` to before a Y4M file takes them:
    /// `nil` when the file takes them as they come (`canWriteY4M`); ARGB for RGB, Bayer and HSV
    /// (written as 4:4:4: FFmpeg 5 refuses RGB for Y4M and asks for a `-pix_fmt`, and 4:4:4 is
    /// the one of Y4M's layouts that keeps all the colour an RGB pixel has); I420 for the rest
    /// (MJPEG, NV12/NV21).
    package static func y4mIntermediate(for pixelFormat: PixelFormat) -> PixelFormat? {
        if canWriteY4M(pixelFormat) { return nil }
        return !pixelFormat.isYUV && !pixelFormat.isCompressed && FrameConverter.canConvert(pixelFormat) ? .argb : .yu12
    }

    /// Starts a YUV4MPEG2 file (`.y4m`, playable by ffplay and mpv) for frames of `format` at
    /// `frameRate`, which appears at `path`, whole, when ``close()`` returns (written beside it
    /// and renamed; a failed write removes what was written); `-` writes Y4M to standard output.
    /// Frames whose pixel format Y4M cannot hold as it comes (RGB, Bayer, HSV, NV12, MJPEG) are
    /// written raw, one after another: ask the source for I420 (`OutputFormat(.yu12)`) to get a
    /// playable file of any of them. (The command-line tool's `--output` also picks raw and
    /// motion JPEG files by their name.)
    public convenience init(path: String, format: VideoFormat, frameRate: FrameRate?) throws(MediaDevicesError) {
        try self.init(path: path, format: format, frameRate: frameRate, container: nil)
    }

    /// Starts a file for frames of `format` at `frameRate`, which appears at `path`, whole, when
    /// `close()` returns (`AtomicFile`: written beside it and renamed, mode 0644 less the umask; a
    /// failed write removes what was written; a character device such as /dev/null is written in
    /// place); `-` writes to `standardOutput` (a descriptor the caller may have set aside, so
    /// that nothing else reaches the stream). `container` defaults to Y4M when the format allows it.
    package init(path: String, format: VideoFormat, frameRate: FrameRate?, container: Container?,
                standardOutput: Int32 = STDOUT_FILENO) throws(MediaDevicesError) {
        self.path = path
        self.format = format
        let chosen = container ?? (FrameFileWriter.canWriteY4M(format.pixelFormat) ? .y4m : .raw)
        guard chosen != .y4m || FrameFileWriter.canWriteY4M(format.pixelFormat) else {
            throw MediaDevicesError(.unsupportedFormat, device: nil, operation: "write \(path)",
                                    detail: "Y4M cannot hold \(format.pixelFormat.name) without conversion; convert to \(FrameFileWriter.y4mIntermediate(for: format.pixelFormat)?.name ?? "YU12") first, or write raw")
        }
        guard chosen != .mjpeg || format.pixelFormat.isCompressed else {
            throw MediaDevicesError(.unsupportedFormat, device: nil, operation: "write \(path)",
                                    detail: "A .mjpeg file stores the camera's JPEG frames, but these frames are \(format.pixelFormat.name); capture --format MJPG, or write .y4m")
        }
        self.container = chosen
        if path == "-" {
            guard let stream = fdopen(dup(standardOutput), "wb") else {
                throw MediaDevicesError.fromFileErrno(errno, path: path, operation: "open standard output for writing")
            }
            file = AtomicFile(inPlace: stream, path: path, operation: "write standard output")
        } else {
            file = try AtomicFile(path: path, operation: "write \(path)")
        }
        if chosen == .y4m { try write(Array(FrameFileWriter.y4mHeader(format, frameRate: frameRate).utf8)) }
    }

    deinit { try? close() }

    /// Appends one frame.
    public func write(_ frame: VideoFrame) throws(MediaDevicesError) {
        if container == .y4m {
            try FrameConverter.checkLength(frame, device: nil)
            guard let planes = y4mPlanes.planes(of: frame), planes.status == 0 else {
                throw MediaDevicesError(.io, device: nil, operation: "write \(path)",
                                        detail: "libyuv refused to split a \(frame.format.pixelFormat.name) frame into Y4M planes; this is a MediaDevices bug: please report the format")
            }
            try write(FrameFileWriter.frameHeader)
            try writeY4M(planes.view, planes.chroma)
        } else {
            try Self.forEachRawSpan(of: frame) { (span) throws(MediaDevicesError) in try write(span) }
        }
        framesWritten += 1
    }

    /// Hands `body` the bytes of `frame` as a raw file stores them, in order: a compressed frame's
    /// bytes used, or each plane's rows without stride padding (one span a plane when its rows are
    /// tight, one a row when they are padded). What `.raw` files and the command-line tool's
    /// audio-and-video files (rawvideo packets) hold per frame.
    package static func forEachRawSpan(of frame: VideoFrame,
                                       _ body: (UnsafeRawBufferPointer) throws(MediaDevicesError) -> Void) throws(MediaDevicesError) {
        if frame.format.pixelFormat.isCompressed || frame.format.pixelFormat.layout == nil {
            let bytes = frame.plane(0).bytes
            try body(UnsafeRawBufferPointer(rebasing: bytes.prefix(min(frame.bytesUsed, bytes.count))))
            return
        }
        let planes = frame.format.pixelFormat.layout!.planes
        for index in 0..<min(planes.count, frame.planeCount) {
            let plane = frame.plane(index)
            let rowBytes = planes[index].minimumBytesPerRow(width: frame.width)
            let rows = planes[index].rows(height: frame.height)
            if plane.bytesPerRow == rowBytes, plane.bytes.count >= rowBytes * rows {
                // No row padding: one span for the plane (one write, as v4l2-ctl does).
                try body(UnsafeRawBufferPointer(rebasing: plane.bytes[0..<(rowBytes * rows)]))
                continue
            }
            for row in 0..<rows {
                let start = row * plane.bytesPerRow
                guard start + rowBytes <= plane.bytes.count else { break }
                try body(UnsafeRawBufferPointer(rebasing: plane.bytes[start..<(start + rowBytes)]))
            }
        }
    }

    /// Flushes and closes the file and moves it to `path` (`AtomicFile`). Safe to call more than once.
    public func close() throws(MediaDevicesError) {
        guard let file else { return }
        self.file = nil
        try file.commit()
    }

    private static let frameHeader = Array("FRAME\n".utf8)

    /// `YUV4MPEG2 W640 H480 F30:1 Ip A1:1 C420jpeg XCOLORRANGE=LIMITED`: the chroma tag (`420jpeg`,
    /// `422`, `444`, or `mono` for grey) and the range FFmpeg reads.
    static func y4mHeader(_ format: VideoFormat, frameRate: FrameRate?) -> String {
        let rate = frameRate?.framesPerSecond ?? Fraction(30)
        let colour = Y4MPlanes.chroma(of: format.pixelFormat)?.rawValue ?? "420jpeg"
        let range = Y4MPlanes.range(of: format) == .full ? "FULL" : "LIMITED"
        return "YUV4MPEG2 W\(format.width) H\(format.height) F\(rate.numerator):\(rate.denominator) Ip A1:1 C\(colour) XCOLORRANGE=\(range)\n"
    }

    /// Writes the planes of `view` (Y, then Cb and Cr at `chroma`'s resolution), row by row
    /// without padding, one write a plane when its rows are tight.
    private func writeY4M(_ view: ImageView, _ chroma: Y4MPlanes.Chroma) throws(MediaDevicesError) {
        let (w, h) = (Int(view.width), Int(view.height))
        let (cw, ch) = chroma == .c420 ? ((w + 1) / 2, (h + 1) / 2) : chroma == .c422 ? ((w + 1) / 2, h) : (w, h)
        try writePlane(view.plane0, width: w, rows: h)
        guard chroma != .mono else { return }
        try writePlane(view.plane1, width: cw, rows: ch)
        try writePlane(view.plane2, width: cw, rows: ch)
    }

    private func writePlane(_ plane: PlaneView, width: Int, rows: Int) throws(MediaDevicesError) {
        guard let base = plane.base else { return }
        let stride = Int(plane.stride)
        if stride == width {
            try write(UnsafeRawBufferPointer(start: base, count: width * rows))
            return
        }
        for row in 0..<rows {
            try write(UnsafeRawBufferPointer(start: base + row * stride, count: width))
        }
    }

    private func write(_ bytes: [UInt8]) throws(MediaDevicesError) {
        try bytes.withUnsafeBufferPointer { (buffer) throws(MediaDevicesError) in try write(UnsafeRawBufferPointer(buffer)) }
    }

    private func write(_ bytes: UnsafeRawBufferPointer) throws(MediaDevicesError) {
        guard let file else {
            throw MediaDevicesError(.invalidState, device: nil, operation: "write \(path)", detail: "The file is already closed")
        }
        try file.write(bytes)
    }
}
