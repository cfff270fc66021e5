import MediaDevicesCore
import CTurboJPEG

/// Writes frames as JPEG files through libjpeg-turbo (TurboJPEG): any frame the pixel pipeline
/// reads is converted to ARGB (so the colour matrix and range are the pipeline's, as for PNG)
/// and compressed as a baseline 4:2:0 JFIF.
public enum JPEGWriter {
    /// Writes `frame` to `path` as a JPEG of `quality` (1–100), whole or not at all (`AtomicFile`:
    /// mode 0644 less the umask; a missing or read-only folder is a clear `MediaDevicesError`).
    public static func write(_ frame: VideoFrame, to path: String, quality: Int = 90) throws(MediaDevicesError) {
        let converter = try FrameConverter(output: OutputFormat(.argb))
        guard let handle = tjInitCompress() else {
            throw MediaDevicesError(.io, device: nil, operation: "tjInitCompress",
                                    detail: "libjpeg-turbo could not create a compressor (out of memory?)")
        }
        defer { tjDestroy(handle) }
        try converter.convert(frame) { argb in
            let plane = argb.plane(0)
            var jpeg: UnsafeMutablePointer<UInt8>?
            var size: UInt = 0
            defer { tjFree(jpeg) }
            // libyuv's ARGB is bytes B, G, R, A in memory: TurboJPEG's BGRX.
            let status = tjCompress2(handle, plane.bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), Int32(argb.width),
                                     Int32(plane.bytesPerRow), Int32(argb.height), Int32(TJPF_BGRX.rawValue), &jpeg, &size,
                                     Int32(TJSAMP_420.rawValue), Int32(min(max(quality, 1), 100)), 0)
            guard status == 0, let jpeg else {
                throw MediaDevicesError(.io, device: nil, operation: "tjCompress2",
                                        detail: "libjpeg-turbo could not compress the frame: \(String(cString: tjGetErrorStr2(handle)))")
            }
            try AtomicFile.write(UnsafeRawBufferPointer(start: jpeg, count: Int(size)), to: path, operation: "write JPEG")
        }
    }
}
