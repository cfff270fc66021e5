import CConsoleTurboJPEG
import MediaDevices

/// Compresses I420 frames (as the library's `OutputFormat(.i420)` gives them) to baseline 4:2:0
/// JPEG with libjpeg-turbo, straight from the planes (no colour conversion), into one buffer it
/// owns and reuses while the size stays the same. One per capture; not for several threads.
final class JPEGEncoder {
    private let handle: tjhandle
    private var buffer: UnsafeMutablePointer<UInt8>?
    private var capacity: UInt = 0
    private let quality: Int32
    private let device: String

    /// An encoder for frames of camera `device` (named in errors), at `quality` (1–100).
    init(device: String, quality: Int = 80) throws(MediaDevicesError) {
        guard let handle = tjInitCompress() else {
            throw MediaDevicesError(.io, device: device, operation: "tjInitCompress",
                                    detail: "libjpeg-turbo could not create a compressor (out of memory?)")
        }
        self.handle = handle
        self.quality = Int32(min(max(quality, 1), 100))
        self.device = device
    }

    deinit {
        tjFree(buffer)
        tjDestroy(handle)
    }

    /// Compresses `frame` (I420) and lends the JPEG's bytes to `body`.
    func encode<R>(_ frame: VideoFrame, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R {
        let width = Int32(frame.width), height = Int32(frame.height)
        let needed = tjBufSize(width, height, Int32(TJSAMP_420.rawValue))
        if needed > capacity {
            tjFree(buffer)
            buffer = tjAlloc(Int32(needed))
            capacity = buffer == nil ? 0 : needed
        }
        guard buffer != nil else {
            throw MediaDevicesError(.io, device: device, operation: "tjAlloc", detail: "no memory for a \(width)x\(height) JPEG")
        }
        let y = frame.plane(0), u = frame.plane(1), v = frame.plane(2)
        var planes: (UnsafePointer<UInt8>?, UnsafePointer<UInt8>?, UnsafePointer<UInt8>?) = (
            y.bytes.baseAddress?.assumingMemoryBound(to: UInt8.self),
            u.bytes.baseAddress?.assumingMemoryBound(to: UInt8.self),
            v.bytes.baseAddress?.assumingMemoryBound(to: UInt8.self))
        var strides: (Int32, Int32, Int32) = (Int32(y.bytesPerRow), Int32(u.bytesPerRow), Int32(v.bytesPerRow))
        var size = capacity
        let status = withUnsafeMutablePointer(to: &planes) { planesPointer in
            withUnsafePointer(to: &strides) { stridesPointer in
                planesPointer.withMemoryRebound(to: UnsafePointer<UInt8>?.self, capacity: 3) { planeArray in
                    stridesPointer.withMemoryRebound(to: Int32.self, capacity: 3) { strideArray in
                        tjCompressFromYUVPlanes(handle, planeArray, width, strideArray, height, Int32(TJSAMP_420.rawValue),
                                                &buffer, &size, quality, TJFLAG_NOREALLOC | TJFLAG_FASTDCT)
                    }
                }
            }
        }
        guard status == 0, let buffer else {
            throw MediaDevicesError(.io, device: device, operation: "tjCompressFromYUVPlanes",
                                    detail: "libjpeg-turbo could not compress a \(width)x\(height) frame: \(String(cString: tjGetErrorStr2(handle)))")
        }
        return try body(UnsafeRawBufferPointer(start: buffer, count: Int(size)))
    }
}
