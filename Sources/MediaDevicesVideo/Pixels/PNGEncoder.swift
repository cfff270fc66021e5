import MediaDevicesCore
import CPNG
import CYUV

/// Encodes frames as 8-bit RGB PNG in memory with libpng (its simplified `png_image` API),
/// reusing its converter and RGB buffer from frame to frame. Any frame the pixel pipeline
/// reads can be encoded: it is converted to RGB first. Files: ``PNGWriter``. One thread at a
/// time.
public final class PNGEncoder {
    private let device: String?
    private var converter: FrameConverter?
    private var rgb: [UInt8] = []

    /// An encoder; `device` names the frames' source in errors.
    public init(device: String? = nil) {
        self.device = device
    }

    /// `frame` as PNG bytes.
    public func encode(_ frame: VideoFrame) throws(MediaDevicesError) -> [UInt8] {
        if converter == nil { converter = try FrameConverter(output: OutputFormat(.argb), device: device) }
        return try converter!.convertTyped(frame) { (argb) throws(MediaDevicesError) in try compress(argb) }
    }

    private func compress(_ argb: VideoFrame) throws(MediaDevicesError) -> [UInt8] {
        let width = argb.width, height = argb.height
        let rowBytes = width * 3
        if rgb.count != rowBytes * height { rgb = [UInt8](repeating: 0, count: rowBytes * height) }
        let plane = argb.plane(0)
        // libyuv's RGB24 is bytes B, G, R: libpng's BGR format.
        rgb.withUnsafeMutableBufferPointer {
            _ = ARGBToRGB24(plane.bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), Int32(plane.bytesPerRow),
                            $0.baseAddress, Int32(rowBytes), Int32(width), Int32(height))
        }
        var image = png_image()
        image.version = cpng_IMAGE_VERSION
        image.width = UInt32(width)
        image.height = UInt32(height)
        image.format = cpng_FORMAT_BGR
        defer { png_image_free(&image) }
        // Twice: once for the size, once into a buffer of that size.
        var size: png_alloc_size_t = 0
        var status = rgb.withUnsafeBufferPointer { png_image_write_to_memory(&image, nil, &size, 0, $0.baseAddress, Int32(rowBytes), nil) }
        try check(status, &image)
        var png = [UInt8](repeating: 0, count: Int(size))
        status = png.withUnsafeMutableBytes { memory in
            rgb.withUnsafeBufferPointer { png_image_write_to_memory(&image, memory.baseAddress, &size, 0, $0.baseAddress, Int32(rowBytes), nil) }
        }
        try check(status, &image)
        png.removeLast(png.count - Int(size))
        return png
    }

    private func check(_ status: Int32, _ image: inout png_image) throws(MediaDevicesError) {
        guard status == 0 else { return }
        let message = withUnsafeBytes(of: image.message) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        throw MediaDevicesError(.io, device: device, operation: "png_image_write_to_memory",
                                detail: "libpng could not encode a \(image.width)x\(image.height) frame: \(message)")
    }
}
