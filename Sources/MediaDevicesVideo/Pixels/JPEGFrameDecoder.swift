import MediaDevicesCore
/// An MJPEG frame decoded to I420 (grey for a greyscale JPEG) at a DCT scale: what the
/// conversions of one frame crop, scale and rotate from.
struct DecodedJPEG {
    /// The decoded picture, valid until the next decode.
    let view: ImageView
    /// The JPEG's own size.
    let source: Size
    /// The scale it was decoded at (`view` is `scale.scaled(source)`).
    let scale: JPEGScale
}

/// Reads an MJPEG frame's header, refuses sizes the stream cannot have, and decodes the frame
/// to I420 or grey at a DCT scale with libjpeg-turbo, into buffers sized once per format and
/// scale. Serves one thread at a time (a converter's, or a delivery's shared decode).
// @unchecked Sendable: one thread at a time: its converter's, or the delivery's capture thread.
final class JPEGFrameDecoder: @unchecked Sendable {
    private var jpeg: JPEGDecoder?
    /// The decoded picture when the caller gives no buffer of its own.
    let decoded = ImageBuffer()
    /// A 4:2:2 or 4:4:4 JPEG's own planes, before they are subsampled to I420.
    private let native = ImageBuffer()

    /// The frame's JPEG bytes and header. Throws `.corruptFrame` for a frame that is no JPEG, or
    /// whose header claims more than the stream's size (plus one 16-pixel MCU of slack), and
    /// `.unsupportedFormat` for a subsampling the pipeline cannot decode.
    func header(of frame: VideoFrame, device: String?) throws(MediaDevicesError) -> (data: UnsafeRawBufferPointer, header: JPEGDecoder.Header) {
        if jpeg == nil { jpeg = try JPEGDecoder() }
        let whole = frame.plane(0).bytes
        let data = UnsafeRawBufferPointer(rebasing: whole[0..<min(max(frame.bytesUsed, 0), whole.count)])
        let header = try jpeg!.header(data, device: device)
        // A corrupt header can claim up to 65535x65535 from a few hundred bytes: gigabytes of
        // buffers (kept: they grow to the largest frame). Larger than the stream's size (plus one
        // 16-pixel MCU of slack) is a corrupt frame. Found by the fuzzer.
        let stream = frame.format
        if stream.width > 0, stream.height > 0, header.width > stream.width + 16 || header.height > stream.height + 16 {
            throw MediaDevicesError(.corruptFrame, device: device, operation: "JPEG decode",
                                    detail: "the JPEG header says \(header.width)x\(header.height), larger than the stream's \(stream.width)x\(stream.height); the frame is dropped and counted")
        }
        return (data, header)
    }

    /// Decodes `data` (read by `header(of:device:)`) at `scale` into `destination` (the
    /// decoder's own `decoded` when nil): I420, or grey for a greyscale JPEG.
    func decode(_ data: UnsafeRawBufferPointer, header: JPEGDecoder.Header, scale: JPEGScale, decoding: JPEGDecoding,
                into destination: ImageBuffer? = nil, device: String?) throws(MediaDevicesError) -> DecodedJPEG {
        let decoder = jpeg!
        let target = destination ?? decoded
        let source = Size(width: header.width, height: header.height)
        let size = scale.scaled(source)
        if header.layout == .yu12 || header.layout == .grey {
            target.prepare(header.layout, size, colorimetry: .jpeg)
            try decoder.decode(data, header: header, scale: scale, into: target, decoding: decoding, device: device)
        } else {
            native.prepare(header.layout, size, colorimetry: .jpeg)
            try decoder.decode(data, header: header, scale: scale, into: native, decoding: decoding, device: device)
            target.prepare(.yu12, size, colorimetry: .jpeg)
            try FrameConverter.check(GeometrySteps.subsampleToI420(native.view, into: target), "JPEG chroma to 4:2:0",
                                     device: device)
        }
        return DecodedJPEG(view: target.view, source: source, scale: scale)
    }
}
