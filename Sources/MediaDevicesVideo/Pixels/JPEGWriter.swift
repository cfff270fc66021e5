import MediaDevicesCore

/// Writes frames as JPEG files through ``JPEGEncoder`` (libjpeg-turbo, 4:2:0 JFIF).
public enum JPEGWriter {
    /// Writes `frame` to `path` as a JPEG of `quality` (1–100), whole or not at all (`AtomicFile`:
    /// mode 0644 less the umask; a missing or read-only folder is a clear `MediaDevicesError`).
    public static func write(_ frame: VideoFrame, to path: String, quality: Int = 90) throws(MediaDevicesError) {
        let encoder = try JPEGEncoder(quality: quality)
        // An untyped closure: a typed one converted to `encode`'s untyped body crashes Swift
        // 6.3.1's IRGen (the reabstraction thunk). Its MediaDevicesError comes out unchanged.
        try encoder.encode(frame) { jpeg in try AtomicFile.write(jpeg, to: path, operation: "write JPEG") }
    }
}
