import MediaDevicesCore

/// The cheap check every MJPEG frame gets before any consumer sees it: does it begin with a
/// start-of-image marker and hold an end-of-image marker? A UVC camera's frame that lost its
/// beginning or end on the bus (uvcvideo completes a short compressed frame without
/// `V4L2_BUF_FLAG_ERROR`) fails it and is dropped for every consumer, converting or not, and
/// counted in `CaptureStatistics.corruptFrames`: an application that passes the camera's JPEGs
/// on (an MJPEG HTTP stream, a recorder) never sends half a picture. Padding after the
/// end-of-image marker, which some cameras send, is allowed. Damage inside the entropy-coded
/// data is only seen by a decode (`JPEGDecoder`), and so is a frame cut right after an embedded
/// thumbnail (an EXIF APP1 segment holds a whole JPEG with its own end-of-image marker; UVC
/// cameras' MJPEG frames carry none).
enum JPEGFraming {
    /// Why `jpeg` cannot be a whole JPEG image, or nil when it begins with SOI (FF D8) and an
    /// EOI (FF D9) follows somewhere after it. O(1) for a frame that ends with its EOI.
    static func defect(in jpeg: UnsafeRawBufferPointer) -> String? {
        if jpeg.count >= 2, jpeg.count < 4, jpeg[0] == 0xFF, jpeg[1] == 0xD8 {
            return "an MJPEG frame of \(jpeg.count) bytes, too short for a picture: it was cut short on the way; dropped"
        }
        guard jpeg.count >= 4, jpeg[0] == 0xFF, jpeg[1] == 0xD8 else {
            let start = jpeg.prefix(4).map { ($0 < 16 ? "0" : "") + String($0, radix: 16, uppercase: true) }.joined(separator: " ")
            return "an MJPEG frame without a start-of-image marker (\(jpeg.count) bytes, beginning \(start.isEmpty ? "with nothing" : start)): its beginning was lost on the way; dropped"
        }
        // Entropy-coded data never holds FF D9 (an FF there is followed by 00 or a restart
        // marker), so the last FF D9 is the image's end, with only padding after it.
        var index = jpeg.count - 1
        while index >= 3 {
            if jpeg[index] == 0xD9, jpeg[index - 1] == 0xFF { return nil }
            index -= 1
        }
        return "an MJPEG frame without an end-of-image marker (\(jpeg.count) bytes): it was cut short on the way; dropped"
    }
}
