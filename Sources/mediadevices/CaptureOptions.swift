import ArgumentParser
import MediaDevices

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
        if let size, Size(parsing: size) == nil { throw ValidationError("--size takes WxH, e.g. 640x480") }
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
        if let outputSize, Size(parsing: outputSize) == nil { throw ValidationError("--output-size takes WxH, e.g. 480x480") }
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

/// A capturer made from a DEVICE argument, with a name for messages and its negotiation.
struct OpenedCapturer {
    let capturer: any VideoCapturer
    let name: String
    let adjustments: () -> [FormatAdjustment]

    /// The camera, when it captures from one (for its controls).
    var camera: CaptureDevice?

    /// The camera source's capture executor: a `frames` reader preferring it runs on the
    /// capture thread (one wake-up per frame).
    var captureExecutor: CaptureExecutor?

    /// Whether it captures a screen (framebuffer formats: converted for Y4M files).
    var isScreen = false

    /// Resolves `device` and makes its capturer for `request` (not yet initialized, except a
    /// V4L2 camera chosen automatically: see below). `backend` names the screen backend for a
    /// screen (automatic when `nil`) or the camera backend for a camera (`CameraBackendRule`
    /// when `nil`); a backend of the other kind is `.invalidValue`. Screens take only the
    /// request's frame rate, plus `screenRegion` and `showsCursor`, a portal screen asked for as
    /// `portal` says. A camera chosen automatically whose V4L2 node is busy when its format is
    /// set is read through its PipeWire node when PipeWire offers it.
    init(_ device: String, request: FormatRequest, buffers: Int = 4, screenRegion: Rect? = nil, showsCursor: Bool = false,
         backend: DeviceBackendName? = nil, portal: PortalOptions = PortalOptions()) throws {
        let selection = try DeviceSelection.resolve(device, screenBackend: backend?.screen, cameraBackend: backend?.camera)
        switch (selection, backend) {
        case (.camera, let backend?) where backend.camera == nil, (.screen, let backend?) where backend.screen == nil:
            throw MediaDevicesError(.invalidValue, device: device, operation: "--backend",
                                    detail: "--backend \(backend.rawValue) is not a backend for \(device): cameras take v4l2, pipewire or portal; screens kms, x11 or portal")
        default: break
        }
        switch selection {
        case .camera(let camera):
            (capturer, adjustments, name, self.camera, captureExecutor)
                = try Self.cameraCapturer(camera, request: request, buffers: buffers, automatic: backend == nil)
        case .testPattern(let pattern):
            let source = TestPatternSource(pattern: pattern, request: request)
            (capturer, adjustments, name) = (source, { source.negotiation?.adjustments ?? [] }, "testpattern")
        case .screen(let screen):
            let source = ScreenSource(screen: screen, frameRate: request.frameRate ?? ScreenSource.defaultFrameRate,
                                      region: screenRegion, showsCursor: showsCursor,
                                      skipsUnchangedFrames: false, portal: portal)  // files are constant-rate
            (capturer, adjustments, name, isScreen) = (source, { [] }, screen.uniqueID, true)
        }
    }

    /// The capturer for `camera`: its V4L2 node when it has one, else its PipeWire node. With
    /// `automatic`, the V4L2 source is initialized here, and a busy V4L2 node gives way to the
    /// camera's PipeWire node when PipeWire offers it (else the `.busy` error stands).
    private static func cameraCapturer(_ camera: CaptureDevice, request: FormatRequest, buffers: Int, automatic: Bool) throws
        -> (any VideoCapturer, () -> [FormatAdjustment], String, CaptureDevice, CaptureExecutor?) {
        var camera = camera
        if camera.backends.contains(.v4l2) {
            let source = CameraSource(device: camera, request: request, bufferCount: buffers)
            let failure: MediaDevicesError?
            do { if automatic { try source.initialize() }; failure = nil } catch { failure = error }
            guard let failure else { return (source, { source.negotiation?.adjustments ?? [] }, camera.path, camera, source.captureExecutor) }
            source.release()
            guard failure.code == .busy, let shared = CameraBackendRule.pipeWireRoute(of: camera) else { throw failure }
            camera = shared
        }
        let source = try PipeWireCameraSource(device: camera, request: request)
        return (source, { source.negotiation?.adjustments ?? [] }, "pipewire:\(source.node.serial)", camera, nil)
    }
}

/// `--jpeg-decoding fast|accurate` on `capture` and `snapshot`.
extension JPEGDecoding: ExpressibleByArgument {}
