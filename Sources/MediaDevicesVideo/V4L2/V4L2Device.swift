import MediaDevicesCore
import CV4L2
import Glibc

/// Typed V4L2 ioctls on one open video node. Internal: the public types are ``CaptureDevice``
/// (what a node is and offers) and ``CameraSource`` (capturing from it).
final class V4L2Device: Sendable {
    let file: DeviceFile
    /// The node's capabilities (`VIDIOC_QUERYCAP`).
    let capability: v4l2_capability

    /// Opens `path` and queries its capabilities.
    init(path: String) throws(MediaDevicesError) {
        file = try DeviceFile(path: path)
        var cap = v4l2_capability()
        try file.ioctl(cv4l2_VIDIOC_QUERYCAP, &cap, "VIDIOC_QUERYCAP")
        capability = cap
    }

    var path: String { file.path }

    /// The capabilities of this node (`device_caps` where the driver reports them).
    var deviceCaps: UInt32 {
        capability.capabilities & UInt32(V4L2_CAP_DEVICE_CAPS) != 0 ? capability.device_caps : capability.capabilities
    }

    /// Whether the node captures video through the multi-planar API.
    var isMultiplanar: Bool {
        deviceCaps & UInt32(V4L2_CAP_VIDEO_CAPTURE_MPLANE) != 0 && deviceCaps & UInt32(V4L2_CAP_VIDEO_CAPTURE) == 0
    }

    /// Whether the node captures video at all.
    var canCapture: Bool { deviceCaps & UInt32(V4L2_CAP_VIDEO_CAPTURE | V4L2_CAP_VIDEO_CAPTURE_MPLANE) != 0 }

    /// The buffer type for capture on this node.
    var bufferType: UInt32 {
        isMultiplanar ? cv4l2_BUF_TYPE_VIDEO_CAPTURE_MPLANE : cv4l2_BUF_TYPE_VIDEO_CAPTURE
    }

    // MARK: enumeration

    /// Every format with its sizes and intervals, exactly as the driver reports them.
    func enumerateFormats() throws(MediaDevicesError) -> [CaptureFormat] {
        var formats: [CaptureFormat] = []
        var index: UInt32 = 0
        while true {
            var desc = v4l2_fmtdesc()
            desc.index = index
            desc.type = bufferType
            let error = file.ioctlErrno(cv4l2_VIDIOC_ENUM_FMT, &desc)
            if error == EINVAL { break }
            if error != 0 { throw MediaDevicesError.fromErrno(error, device: path, operation: "VIDIOC_ENUM_FMT") }
            let fourCC = FourCC(rawValue: desc.pixelformat)
            formats.append(CaptureFormat(
                pixelFormat: PixelFormat(v4l2: fourCC),
                description: cString(desc.description),
                isCompressed: desc.flags & UInt32(V4L2_FMT_FLAG_COMPRESSED) != 0,
                isEmulated: desc.flags & UInt32(V4L2_FMT_FLAG_EMULATED) != 0,
                flags: desc.flags,
                frameSizes: try enumerateSizes(fourCC)))
            index += 1
        }
        return formats
    }

    private func enumerateSizes(_ fourCC: FourCC) throws(MediaDevicesError) -> [FrameSizeOption] {
        var options: [FrameSizeOption] = []
        var index: UInt32 = 0
        while true {
            var entry = v4l2_frmsizeenum()
            entry.index = index
            entry.pixel_format = fourCC.rawValue
            let error = file.ioctlErrno(cv4l2_VIDIOC_ENUM_FRAMESIZES, &entry)
            if error == EINVAL || error == ENOTTY { break }
            if error != 0 { throw MediaDevicesError.fromErrno(error, device: path, operation: "VIDIOC_ENUM_FRAMESIZES") }
            let sizes: FrameSizeRange
            let probe: Size
            switch entry.type {
            case V4L2_FRMSIZE_TYPE_DISCRETE.rawValue:
                let size = Size(width: Int(entry.discrete.width), height: Int(entry.discrete.height))
                sizes = .discrete(size)
                probe = size
            default:
                let s = entry.stepwise
                let min = Size(width: Int(s.min_width), height: Int(s.min_height))
                let max = Size(width: Int(s.max_width), height: Int(s.max_height))
                sizes = entry.type == V4L2_FRMSIZE_TYPE_CONTINUOUS.rawValue
                    ? .continuous(min: min, max: max)
                    : .stepwise(min: min, max: max, step: Size(width: Int(s.step_width), height: Int(s.step_height)))
                probe = max
            }
            options.append(FrameSizeOption(sizes: sizes, frameRateRanges: try enumerateIntervals(fourCC, probe)))
            if entry.type != V4L2_FRMSIZE_TYPE_DISCRETE.rawValue { break }
            index += 1
        }
        return options
    }

    private func enumerateIntervals(_ fourCC: FourCC, _ size: Size) throws(MediaDevicesError) -> [FrameRateRange] {
        var ranges: [FrameRateRange] = []
        var index: UInt32 = 0
        while true {
            var entry = v4l2_frmivalenum()
            entry.index = index
            entry.pixel_format = fourCC.rawValue
            entry.width = UInt32(size.width)
            entry.height = UInt32(size.height)
            let error = file.ioctlErrno(cv4l2_VIDIOC_ENUM_FRAMEINTERVALS, &entry)
            if error == EINVAL || error == ENOTTY { break }
            if error != 0 { throw MediaDevicesError.fromErrno(error, device: path, operation: "VIDIOC_ENUM_FRAMEINTERVALS") }
            switch entry.type {
            case V4L2_FRMIVAL_TYPE_DISCRETE.rawValue:
                ranges.append(FrameRateRange(discrete: FrameRate(interval: fraction(entry.discrete))))
            case V4L2_FRMIVAL_TYPE_CONTINUOUS.rawValue:
                ranges.append(FrameRateRange(minInterval: fraction(entry.stepwise.min), maxInterval: fraction(entry.stepwise.max), step: nil))
                return ranges
            default:
                ranges.append(FrameRateRange(minInterval: fraction(entry.stepwise.min), maxInterval: fraction(entry.stepwise.max),
                                             step: fraction(entry.stepwise.step)))
                return ranges
            }
            index += 1
        }
        return ranges
    }

    // MARK: format and rate

    /// The current format (`VIDIOC_G_FMT`).
    func currentFormat() throws(MediaDevicesError) -> VideoFormat {
        var format = v4l2_format()
        format.type = bufferType
        try file.ioctl(cv4l2_VIDIOC_G_FMT, &format, "VIDIOC_G_FMT")
        return videoFormat(format)
    }

    /// Sets pixel format and size (`VIDIOC_S_FMT`) and returns what the driver granted.
    func setFormat(_ pixelFormat: PixelFormat, _ size: Size) throws(MediaDevicesError) -> VideoFormat {
        var format = v4l2_format()
        format.type = bufferType
        try file.ioctl(cv4l2_VIDIOC_G_FMT, &format, "VIDIOC_G_FMT")
        if isMultiplanar {
            format.fmt.pix_mp.width = UInt32(size.width)
            format.fmt.pix_mp.height = UInt32(size.height)
            format.fmt.pix_mp.pixelformat = pixelFormat.v4l2Code
            format.fmt.pix_mp.field = V4L2_FIELD_NONE.rawValue
            format.fmt.pix_mp.num_planes = 0
            withUnsafeMutableBytes(of: &format.fmt.pix_mp.plane_fmt) { _ = $0.initializeMemory(as: UInt8.self, repeating: 0) }
        } else {
            format.fmt.pix.width = UInt32(size.width)
            format.fmt.pix.height = UInt32(size.height)
            format.fmt.pix.pixelformat = pixelFormat.v4l2Code
            format.fmt.pix.field = V4L2_FIELD_NONE.rawValue
            format.fmt.pix.bytesperline = 0
            format.fmt.pix.sizeimage = 0
        }
        // HSV: ask for hues in 180 steps, the kernel's first encoding, and say that we ask
        // (`V4L2_PIX_FMT_FLAG_SET_CSC`). Without it vivid keeps the encoding field of the previous
        // format (a YCbCr encoding after an RGB format: the field is shared), reports it, and
        // draws hues in 256 steps.
        if pixelFormat == .hsv24 || pixelFormat == .hsv32 {
            if isMultiplanar {
                format.fmt.pix_mp.ycbcr_enc = UInt8(V4L2_HSV_ENC_180.rawValue)
                format.fmt.pix_mp.flags |= UInt8(V4L2_PIX_FMT_FLAG_SET_CSC)
            } else {
                format.fmt.pix.ycbcr_enc = V4L2_HSV_ENC_180.rawValue
                format.fmt.pix.flags |= UInt32(V4L2_PIX_FMT_FLAG_SET_CSC)
            }
        }
        try file.ioctl(cv4l2_VIDIOC_S_FMT, &format, "VIDIOC_S_FMT")
        return videoFormat(format)
    }

    /// The frame rate in force (`VIDIOC_G_PARM`), `nil` if the driver cannot report it.
    func currentFrameRate() -> FrameRate? {
        var parm = v4l2_streamparm()
        parm.type = bufferType
        guard file.ioctlErrno(cv4l2_VIDIOC_G_PARM, &parm) == 0 else { return nil }
        let interval = parm.parm.capture.timeperframe
        return interval.numerator > 0 && interval.denominator > 0 ? FrameRate(interval: fraction(interval)) : nil
    }

    /// Asks for `rate` (`VIDIOC_S_PARM`); returns the rate granted, `nil` if the driver cannot
    /// set rates (no `V4L2_CAP_TIMEPERFRAME`).
    func setFrameRate(_ rate: FrameRate) throws(MediaDevicesError) -> FrameRate? {
        var parm = v4l2_streamparm()
        parm.type = bufferType
        guard file.ioctlErrno(cv4l2_VIDIOC_G_PARM, &parm) == 0,
              parm.parm.capture.capability & UInt32(V4L2_CAP_TIMEPERFRAME) != 0 else { return nil }
        parm.parm.capture.timeperframe = V4L2Device.fract(rate.frameInterval)
        try file.ioctl(cv4l2_VIDIOC_S_PARM, &parm, "VIDIOC_S_PARM")
        let granted = parm.parm.capture.timeperframe
        return granted.numerator > 0 && granted.denominator > 0 ? FrameRate(interval: fraction(granted)) : nil
    }

    /// `value` as a `v4l2_fract`, approximated when its terms do not fit in 32 bits.
    static func fract(_ value: Fraction) -> v4l2_fract {
        var (numerator, denominator) = (value.numerator, value.denominator)
        while numerator > Int(UInt32.max) || denominator > Int(UInt32.max) {
            numerator = (numerator + 1) / 2
            denominator = (denominator + 1) / 2
        }
        return v4l2_fract(numerator: UInt32(max(numerator, 1)), denominator: UInt32(max(denominator, 1)))
    }

    // MARK: controls

    /// The value of control `id` (`VIDIOC_G_CTRL`), `nil` if the driver does not have it.
    func control(_ id: UInt32) -> Int32? {
        var control = v4l2_control(id: id, value: 0)
        return file.ioctlErrno(cv4l2_VIDIOC_G_CTRL, &control) == 0 ? control.value : nil
    }

    /// The orientation from `V4L2_CID_CAMERA_SENSOR_ROTATION`, `nil` if the driver lacks it.
    /// The control is the counter-clockwise rotation that makes the image upright; ours is
    /// clockwise.
    var sensorOrientation: VideoOrientation? {
        control(cv4l2_CID_CAMERA_SENSOR_ROTATION).flatMap { VideoOrientation(sensorRotation: Int($0)) }
    }

    // MARK: conversions

    func videoFormat(_ format: v4l2_format) -> VideoFormat {
        if isMultiplanar {
            let pix = format.fmt.pix_mp
            let pixelFormat = PixelFormat(v4l2: FourCC(rawValue: pix.pixelformat))
            let count = Int(pix.num_planes)
            let planes = withUnsafeBytes(of: pix.plane_fmt) { Array($0.bindMemory(to: v4l2_plane_pix_format.self).prefix(count)) }
            var strides = planes.map { Int($0.bytesperline) }
            // One memory plane holding several image planes (NV12 through the mplane API).
            if count == 1, let layout = pixelFormat.layout, layout.planes.count > 1, let first = strides.first {
                strides = layout.planes.map { $0.bytesPerRow(luminanceBytesPerRow: first, luminance: layout.planes[0]) }
            }
            let colorimetry = Colorimetry(v4l2Colorspace: pix.colorspace, encoding: UInt32(pix.ycbcr_enc),
                                          quantization: UInt32(pix.quantization), isYUV: pixelFormat.isYUV)
            return VideoFormat(pixelFormat: pixelFormat, width: Int(pix.width), height: Int(pix.height),
                               bytesPerRow: strides, bufferSizes: planes.map { Int($0.sizeimage) },
                               colorimetry: colorimetry)
        }
        let pix = format.fmt.pix
        let pixelFormat = PixelFormat(v4l2: FourCC(rawValue: pix.pixelformat))
        let first = Int(pix.bytesperline)
        let strides = pixelFormat.layout.map { layout in
            layout.planes.map { $0.bytesPerRow(luminanceBytesPerRow: first, luminance: layout.planes[0]) }
        } ?? [first]
        let colorimetry = Colorimetry(v4l2Colorspace: pix.colorspace, encoding: pix.ycbcr_enc,
                                      quantization: pix.quantization, isYUV: pixelFormat.isYUV)
        return VideoFormat(pixelFormat: pixelFormat, width: Int(pix.width), height: Int(pix.height),
                           bytesPerRow: strides, bufferSizes: [Int(pix.sizeimage)], colorimetry: colorimetry)
    }
}

/// A `v4l2_fract` as an exact fraction.
func fraction(_ value: v4l2_fract) -> Fraction { Fraction(Int(value.numerator), Int(value.denominator)) }

/// A fixed-size C character array (a tuple) as a Swift string, up to the first NUL.
func cString<T>(_ tuple: T) -> String {
    withUnsafeBytes(of: tuple) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
}
