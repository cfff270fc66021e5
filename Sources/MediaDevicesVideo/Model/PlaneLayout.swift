import MediaDevicesCore
/// How one plane of an image is laid out in memory.
package struct PlaneDescription: Hashable, Sendable {
    /// Bytes per sample in this plane (2 for YUYV's packed plane, 2 for NV12's interleaved CbCr).
    package let bytesPerSample: Int
    /// Horizontal subsampling of this plane relative to the image width (2 for 4:2:x chroma).
    package let horizontalSubsampling: Int
    /// Vertical subsampling of this plane relative to the image height (2 for 4:2:0 chroma).
    package let verticalSubsampling: Int

    /// Describes a plane.
    package init(bytesPerSample: Int, horizontalSubsampling: Int = 1, verticalSubsampling: Int = 1) {
        self.bytesPerSample = bytesPerSample
        self.horizontalSubsampling = horizontalSubsampling
        self.verticalSubsampling = verticalSubsampling
    }

    /// The tight number of bytes in one row for an image `width` pixels wide.
    package func minimumBytesPerRow(width: Int) -> Int {
        (width + horizontalSubsampling - 1) / horizontalSubsampling * bytesPerSample
    }

    /// The number of rows for an image `height` pixels high.
    package func rows(height: Int) -> Int {
        (height + verticalSubsampling - 1) / verticalSubsampling
    }

    /// The row stride of this plane given the stride of plane 0, as V4L2 derives it for
    /// contiguous multi-plane formats: NV12's CbCr rows are as long as its Y rows, YU12's Cb and
    /// Cr rows half as long.
    func bytesPerRow(luminanceBytesPerRow: Int, luminance: PlaneDescription) -> Int {
        let divisor = luminance.bytesPerSample * horizontalSubsampling
        return (luminanceBytesPerRow * bytesPerSample + divisor - 1) / divisor
    }
}

/// The memory layout of a pixel format: its planes, chroma subsampling, whether the data is
/// compressed, and how many separate memory buffers a frame uses.
package struct PlaneLayout: Hashable, Sendable {
    /// The planes in order (Y, then Cb/Cr or CbCr; a packed format has one plane).
    package let planes: [PlaneDescription]
    /// The number of separately allocated buffers (V4L2 `num_planes`): 1 for contiguous formats
    /// such as NV12, 2 for NV12M, 3 for YUV420M.
    package let memoryPlaneCount: Int
    /// Whether the data is compressed (MJPEG, JPEG); such frames have a variable size.
    package let isCompressed: Bool
    /// Chroma subsampling as (horizontal, vertical): (2, 1) for 4:2:2, (2, 2) for 4:2:0,
    /// (1, 1) for 4:4:4 and RGB.
    package let chromaSubsampling: (horizontal: Int, vertical: Int)

    /// Describes a layout.
    package init(planes: [PlaneDescription], memoryPlaneCount: Int = 1, isCompressed: Bool = false,
                chromaSubsampling: (horizontal: Int, vertical: Int) = (1, 1)) {
        self.planes = planes
        self.memoryPlaneCount = memoryPlaneCount
        self.isCompressed = isCompressed
        self.chromaSubsampling = chromaSubsampling
    }

    /// Bytes per pixel of the first plane (2 for YUYV, 1 for NV12's Y plane, 4 for XRGB).
    package var bytesPerPixel: Int { planes.first?.bytesPerSample ?? 0 }

    /// Compares planes, memory plane count, compression and subsampling.
    package static func == (lhs: PlaneLayout, rhs: PlaneLayout) -> Bool {
        lhs.planes == rhs.planes && lhs.memoryPlaneCount == rhs.memoryPlaneCount
            && lhs.isCompressed == rhs.isCompressed
            && lhs.chromaSubsampling == rhs.chromaSubsampling
    }

    /// Hashes the same fields `==` compares.
    package func hash(into hasher: inout Hasher) {
        hasher.combine(planes)
        hasher.combine(memoryPlaneCount)
        hasher.combine(isCompressed)
        hasher.combine(chromaSubsampling.horizontal)
        hasher.combine(chromaSubsampling.vertical)
    }

    static func packed(_ bytes: Int, chroma: (Int, Int) = (1, 1)) -> PlaneLayout {
        PlaneLayout(planes: [PlaneDescription(bytesPerSample: bytes)], chromaSubsampling: chroma)
    }

    static func semiPlanar(horizontal: Int = 2, vertical: Int, memoryPlanes: Int = 1) -> PlaneLayout {
        PlaneLayout(planes: [PlaneDescription(bytesPerSample: 1),
                             PlaneDescription(bytesPerSample: 2, horizontalSubsampling: horizontal,
                                              verticalSubsampling: vertical)],
                    memoryPlaneCount: memoryPlanes, chromaSubsampling: (horizontal, vertical))
    }

    static func planar420(memoryPlanes: Int = 1) -> PlaneLayout {
        let chroma = PlaneDescription(bytesPerSample: 1, horizontalSubsampling: 2, verticalSubsampling: 2)
        return PlaneLayout(planes: [PlaneDescription(bytesPerSample: 1), chroma, chroma],
                           memoryPlaneCount: memoryPlanes, chromaSubsampling: (2, 2))
    }

    static func planar(horizontal: Int, vertical: Int, memoryPlanes: Int = 1) -> PlaneLayout {
        let chroma = PlaneDescription(bytesPerSample: 1, horizontalSubsampling: horizontal, verticalSubsampling: vertical)
        return PlaneLayout(planes: [PlaneDescription(bytesPerSample: 1), chroma, chroma],
                           memoryPlaneCount: memoryPlanes, chromaSubsampling: (horizontal, vertical))
    }

    static let compressed = PlaneLayout(planes: [PlaneDescription(bytesPerSample: 1)], isCompressed: true)
}
