import MediaDevicesCore
/// The format of video frames: pixel format, size, and the bytes per row of each plane as the
/// driver reports them (which may be larger than the width needs).
/// The corresponding V4L2 structs are `v4l2_pix_format` and `v4l2_pix_format_mplane`.
public struct VideoFormat: Hashable, Sendable, CustomStringConvertible {
    /// The pixel format.
    public var pixelFormat: PixelFormat
    /// Width in pixels.
    public var width: Int
    /// Height in pixels.
    public var height: Int
    /// Bytes per row of each plane (Y, then chroma). One entry for packed formats.
    public var bytesPerRow: [Int]
    /// The size in bytes of each memory buffer (`sizeimage`): one entry, or one per memory plane
    /// for the multi-planar formats (NV12M, YUV420M).
    public var bufferSizes: [Int]
    /// The YCbCr matrix and range of the data (for YUV formats; RGB and grey data are full range).
    /// Without one, BT.601 limited for YUV, full range otherwise (BT.601 full, as JPEG).
    public var colorimetry: Colorimetry

    /// A format with the driver-reported strides and buffer sizes.
    public init(pixelFormat: PixelFormat, width: Int, height: Int, bytesPerRow: [Int], bufferSizes: [Int],
                colorimetry: Colorimetry? = nil) {
        self.pixelFormat = pixelFormat
        self.width = width
        self.height = height
        self.bytesPerRow = bytesPerRow
        self.bufferSizes = bufferSizes
        self.colorimetry = colorimetry ?? Colorimetry.default(for: pixelFormat)
    }

    /// A tightly packed format (no row padding), as a source that owns its memory lays it out.
    public init(pixelFormat: PixelFormat, width: Int, height: Int, colorimetry: Colorimetry? = nil) {
        self.pixelFormat = pixelFormat
        self.width = width
        self.height = height
        self.colorimetry = colorimetry ?? Colorimetry.default(for: pixelFormat)
        let planes = pixelFormat.layout?.planes ?? []
        bytesPerRow = planes.map { $0.minimumBytesPerRow(width: width) }
        let planeSizes = zip(planes, bytesPerRow).map { $0.rows(height: height) * $1 }
        if (pixelFormat.layout?.memoryPlaneCount ?? 1) > 1 {
            bufferSizes = planeSizes
        } else {
            bufferSizes = [planeSizes.reduce(0, +)]
        }
    }

    /// The size in pixels.
    public var size: Size { Size(width: width, height: height) }

    /// The total bytes of one frame across all memory planes (`sizeimage` summed).
    public var imageSize: Int { bufferSizes.reduce(0, +) }

    /// The byte offset of each plane from the start of its memory buffer, and which buffer it is
    /// in. For contiguous formats every plane is in buffer 0, one after the other.
    public var planeLocations: [(buffer: Int, offset: Int)] {
        let planes = pixelFormat.layout?.planes ?? []
        if (pixelFormat.layout?.memoryPlaneCount ?? 1) > 1 {
            return planes.indices.map { ($0, 0) }
        }
        var offset = 0
        var result: [(buffer: Int, offset: Int)] = []
        for (index, plane) in planes.enumerated() {
            result.append((0, offset))
            let stride = index < bytesPerRow.count ? bytesPerRow[index] : plane.minimumBytesPerRow(width: width)
            offset += stride * plane.rows(height: height)
        }
        return result
    }

    /// `"YUYV 640x480"`.
    public var description: String { "\(pixelFormat) \(width)x\(height)" }
}
