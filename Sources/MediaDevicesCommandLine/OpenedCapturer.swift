import ArgumentParser
import MediaDevices

/// A capturer made from a DEVICE argument, with a name for messages and its negotiation.
package struct OpenedCapturer {
    package let capturer: VideoSource
    package let name: String

    /// What the negotiation adjusted (none before the source is initialized).
    package var adjustments: [FormatAdjustment] { capturer.negotiation?.adjustments ?? [] }

    /// The camera, when it captures from one (for its controls).
    package var camera: CaptureDevice?

    /// The source's capture executor: a `frames` reader preferring it runs on the capture
    /// thread (one wake-up per frame), whatever the source.
    package var captureExecutor: CaptureExecutor { capturer.captureExecutor }

    /// Whether it captures a screen (framebuffer formats: converted for Y4M files).
    package var isScreen = false

    /// Resolves `device` and makes its capturer for `request` (not yet initialized, except a
    /// V4L2 camera chosen automatically: see below). `backend` names the screen backend for a
    /// screen (automatic when `nil`) or the camera backend for a camera (`CameraBackendRule`
    /// when `nil`); a backend of the other kind is `.invalidValue`. Screens take only the
    /// request's frame rate, plus `screenRegion` and `showsCursor`, a portal screen asked for as
    /// `portal` says. A camera chosen automatically whose V4L2 node is busy when its format is
    /// set is read through its PipeWire node when PipeWire offers it.
    package init(_ device: String, request: FormatRequest, buffers: Int = 4, screenRegion: Rect? = nil, showsCursor: Bool = false,
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
            (capturer, name, self.camera)
                = try Self.cameraCapturer(camera, request: request, buffers: buffers, automatic: backend == nil)
        case .testPattern(let pattern):
            (capturer, name) = (TestPatternSource(pattern: pattern, request: request), "testpattern")
        case .screen(let screen):
            capturer = ScreenSource(screen: screen, frameRate: request.frameRate ?? ScreenSource.defaultFrameRate,
                                    region: screenRegion, showsCursor: showsCursor,
                                    skipsUnchangedFrames: false, portal: portal)  // files are constant-rate
            (name, isScreen) = (screen.uniqueID, true)
        }
    }

    /// The capturer for `camera`: its V4L2 node when it has one, else its PipeWire node. With
    /// `automatic`, the V4L2 source is initialized here, and a busy V4L2 node gives way to the
    /// camera's PipeWire node when PipeWire offers it (else the `.busy` error stands).
    private static func cameraCapturer(_ camera: CaptureDevice, request: FormatRequest, buffers: Int, automatic: Bool) throws
        -> (VideoSource, String, CaptureDevice) {
        var camera = camera
        if camera.backends.contains(.v4l2) {
            let source = CameraSource(device: camera, request: request, bufferCount: buffers)
            let failure: MediaDevicesError?
            do { if automatic { try source.initialize() }; failure = nil } catch { failure = error }
            guard let failure else { return (source, camera.path, camera) }
            source.release()
            guard failure.code == .busy, let shared = CameraBackendRule.pipeWireRoute(of: camera) else { throw failure }
            camera = shared
        }
        let source = try PipeWireCameraSource(device: camera, request: request)
        return (source, "pipewire:\(source.node.serial)", camera)
    }
}

/// `--jpeg-decoding fast|accurate` on `capture` and `snapshot`.
