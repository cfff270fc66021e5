import MediaDevicesCore

/// The format a ``VirtualCamera`` publishes, and how its frames are made from the source's:
/// chosen once, when it starts. Internal; unit-tested.
struct LoopbackFormat: Equatable, Sendable {
    /// The pixel format on the device.
    var pixelFormat: PixelFormat
    /// The size on the device.
    var size: Size
    /// The rate readers are told.
    var frameRate: FrameRate
    /// What the pixel pipeline converts the source's frames to; `nil`: they are written as the
    /// source gives them (its own format and size already are the device's).
    var conversion: OutputFormat?

    /// The pixel format published when none is asked: I420, which Chromium, Firefox, FFmpeg and
    /// GStreamer read from a V4L2 device, and which the pipeline makes from every source.
    static let defaultPixelFormat = PixelFormat.yu12
    /// The size published when neither the request nor the source gives one.
    static let defaultSize = Size(width: 640, height: 480)
    /// The rate published when neither the request nor the source gives one.
    static let defaultFrameRate = FrameRate(30)
    /// The pixel formats the pipeline converts any source to that V4L2 readers take.
    static let convertible: [PixelFormat] = [.yu12, .nv12]

    /// The choice for `request` (`nil`: the defaults) from a source giving `source` frames at
    /// `sourceRate` (`nil` when not known yet). The size defaults to the source's; the source's
    /// frames are cropped to the size's aspect ratio and scaled (``OutputFormat``). A pixel format
    /// other than I420 and NV12 is published as the source gives it, at its own size only.
    /// - Throws: ``/MediaDevicesCore/MediaDevicesError/Code/unsupportedFormat`` for a pixel format
    ///   the source does not give and the pipeline does not make;
    ///   ``/MediaDevicesCore/MediaDevicesError/Code/invalidValue`` for a size below 16x16 or odd
    ///   in a 4:2:0 format.
    static func choose(_ request: FormatRequest?, source: VideoFormat?, sourceRate: FrameRate?,
                       device: String) throws(MediaDevicesError) -> LoopbackFormat {
        let pixelFormat = request?.pixelFormat ?? defaultPixelFormat
        let size = request?.size ?? source?.size ?? defaultSize
        let frameRate = request?.frameRate ?? sourceRate ?? defaultFrameRate
        guard size.width >= 16, size.height >= 16,
              !convertible.contains(pixelFormat) || (size.width % 2 == 0 && size.height % 2 == 0) else {
            throw MediaDevicesError(.invalidValue, device: device, operation: "VirtualCamera.start",
                                    detail: "A virtual camera's size must be at least 16x16, and even in \(pixelFormat.fourCC) (4:2:0); \(size) is not",
                                    remedy: "Ask for a size such as 640x480 or 1280x720, which every browser accepts")
        }
        if convertible.contains(pixelFormat) {
            return LoopbackFormat(pixelFormat: pixelFormat, size: size, frameRate: frameRate,
                                  conversion: OutputFormat(pixelFormat, size: size))
        }
        if let source, source.pixelFormat == pixelFormat, source.size == size {
            return LoopbackFormat(pixelFormat: pixelFormat, size: size, frameRate: frameRate, conversion: nil)
        }
        let given = source.map { "\($0.pixelFormat.fourCC) \($0.size)" } ?? "nothing yet"
        throw MediaDevicesError(.unsupportedFormat, device: device, operation: "VirtualCamera.start",
                                detail: "A virtual camera publishes I420 or NV12 at any size (the pixel pipeline converts to them), or the source's own format at its own size; \(pixelFormat.fourCC) \(size) is neither (the source gives \(given))",
                                remedy: "Ask for .yu12 (I420) or .nv12, or for the source's own format and size")
    }
}
