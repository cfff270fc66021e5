import MediaDevicesCore
import CV4LConvert
import CYUV

/// Demosaics raw Bayer frames (8-, 10-, 12- and 16-bit; BGGR, GBRG, GRBG, RGGB) into RGB24 (bytes R,
/// G, B) with libv4lconvert, through a converter with no device behind it (`CV4LConvert`): no
/// software controls, so no white balance, gamma or flipping, only the format conversion.
final class BayerDecoder {
    private let converter: OpaquePointer

    /// A decoder; `device` names the source in errors. Throws `.io` when libv4lconvert cannot
    /// make a converter (out of memory).
    init(device: String?) throws(MediaDevicesError) {
        guard let converter = cv4lconvert_create_detached() else {
            throw MediaDevicesError(.io, device: device, operation: "Bayer decode",
                                    detail: "libv4lconvert could not create a converter")
        }
        self.converter = converter
    }

    deinit { v4lconvert_destroy(converter) }

    /// The 8-bit format of the same order, and the significant bits, of each wider Bayer format.
    private static let reduced: [FourCC: (eightBit: FourCC, bits: Int)] = [
        "BG10": ("BA81", 10), "GB10": ("GBRG", 10), "BA10": ("GRBG", 10), "RG10": ("RGGB", 10),
        "BG12": ("BA81", 12), "GB12": ("GBRG", 12), "BA12": ("GRBG", 12), "RG12": ("RGGB", 12),
        "BYR2": ("BA81", 16), "GB16": ("GBRG", 16), "GR16": ("GRBG", 16), "RG16": ("RGGB", 16),
    ]

    /// Writes `frame` as RGB24 into `rgb`, already prepared at the frame's size (tight rows).
    /// 10-, 12- and 16-bit samples are first reduced to 8 bits into `samples` with libyuv's
    /// `Convert16To8Plane`: libv4lconvert would reduce them in place, writing into the capture
    /// buffer other consumers read, and ignoring its row padding. Throws `.corruptFrame` when
    /// libv4lconvert refuses the frame.
    func decode(_ frame: VideoFrame, into rgb: ImageBuffer, samples: ImageBuffer, device: String?) throws(MediaDevicesError) {
        let plane = frame.plane(0)
        var base = plane.bytes.baseAddress?.assumingMemoryBound(to: UInt8.self)
        var (stride, count) = (Int32(plane.bytesPerRow), Int32(plane.bytes.count))
        var fourCC = frame.format.pixelFormat.fourCC
        if let reduction = Self.reduced[fourCC], let wide = plane.bytes.baseAddress {
            let size = Size(width: frame.width, height: frame.height)
            samples.prepare(PixelFormat.sbggr8, size, colorimetry: frame.format.colorimetry)
            Convert16To8Plane(wide.assumingMemoryBound(to: UInt16.self), stride / 2, samples.plane(0), samples.stride(0),
                              1 << (24 - reduction.bits), Int32(frame.width), Int32(frame.height))
            base = UnsafePointer(samples.plane(0))
            (stride, count) = (samples.stride(0), samples.stride(0) * Int32(frame.height))
            fourCC = reduction.eightBit
        }
        let written = cv4lconvert_to_rgb24(converter, fourCC.rawValue, UInt32(frame.width), UInt32(frame.height), UInt32(stride),
                                           base, count, rgb.plane(0), rgb.stride(0) * Int32(frame.height))
        guard written >= 0 else {
            let reason = v4lconvert_get_error_message(converter).map { String(cString: $0) } ?? "no reason given"
            throw MediaDevicesError(.corruptFrame, device: device, operation: "Bayer decode",
                                    detail: "libv4lconvert refused the \(frame.format.pixelFormat) frame (\(reason)); the frame is dropped and counted")
        }
    }
}
