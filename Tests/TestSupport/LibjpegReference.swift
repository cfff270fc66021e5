import CTurboJPEG
import Foundation

/// libjpeg-turbo's own decode of a JPEG, the reference the pipeline's MJPEG decoding is judged
/// against.
public enum LibjpegReference {
    /// A JPEG decoded into planes at its own subsampling (tight rows).
    public struct Planes {
        public var width: Int, height: Int
        /// Chroma plane size: (width + 1) / 2 for 4:2:x, height halved for 4:2:0 only.
        public var chromaWidth: Int, chromaHeight: Int
        public var y: [UInt8], u: [UInt8], v: [UInt8]
    }

    /// `tjDecompressToYUVPlanes` of a 4:2:0 or 4:2:2 JPEG, with libjpeg's fast IDCT when
    /// `fastDCT` (`TJFLAG_FASTDCT`, the pipeline's default) or its accurate one; nil when
    /// libjpeg-turbo refuses it.
    public static func planes(_ jpeg: [UInt8], fastDCT: Bool) -> Planes? {
        guard let handle = tjInitDecompress() else { return nil }
        defer { tjDestroy(handle) }
        var width: Int32 = 0, height: Int32 = 0, subsampling: Int32 = 0, colorspace: Int32 = 0
        guard tjDecompressHeader3(handle, jpeg, UInt(jpeg.count), &width, &height, &subsampling, &colorspace) == 0,
              subsampling == Int32(TJSAMP_420.rawValue) || subsampling == Int32(TJSAMP_422.rawValue) else { return nil }
        let w = Int(width), h = Int(height), cw = (w + 1) / 2
        let ch = subsampling == Int32(TJSAMP_420.rawValue) ? (h + 1) / 2 : h
        var result = Planes(width: w, height: h, chromaWidth: cw, chromaHeight: ch,
                            y: [UInt8](repeating: 0, count: w * h), u: [UInt8](repeating: 0, count: cw * ch),
                            v: [UInt8](repeating: 0, count: cw * ch))
        var strides: [Int32] = [Int32(w), Int32(cw), Int32(cw)]
        let status = result.y.withUnsafeMutableBufferPointer { yp in
            result.u.withUnsafeMutableBufferPointer { up in
                result.v.withUnsafeMutableBufferPointer { vp in
                    var planes: [UnsafeMutablePointer<UInt8>?] = [yp.baseAddress, up.baseAddress, vp.baseAddress]
                    return tjDecompressToYUVPlanes(handle, jpeg, UInt(jpeg.count), &planes, width, &strides, height,
                                                   fastDCT ? TJFLAG_FASTDCT : 0)
                }
            }
        }
        return status == 0 ? result : nil
    }

    /// `tjDecompress2` of a JPEG into B, G, R, A bytes (libyuv's ARGB order), with libjpeg's
    /// nearest-neighbour chroma upsampling when `fastUpsample` and its fast IDCT when `fastDCT`;
    /// nil on failure.
    public static func bgra(_ jpeg: [UInt8], fastUpsample: Bool = false, fastDCT: Bool = false) -> (width: Int, height: Int, bytes: [UInt8])? {
        guard let handle = tjInitDecompress() else { return nil }
        defer { tjDestroy(handle) }
        var width: Int32 = 0, height: Int32 = 0, subsampling: Int32 = 0, colorspace: Int32 = 0
        guard tjDecompressHeader3(handle, jpeg, UInt(jpeg.count), &width, &height, &subsampling, &colorspace) == 0 else { return nil }
        var bytes = [UInt8](repeating: 0, count: Int(width) * Int(height) * 4)
        let status = tjDecompress2(handle, jpeg, UInt(jpeg.count), &bytes, width, 0, height, Int32(TJPF_BGRA.rawValue),
                                   (fastUpsample ? TJFLAG_FASTUPSAMPLE : 0) | (fastDCT ? TJFLAG_FASTDCT : 0))
        return status == 0 ? (Int(width), Int(height), bytes) : nil
    }
}
