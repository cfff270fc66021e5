import MediaDevicesCore
import CTurboJPEG

/// Decodes JPEG and MJPEG frames with libjpeg-turbo (TurboJPEG) into planar YUV at the JPEG's
/// own subsampling. A truncated or corrupt image is an error (`.corruptFrame`) with libjpeg's
/// reason, never a half-decoded picture: libjpeg's warnings stop the decode.
///
/// After a failed decode, TurboJPEG 2.1's handle misreads the next header (it reports an empty
/// image for a good JPEG), so the decoder replaces its handle after every failure.
final class JPEGDecoder {
    private var handle: tjhandle
    /// The plane pointers and strides TurboJPEG takes, allocated once.
    private let planes = UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>.allocate(capacity: 3)
    private let strides = UnsafeMutablePointer<Int32>.allocate(capacity: 3)

    /// The facts in a JPEG's header.
    struct Header {
        var width: Int
        var height: Int
        /// The planar layout the image decodes to (`.yu12`, `.planar422`, `.planar444`, `.grey`).
        var layout: PixelFormat
    }

    init() throws(MediaDevicesError) {
        guard let handle = tjInitDecompress() else {
            throw MediaDevicesError(.io, device: nil, operation: "tjInitDecompress",
                                    detail: "libjpeg-turbo could not create a decompressor (out of memory?)")
        }
        self.handle = handle
    }

    deinit {
        tjDestroy(handle)
        planes.deallocate()
        strides.deallocate()
    }

    /// Reads the header of the JPEG in `data`.
    func header(_ data: UnsafeRawBufferPointer, device: String?) throws(MediaDevicesError) -> Header {
        guard data.count >= 4, data[0] == 0xFF, data[1] == 0xD8 else {
            throw corrupt(device, "not a JPEG image: no start-of-image marker (\(data.count) bytes)")
        }
        var width: Int32 = 0, height: Int32 = 0, subsampling: Int32 = 0, colorspace: Int32 = 0
        guard tjDecompressHeader3(handle, data.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt(data.count),
                                  &width, &height, &subsampling, &colorspace) == 0 else {
            throw corrupt(device, "unreadable JPEG header: \(reason())")
        }
        guard width > 0, height > 0 else {
            throw corrupt(device, "JPEG header gives an empty image (\(width)x\(height)); subsampling \(subsampling)")
        }
        let layout: PixelFormat
        switch subsampling {
        case Int32(TJSAMP_420.rawValue): layout = .yu12
        case Int32(TJSAMP_422.rawValue): layout = .planar422
        case Int32(TJSAMP_444.rawValue): layout = .planar444
        case Int32(TJSAMP_GRAY.rawValue): layout = .grey
        default:
            throw MediaDevicesError(.unsupportedFormat, device: device, operation: "JPEG decode",
                                    detail: "JPEG chroma subsampling \(subsampling) (4:4:0 or 4:1:1) is not supported; ask the camera for a raw format")
        }
        return Header(width: Int(width), height: Int(height), layout: layout)
    }

    /// Decodes `data` into `destination`, prepared by the caller for `header` at `scale` (see
    /// `JPEGScale.scaled`), with the IDCT `decoding` names. A reduced scale is done in the DCT.
    func decode(_ data: UnsafeRawBufferPointer, header: Header, scale: JPEGScale = .full, into destination: ImageBuffer,
                decoding: JPEGDecoding, device: String?) throws(MediaDevicesError) {
        let size = scale.scaled(Size(width: header.width, height: header.height))
        let count = header.layout == .grey ? 1 : 3
        for index in 0..<3 {
            planes[index] = index < count ? destination.plane(index) : nil
            strides[index] = index < count ? destination.stride(index) : 0
        }
        // At 1/2, libjpeg-turbo decodes 4:2:0 chroma with the full 8x8 IDCT, and its fast one
        // corrupts that chroma in TurboJPEG's YUV decode (libjpeg-turbo issue 912, fixed after
        // 2.1.5): the accurate IDCT there (the luma's 4x4 IDCT is the accurate one at any setting).
        let fastChromaBroken = header.layout == .yu12 && 2 * scale.numerator == scale.denominator
        let flags = TJFLAG_STOPONWARNING | (decoding == .fast && !fastChromaBroken ? TJFLAG_FASTDCT : 0)
        guard tjDecompressToYUVPlanes(handle, data.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt(data.count),
                                      planes, Int32(size.width), strides, Int32(size.height), flags) == 0 else {
            throw corrupt(device, "corrupt JPEG data: \(reason())")
        }
    }

    private func reason() -> String {
        tjGetErrorStr2(handle).map { String(cString: $0) } ?? "unknown libjpeg error"
    }

    /// The error for a frame that cannot be used; the handle is replaced (see the type's notes).
    private func corrupt(_ device: String?, _ detail: String) -> MediaDevicesError {
        if let fresh = tjInitDecompress() {
            tjDestroy(handle)
            handle = fresh
        }
        return MediaDevicesError(.corruptFrame, device: device, operation: "JPEG decode",
                                 detail: detail + "; the frame is dropped and counted")
    }
}
