import MediaDevicesCore
import CTurboJPEG

/// Encodes frames as JPEG in memory with libjpeg-turbo (TurboJPEG), reusing its compressor, its
/// output buffer and its converter from frame to frame: for MJPEG streams, thumbnails and
/// uploads. Files: ``JPEGWriter``.
///
/// An I420 frame in JPEG's own colours (BT.601, full range: a decoded MJPEG frame) is compressed
/// straight from its planes. Anything else the pixel pipeline reads is converted to ARGB first
/// (the colour matrix and range are the pipeline's, as for PNG), which libjpeg-turbo turns into
/// 4:2:0 JFIF — so limited-range camera YUV does not come out washed out. One thread at a time.
///
/// ```swift
/// import MediaDevices
///
/// let source = TestPatternSource(request: FormatRequest(pixelFormat: .yuyv, size: Size(width: 320, height: 240)))
/// try source.start()
/// let encoder = try JPEGEncoder(quality: 80)
/// for try await frame in source.frames() {
///     let jpeg: [UInt8] = try frame.withFrame { try encoder.encode($0) }
///     print(jpeg.count, "bytes")
///     break
/// }
/// source.stop()
/// ```
public final class JPEGEncoder {
    /// The quality, 1–100.
    public let quality: Int
    private let device: String?
    private let handle: tjhandle
    private var buffer: UnsafeMutablePointer<UInt8>?
    private var capacity: UInt = 0
    private var converter: FrameConverter?

    /// An encoder at `quality` (clamped to 1–100); `device` names the frames' source in errors.
    public init(quality: Int = 90, device: String? = nil) throws(MediaDevicesError) {
        guard let handle = tjInitCompress() else {
            throw MediaDevicesError(.io, device: device, operation: "tjInitCompress",
                                    detail: "libjpeg-turbo could not create a compressor (out of memory?)")
        }
        self.handle = handle
        self.quality = min(max(quality, 1), 100)
        self.device = device
    }

    deinit {
        tjFree(buffer)
        tjDestroy(handle)
    }

    /// `frame` as JPEG bytes.
    public func encode(_ frame: VideoFrame) throws(MediaDevicesError) -> [UInt8] {
        try encode(frame) { Array($0) }
    }

    /// Encodes `frame` and lends the JPEG's bytes to `body`, valid only during the call (they
    /// are in the encoder's buffer, reused by the next frame of the same size or smaller):
    /// nothing is allocated per frame. An error `body` throws comes out as a
    /// `MediaDevicesError` whose `underlying` is that error.
    public func encode<R>(_ frame: VideoFrame, _ body: (UnsafeRawBufferPointer) throws -> R) throws(MediaDevicesError) -> R {
        let size: UInt
        if frame.format.pixelFormat == .yu12, frame.format.colorimetry == .jpeg, frame.planeCount == 3 {
            size = try compressPlanes(frame)
        } else {
            if converter == nil { converter = try FrameConverter(output: OutputFormat(.argb), device: device) }
            size = try converter!.convertTyped(frame) { (argb) throws(MediaDevicesError) in try compressARGB(argb) }
        }
        return try MediaDevicesError.catching(device: device, operation: "JPEGEncoder.encode's body") {
            try body(UnsafeRawBufferPointer(start: buffer, count: Int(size)))
        }
    }

    /// Makes the output buffer hold a JPEG of `frame`'s size at the worst case.
    private func reserve(width: Int, height: Int) throws(MediaDevicesError) {
        let needed = tjBufSize(Int32(width), Int32(height), Int32(TJSAMP_420.rawValue))
        guard needed > capacity || buffer == nil else { return }
        tjFree(buffer)
        buffer = tjAlloc(Int32(clamping: needed))
        capacity = buffer == nil ? 0 : needed
        guard buffer != nil else {
            throw MediaDevicesError(.io, device: device, operation: "tjAlloc", detail: "No memory for a \(width)x\(height) JPEG")
        }
    }

    /// Compresses an ARGB frame (libyuv's ARGB: bytes B, G, R, A, TurboJPEG's BGRX); the size.
    private func compressARGB(_ argb: VideoFrame) throws(MediaDevicesError) -> UInt {
        try reserve(width: argb.width, height: argb.height)
        let plane = argb.plane(0)
        var size = capacity
        let status = tjCompress2(handle, plane.bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), Int32(argb.width),
                                 Int32(plane.bytesPerRow), Int32(argb.height), Int32(TJPF_BGRX.rawValue), &buffer, &size,
                                 Int32(TJSAMP_420.rawValue), Int32(quality), TJFLAG_NOREALLOC)
        try check(status, "tjCompress2", argb)
        return size
    }

    /// Compresses an I420 frame in JPEG's colours from its three planes; the size.
    private func compressPlanes(_ frame: VideoFrame) throws(MediaDevicesError) -> UInt {
        try reserve(width: frame.width, height: frame.height)
        let y = frame.plane(0), u = frame.plane(1), v = frame.plane(2)
        // Tuples on the stack, not arrays: nothing allocated per frame.
        var planes: (UnsafePointer<UInt8>?, UnsafePointer<UInt8>?, UnsafePointer<UInt8>?) = (
            y.bytes.baseAddress?.assumingMemoryBound(to: UInt8.self),
            u.bytes.baseAddress?.assumingMemoryBound(to: UInt8.self),
            v.bytes.baseAddress?.assumingMemoryBound(to: UInt8.self))
        var strides: (Int32, Int32, Int32) = (Int32(y.bytesPerRow), Int32(u.bytesPerRow), Int32(v.bytesPerRow))
        var size = capacity
        let status = withUnsafeMutablePointer(to: &planes) { planesPointer in
            withUnsafeMutablePointer(to: &strides) { stridesPointer in
                planesPointer.withMemoryRebound(to: UnsafePointer<UInt8>?.self, capacity: 3) { planeArray in
                    stridesPointer.withMemoryRebound(to: Int32.self, capacity: 3) { strideArray in
                        tjCompressFromYUVPlanes(handle, planeArray, Int32(frame.width), strideArray, Int32(frame.height),
                                                Int32(TJSAMP_420.rawValue), &buffer, &size, Int32(quality), TJFLAG_NOREALLOC)
                    }
                }
            }
        }
        try check(status, "tjCompressFromYUVPlanes", frame)
        return size
    }

    private func check(_ status: Int32, _ operation: String, _ frame: VideoFrame) throws(MediaDevicesError) {
        guard status != 0 else { return }
        throw MediaDevicesError(.io, device: device, operation: operation,
                                detail: "libjpeg-turbo could not compress a \(frame.width)x\(frame.height) frame: \(String(cString: tjGetErrorStr2(handle)))")
    }
}
