import MediaDevicesCore
/// One plane of an image as libyuv takes it: a pointer and a row stride.
struct PlaneView {
    var base: UnsafePointer<UInt8>?
    var stride: Int32

    static var none: PlaneView { PlaneView(base: nil, stride: 0) }

    /// The plane `rows` rows and `columns` bytes further on.
    func offset(rows: Int, bytes: Int) -> PlaneView {
        PlaneView(base: base.map { $0 + rows * Int(stride) + bytes }, stride: stride)
    }
}

/// A read-only view of an image (a frame's planes, or an intermediate buffer), possibly a
/// cropped region of it. Building one allocates nothing.
struct ImageView {
    var pixelFormat: PixelFormat
    var colorimetry: Colorimetry
    var width: Int32
    var height: Int32
    var plane0: PlaneView
    var plane1: PlaneView
    var plane2: PlaneView

    /// The planes of `frame`.
    init(_ frame: VideoFrame) {
        pixelFormat = frame.format.pixelFormat
        colorimetry = frame.format.colorimetry
        width = Int32(frame.width)
        height = Int32(frame.height)
        func view(_ index: Int) -> PlaneView {
            guard index < frame.planeCount else { return .none }
            let plane = frame.plane(index)
            return PlaneView(base: plane.bytes.baseAddress?.assumingMemoryBound(to: UInt8.self),
                             stride: Int32(plane.bytesPerRow))
        }
        plane0 = view(0)
        plane1 = view(1)
        plane2 = view(2)
    }

    init(pixelFormat: PixelFormat, colorimetry: Colorimetry, width: Int32, height: Int32,
         plane0: PlaneView, plane1: PlaneView = .none, plane2: PlaneView = .none) {
        self.pixelFormat = pixelFormat
        self.colorimetry = colorimetry
        self.width = width
        self.height = height
        self.plane0 = plane0
        self.plane1 = plane1
        self.plane2 = plane2
    }

    /// The region `rect` of this image (aligned by the caller to the chroma subsampling).
    func cropped(to rect: Rect) -> ImageView {
        guard rect.x != 0 || rect.y != 0 || rect.width != Int(width) || rect.height != Int(height),
              let layout = pixelFormat.layout else { return self }
        var view = self
        view.width = Int32(rect.width)
        view.height = Int32(rect.height)
        func shift(_ plane: PlaneView, _ index: Int) -> PlaneView {
            guard index < layout.planes.count else { return plane }
            let description = layout.planes[index]
            var bytes = rect.x / description.horizontalSubsampling * description.bytesPerSample
            if layout.planes.count == 1, layout.chromaSubsampling.horizontal > 1 {
                bytes = rect.x * description.bytesPerSample   // packed 4:2:2: x is even
            }
            return plane.offset(rows: rect.y / description.verticalSubsampling, bytes: bytes)
        }
        view.plane0 = shift(plane0, 0)
        view.plane1 = shift(plane1, 1)
        view.plane2 = shift(plane2, 2)
        return view
    }
}

/// Memory for one intermediate or output image, reused frame after frame: it grows when a
/// larger image comes and never shrinks, so steady-state conversion allocates nothing.
final class ImageBuffer {
    private var storage: UnsafeMutableRawPointer?
    private var capacity = 0
    /// The tightly packed format of the image the buffer holds now.
    private(set) var format = VideoFormat(pixelFormat: .yu12, width: 0, height: 0, bytesPerRow: [], bufferSizes: [])
    private var offsets: (Int, Int, Int) = (0, 0, 0)
    private var strides: (Int, Int, Int) = (0, 0, 0)
    private var lengths: (Int, Int, Int) = (0, 0, 0)

    deinit { storage?.deallocate() }

    /// Makes the buffer hold a `pixelFormat` image of `size`. Recomputes the layout only when the
    /// format or size changes.
    func prepare(_ pixelFormat: PixelFormat, _ size: Size, colorimetry: Colorimetry) {
        if format.pixelFormat == pixelFormat, format.width == size.width, format.height == size.height {
            if format.colorimetry != colorimetry { format.colorimetry = colorimetry }
            return
        }
        format = VideoFormat(pixelFormat: pixelFormat, width: size.width, height: size.height, colorimetry: colorimetry)
        let planes = pixelFormat.layout?.planes ?? []
        var offset = 0
        var o = (0, 0, 0), s = (0, 0, 0), l = (0, 0, 0)
        for index in 0..<min(planes.count, 3) {
            let stride = format.bytesPerRow[index]
            let length = stride * planes[index].rows(height: size.height)
            switch index {
            case 0: o.0 = offset; s.0 = stride; l.0 = length
            case 1: o.1 = offset; s.1 = stride; l.1 = length
            default: o.2 = offset; s.2 = stride; l.2 = length
            }
            offset += (length + 63) / 64 * 64
        }
        offsets = o; strides = s; lengths = l
        if offset > capacity {
            storage?.deallocate()
            capacity = offset
            storage = .allocate(byteCount: capacity, alignment: 64)
        }
    }

    /// Plane `index`'s writable start.
    func plane(_ index: Int) -> UnsafeMutablePointer<UInt8> {
        let offset = index == 0 ? offsets.0 : index == 1 ? offsets.1 : offsets.2
        return (storage! + offset).assumingMemoryBound(to: UInt8.self)
    }

    /// Plane `index`'s row stride.
    func stride(_ index: Int) -> Int32 { Int32(index == 0 ? strides.0 : index == 1 ? strides.1 : strides.2) }

    /// The image as a read-only view.
    var view: ImageView {
        let count = format.pixelFormat.layout?.planes.count ?? 1
        func planeView(_ index: Int) -> PlaneView {
            index < count ? PlaneView(base: UnsafePointer(plane(index)), stride: stride(index)) : .none
        }
        return ImageView(pixelFormat: format.pixelFormat, colorimetry: format.colorimetry,
                         width: Int32(format.width), height: Int32(format.height),
                         plane0: planeView(0), plane1: planeView(1), plane2: planeView(2))
    }

    /// The image as a frame carrying `source`'s timing, lent for the duration of `body`.
    func withFrame<R, Failure: Error>(timing source: VideoFrame, orientation: VideoOrientation, _ body: (VideoFrame) throws(Failure) -> R) throws(Failure) -> R {
        let count = format.pixelFormat.layout?.planes.count ?? 1
        func framePlane(_ index: Int) -> FramePlane {
            guard index < count else { return .empty }
            let length = index == 0 ? lengths.0 : index == 1 ? lengths.1 : lengths.2
            return FramePlane(bytes: UnsafeRawBufferPointer(start: plane(index), count: length),
                              bytesPerRow: Int(stride(index)))
        }
        let total = count == 1 ? lengths.0 : count == 2 ? lengths.0 + lengths.1 : lengths.0 + lengths.1 + lengths.2
        let frame = VideoFrame(format: format, timestamp: source.timestamp, sequence: source.sequence,
                               orientation: orientation, captureDelay: source.captureDelay, planeCount: count,
                               bytesUsed: total, plane0: framePlane(0), plane1: framePlane(1), plane2: framePlane(2))
        return try body(frame)
    }
}
