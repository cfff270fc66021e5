#if PipeWire
import MediaDevicesCore
import CPipeWire

/// One format a published PipeWire camera node offers its consumers: a raw pixel format at one
/// size and rate (one `EnumFormat` param), its frames tightly packed (as ``VideoFormat``'s
/// packed initializer lays them out, which is how the pixel pipeline writes them).
package struct PipeWireCameraOffer: Hashable, Sendable, CustomStringConvertible {
    /// The pixel format, size and (packed) layout of the frames.
    package let format: VideoFormat
    /// The rate the node announces (the owner sends at the source's own pace).
    package let frameRate: FrameRate

    /// An offer of `pixelFormat` at `size` and `frameRate`, laid out tightly packed. `nil` when
    /// PipeWire has no SPA video format for `pixelFormat`, or it is not a raw format.
    package init?(_ pixelFormat: PixelFormat, size: Size, frameRate: FrameRate) {
        guard let layout = pixelFormat.layout, !layout.isCompressed, layout.memoryPlaneCount == 1,
              cpw_spa_format_of_fourcc(pixelFormat.v4l2Code) != 0, size.width > 0, size.height > 0 else { return nil }
        format = VideoFormat(pixelFormat: pixelFormat, width: size.width, height: size.height)
        self.frameRate = frameRate
    }

    /// The SPA video format the node names it by (`SPA_VIDEO_FORMAT_YUY2`…).
    package var spaFormat: UInt32 { cpw_spa_format_of_fourcc(format.pixelFormat.v4l2Code) }

    /// What the C shim builds the `EnumFormat` param and the `Buffers` param from.
    var shimFormat: cpw_output_format {
        let rate = frameRate.framesPerSecond
        return cpw_output_format(spa_format: spaFormat, width: UInt32(format.width), height: UInt32(format.height),
                                 rate_num: UInt32(clamping: rate.numerator), rate_denom: UInt32(clamping: rate.denominator),
                                 frame_size: UInt32(clamping: format.imageSize), stride: UInt32(clamping: format.bytesPerRow.first ?? 0))
    }

    /// The offer's `EnumFormat` param as a consumer reads it: built by the shim and parsed back by
    /// the pod parser the camera list uses (so what `pw-cli enum-params` shows), as capture formats.
    package var enumFormatAsRead: [CaptureFormat] {
        var shim = shimFormat
        var entries = [cpw_format_entry](repeating: cpw_format_entry(), count: 4)
        let count = entries.withUnsafeMutableBufferPointer { cpw_output_enum_format_entries(&shim, $0.baseAddress, $0.count) }
        return PipeWireFormats(Array(entries.prefix(Int(max(count, 0))))).formats
    }

    /// The offers a node makes for a source of `sourceFormat` at `size` and `frameRate`: the
    /// source's own raw format at its size first (YUYV from most cameras; left out when it is
    /// compressed or PipeWire has no name for it), then what the pixel pipeline makes from it
    /// (`OutputFormat`: NV12 and I420; not YUYV, which it does not write) at the source's size and
    /// at each of `scaledSizes` smaller than it (by default 1280x720, 640x480, 640x360 and
    /// 320x240: the pipeline scales down). The first is what a consumer that takes anything gets.
    package static func standard(sourceFormat: PixelFormat?, size: Size, frameRate: FrameRate,
                                 scaledSizes: [Size] = [Size(width: 1280, height: 720), Size(width: 640, height: 480),
                                                        Size(width: 640, height: 360), Size(width: 320, height: 240)]) -> [PipeWireCameraOffer] {
        var offers: [PipeWireCameraOffer] = []
        if let sourceFormat, let offer = PipeWireCameraOffer(sourceFormat, size: size, frameRate: frameRate) { offers.append(offer) }
        var sizes = [size]
        for scaled in scaledSizes where scaled.width <= size.width && scaled.height <= size.height && !sizes.contains(scaled) {
            sizes.append(scaled)
        }
        for size in sizes {
            for pixelFormat in [PixelFormat.nv12, .yu12] {
                if let offer = PipeWireCameraOffer(pixelFormat, size: size, frameRate: frameRate), !offers.contains(offer) { offers.append(offer) }
            }
        }
        return offers
    }

    /// `"YUYV 640x480 @ 30 fps"`.
    package var description: String { "\(format) @ \(frameRate)" }
}
#endif
