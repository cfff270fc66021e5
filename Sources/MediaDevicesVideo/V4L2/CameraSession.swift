import MediaDevicesCore
import CV4L2
import Glibc

/// An open capture device with a negotiated format: what `CameraSource.initialize()` makes.
// @unchecked Sendable: its fields are immutable; the device is used by one thread at a time, under the source's control lock.
final class CameraSession: @unchecked Sendable {
    let device: V4L2Device
    let info: CaptureDevice
    private(set) var negotiation: FormatNegotiation
    /// The orientation from `V4L2_CID_CAMERA_SENSOR_ROTATION`, `.up` if the driver lacks it.
    let orientation: VideoOrientation

    /// Opens `info`'s node and negotiates `request`.
    init(info: CaptureDevice, request: FormatRequest) throws(MediaDevicesError) {
        device = try V4L2Device(path: info.path)
        self.info = info
        orientation = device.sensorOrientation ?? .up
        negotiation = try CameraSession.negotiate(request, on: device)
    }

    /// Negotiates a new format on the open device (not while streaming).
    func renegotiate(_ request: FormatRequest) throws(MediaDevicesError) {
        negotiation = try CameraSession.negotiate(request, on: device)
    }

    /// Chooses from the supported formats, then sets format and rate, recording every change
    /// the driver made to what was chosen.
    static func negotiate(_ request: FormatRequest, on device: V4L2Device) throws(MediaDevicesError) -> FormatNegotiation {
        let choice = try FormatSelection.choose(request, from: device.enumerateFormats(), device: device.path)
        var adjustments = choice.adjustments
        let format = try device.setFormat(choice.pixelFormat, choice.size)
        if format.pixelFormat.fourCC != choice.pixelFormat.fourCC {
            adjustments.append(FormatAdjustment(field: .pixelFormat, requested: choice.pixelFormat.name, chosen: format.pixelFormat.name,
                                                reason: "the driver changed it in VIDIOC_S_FMT"))
        }
        if format.size != choice.size {
            adjustments.append(FormatAdjustment(field: .size, requested: choice.size.description, chosen: format.size.description,
                                                reason: "the driver changed it in VIDIOC_S_FMT"))
        }
        let tight = VideoFormat(pixelFormat: format.pixelFormat, width: format.width, height: format.height)
        if !format.pixelFormat.isCompressed, format.bytesPerRow.first != tight.bytesPerRow.first {
            adjustments.append(FormatAdjustment(field: .bytesPerRow, requested: "\(tight.bytesPerRow.first ?? 0)",
                                                chosen: "\(format.bytesPerRow.first ?? 0)",
                                                reason: "the driver pads rows (alignment) in VIDIOC_S_FMT"))
        }
        var rate = device.currentFrameRate()
        if let wanted = choice.frameRate {
            rate = try device.setFrameRate(wanted) ?? rate
            if let rate, rate != wanted {
                adjustments.append(FormatAdjustment(field: .frameRate, requested: wanted.description, chosen: rate.description,
                                                    reason: "the driver changed it in VIDIOC_S_PARM"))
            }
        }
        return FormatNegotiation(request: request, format: format, frameRate: rate, adjustments: adjustments)
    }

}
