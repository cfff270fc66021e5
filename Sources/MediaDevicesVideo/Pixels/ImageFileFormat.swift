import MediaDevicesCore
/// The still-image files the library writes, chosen by the file name's extension as FFmpeg
/// does: `.png` (lossless, libpng) or `.jpg`/`.jpeg` (libjpeg-turbo).
package enum ImageFileFormat: String, Sendable, CaseIterable {
    /// PNG through libpng: 8-bit RGB, lossless after the conversion.
    case png
    /// JPEG through libjpeg-turbo: 4:2:0, quality 90.
    case jpeg

    /// The format `path`'s extension names (case-insensitive); throws `.unsupportedFormat`
    /// for any other name, so a tool can refuse it before opening a device.
    package init(path: String) throws(MediaDevicesError) {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        let suffix = name.split(separator: ".", omittingEmptySubsequences: false).dropFirst().last?.lowercased()
        switch suffix {
        case "png": self = .png
        case "jpg", "jpeg": self = .jpeg
        default:
            throw MediaDevicesError(.unsupportedFormat, device: nil, operation: "write image",
                                    detail: "\(path): the file name must end in .png or .jpg (.jpeg); the extension decides the format")
        }
    }

    /// Writes `frame` to `path` in this format.
    package func write(_ frame: VideoFrame, to path: String) throws(MediaDevicesError) {
        switch self {
        case .png: try PNGWriter.write(frame, to: path)
        case .jpeg: try JPEGWriter.write(frame, to: path)
        }
    }

    /// The format's usual name, as messages say it.
    package var displayName: String { self == .png ? "PNG" : "JPEG" }
}
