import MediaDevicesCore

/// Writes frames as PNG files through ``PNGEncoder`` (libpng, 8-bit RGB).
public enum PNGWriter {
    /// Writes `frame` to `path` as an 8-bit RGB PNG, whole or not at all (`AtomicFile`: mode
    /// 0644 less the umask; a missing or read-only folder is a clear `MediaDevicesError`).
    public static func write(_ frame: VideoFrame, to path: String) throws(MediaDevicesError) {
        try AtomicFile.write(try PNGEncoder().encode(frame), to: path, operation: "write PNG")
    }
}
