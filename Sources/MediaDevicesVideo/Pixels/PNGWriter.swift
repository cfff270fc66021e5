import MediaDevicesCore
import CPNG
import CYUV
#if canImport(Glibc)
import Glibc
#endif

/// Writes frames as PNG files through libpng (its simplified `png_image` API). Any frame the
/// pixel pipeline reads can be written: it is converted to RGB first.
public enum PNGWriter {
    /// Writes `frame` to `path` as an 8-bit RGB PNG, whole or not at all (`AtomicFile`: mode
    /// 0644 less the umask; a missing or read-only folder is a clear `MediaDevicesError`).
    public static func write(_ frame: VideoFrame, to path: String) throws(MediaDevicesError) {
        let converter = try FrameConverter(output: OutputFormat(.argb))
        try converter.convert(frame) { argb in
            let width = argb.width, height = argb.height
            let rowBytes = width * 3
            let rgb = UnsafeMutablePointer<UInt8>.allocate(capacity: rowBytes * height)
            defer { rgb.deallocate() }
            let plane = argb.plane(0)
            // libyuv's RGB24 is bytes B, G, R: libpng's BGR format.
            ARGBToRGB24(plane.bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), Int32(plane.bytesPerRow),
                        rgb, Int32(rowBytes), Int32(width), Int32(height))
            var image = png_image()
            image.version = cpng_IMAGE_VERSION
            image.width = UInt32(width)
            image.height = UInt32(height)
            image.format = cpng_FORMAT_BGR
            let file = try AtomicFile(path: path, operation: "write PNG")
            errno = 0
            let status = png_image_write_to_stdio(&image, file.stream, 0, rgb, Int32(rowBytes), nil)
            let error = errno
            let message = withUnsafeBytes(of: image.message) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            png_image_free(&image)
            guard status != 0 else {
                file.discard()
                // libpng reports a failed write with strerror(errno) as its message.
                if error != 0, message.isEmpty || message == String(cString: strerror(error)) {
                    throw MediaDevicesError.fromFileErrno(error, path: path, operation: "write PNG")
                }
                throw MediaDevicesError(.io, device: nil, operation: "write PNG",
                                        detail: "libpng could not write \(path): \(message)")
            }
            try file.commit()
        }
    }
}
