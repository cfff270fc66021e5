import ArgumentParser
import MediaDevices
import MediaDevicesCommandLine

/// The device-format options shared by `capture` and `snapshot`.
struct FormatOptions: ParsableArguments {
    @Option(help: "Pixel format as a fourcc or name (YUYV, NV12, YU12/I420, MJPG, …). Default: chosen by --prefer.")
    var format: String?

    @Option(help: "Frame size WxH. Default: 640x480 or the nearest offered.")
    var size: String?

    @Option(help: "Frame rate (30, 30000/1001, 29.97): the best rate at or below it is chosen.")
    var fps: String?

    @Option(help: "Without --format: automatic (raw when a raw format gives size and rate, else MJPEG), raw-only, lowest-bandwidth or best-quality.")
    var prefer: String = "automatic"

    func validate() throws {
        if let format, PixelFormat(named: format) == nil { throw ValidationError("unknown pixel format '\(format)'") }
        if let size { try UsageChecks.size(size, option: "--size", example: "640x480") }
        if let fps, FrameRate(parsing: fps) == nil { throw ValidationError("--fps takes a positive number or fraction, e.g. 30 or 30000/1001") }
        if preference == nil { throw ValidationError("--prefer takes automatic, raw-only, lowest-bandwidth or best-quality") }
    }

    private var preference: FormatPreference? {
        FormatPreference.allCases.first { $0.rawValue.lowercased() == prefer.replacingOccurrences(of: "-", with: "").lowercased() }
    }

    /// The request these options make.
    var request: FormatRequest {
        FormatRequest(pixelFormat: format.flatMap(PixelFormat.init(named:)), size: size.flatMap(Size.init(parsing:)),
                      frameRate: fps.flatMap(FrameRate.init(parsing:)), preference: preference ?? .automatic)
    }
}

/// The output-request options shared by `capture` and `snapshot`: what the pixel pipeline turns
/// each frame into.
struct OutputOptions: ParsableArguments {
    @Option(name: .customLong("output-format"), help: "Convert to NV12, I420 or ARGB.")
    var outputFormat: String?

    @Option(name: .customLong("output-size"), help: "Centre-crop to the aspect ratio of WxH, then scale to it (the size after --rotate).")
    var outputSize: String?

    @Option(help: "Rotate clockwise by 0, 90, 180 or 270 degrees.")
    var rotate: Int = 0

    @Flag(help: "Mirror left to right (after rotating).")
    var mirror = false

    @Option(help: "Use only this region of the frame, WxH+X+Y, before anything else.")
    var crop: String?

    @Option(name: .customLong("jpeg-decoding"),
            help: "Decode MJPEG/JPEG with libjpeg's fast IDCT (the default, as GStreamer's jpegdec and WebRTC's libyuv) or its accurate one.")
    var decoding: JPEGDecoding = .fast

    @Flag(name: .customLong("jpeg-whole-decode"),
          help: "Decode each MJPEG/JPEG frame whole, then scale, even when --output-size needs at most half of it (by default libjpeg-turbo decodes it at 1/2, 1/4 or 1/8 size in its IDCT).")
    var wholeDecode = false

    func validate() throws {
        if let outputFormat, OutputFormat.pixelFormat(parsing: outputFormat) == nil {
            throw ValidationError("--output-format takes NV12, I420 or ARGB")
        }
        if let outputSize { try UsageChecks.size(outputSize, option: "--output-size", example: "480x480") }
        if FrameRotation(degrees: rotate) == nil { throw ValidationError("--rotate takes 0, 90, 180 or 270") }
        if let crop, Rect(parsing: crop) == nil { throw ValidationError("--crop takes WxH+X+Y, e.g. 320x240+16+8") }
    }

    /// Whether any option asks for conversion.
    var isRequested: Bool { outputFormat != nil || outputSize != nil || rotate % 360 != 0 || mirror || crop != nil }

    /// The output these options ask for; `fallback` is the pixel format when none is named.
    func output(fallback: PixelFormat) -> OutputFormat {
        OutputFormat(outputFormat.flatMap(OutputFormat.pixelFormat(parsing:)) ?? fallback,
                     size: outputSize.flatMap(Size.init(parsing:)), rotation: FrameRotation(degrees: rotate) ?? .none,
                     mirrored: mirror, crop: crop.flatMap(Rect.init(parsing:)), jpegDecoding: decoding,
                     jpegScaledDecoding: !wholeDecode)
    }
}

/// `--control NAME=VALUE` (repeatable), shared by `capture` and `snapshot`: camera controls set
/// as one request (all or none) before streaming starts.
struct ControlOptions: ParsableArguments {
    @Option(name: .customLong("control"), help: ArgumentHelp("Set a camera control before streaming, NAME=VALUE as `mediadevices controls` names them (repeatable; applied together, all or none).", valueName: "NAME=VALUE"))
    var assignments: [String] = []

    func validate() throws {
        for assignment in assignments where ControlSetting(parsing: assignment) == nil {
            throw ValidationError("--control takes NAME=VALUE, e.g. brightness=10 (got '\(assignment)')")
        }
    }

    /// The settings asked for.
    var settings: [ControlSetting] { assignments.compactMap(ControlSetting.init(parsing:)) }

    /// Sets the controls on the camera `opened` captures from; `.invalidValue` for a device that
    /// has no controls (the test pattern, a screen).
    func apply(to opened: OpenedCapturer) throws {
        guard !assignments.isEmpty else { return }
        guard let camera = opened.camera else {
            throw MediaDevicesError(.invalidValue, device: opened.name, operation: "--control",
                                    detail: "Only cameras have controls; \(opened.name) has none")
        }
        try camera.setControls(settings)
    }
}

extension JPEGDecoding: ExpressibleByArgument {}
