import ArgumentParser
import Dispatch
import MediaDevices

/// The automatic choice of a camera's backend, as `formats`, `controls`, `capture` and
/// `snapshot` make it without `--backend` (also in the DocC article CamerasAndFormats, "Cameras through PipeWire"):
/// 1. a name the PipeWire listing gives (`pipewire:SERIAL`, `pipewire:NODE_NAME`) is read
///    through PipeWire;
/// 2. any other camera is read directly through V4L2, as GStreamer's `v4l2src` and browsers
///    do by default (exclusive, no extra process in the way);
/// 3. unless V4L2 cannot have it: a camera V4L2 does not offer to this process (a libcamera
///    camera, or a node this user may not open) is looked up among PipeWire's cameras, and
///    `capture`/`snapshot` of a camera whose V4L2 node is busy (another process, often
///    PipeWire itself, streams it) read it through its PipeWire node, sharing it.
/// The Camera portal is used only when asked for (`--backend portal`: access is asked for
/// first, then the cameras its PipeWire remote sees are the ones named).
package enum CameraBackendRule {
    package static let help = "Cameras: v4l2, pipewire or portal. Default: V4L2 directly; PipeWire for a `pipewire:` name, for a camera only PipeWire offers or this user may not open directly, and (capture, snapshot) when the V4L2 node is busy and the camera is on PipeWire."

    /// The camera `text` names among the cameras `backend` offers (a device path, an index from
    /// `mediadevices list` with the same `--backend`, a uniqueID, or for PipeWire
    /// `pipewire:SERIAL` or `pipewire:NODE_NAME`); automatic when `backend` is nil (see the
    /// rule above). Throws `.notFound` naming what exists.
    package static func camera(_ text: String, backend: CaptureBackend?) throws -> CaptureDevice {
        switch backend {
        case .pipewire?, .portal?:
            return try shared(text, backend: backend!)
        case .v4l2?:
            return try direct(text)
        case nil:
            if text.hasPrefix("pipewire:") { return try shared(text, backend: .pipewire) }
            do {
                return try direct(text)
            } catch let error as MediaDevicesError where error.code == .notFound || error.code == .permissionDenied {
                // A camera only PipeWire offers, or one this user may not open directly.
                guard Int(text) == nil, let device = try? shared(text, backend: .pipewire) else { throw error }
                return device
            }
        }
    }

    /// The same camera through its PipeWire node, for a V4L2 camera that is busy; nil when
    /// PipeWire does not offer it (or no PipeWire session answers).
    package static func pipeWireRoute(of camera: CaptureDevice) -> CaptureDevice? {
        CaptureDevice.scan(backends: [.pipewire], pipeWireTimeout: .seconds(2)).devices.first { $0.uniqueID == camera.uniqueID }
    }

    /// Among the V4L2 devices: by index, uniqueID or path; a path not listed is opened.
    private static func direct(_ text: String) throws -> CaptureDevice {
        let devices = CaptureDevice.scan().devices
        if let index = Int(text) {
            guard devices.indices.contains(index) else {
                throw MediaDevicesError(.notFound, device: text, operation: "find device",
                                        detail: "There are \(devices.count) capture device(s); run `mediadevices list`")
            }
            return devices[index]
        }
        if let device = devices.first(where: { $0.uniqueID == text || $0.path == text }) { return device }
        if text.hasPrefix("/") { return try CaptureDevice(path: text) }
        throw MediaDevicesError(.notFound, device: text, operation: "find device",
                                detail: "No device has that path, index or uniqueID; run `mediadevices list`, or use `testpattern`")
    }

    /// Among the cameras `backend` (PipeWire or the portal) offers, each with only its routes
    /// of that backend. The portal is asked for access first (the user is asked once; the
    /// permission store keeps the answer).
    private static func shared(_ text: String, backend: CaptureBackend) throws -> CaptureDevice {
        if backend == .portal { try requestPortalAccess() }
        let discovery = CaptureDevice.scan(backends: [backend])
        if discovery.devices.isEmpty, let problem = discovery.problems.first { throw problem }
        let devices = discovery.devices
        if let index = Int(text) {
            guard devices.indices.contains(index) else {
                throw MediaDevicesError(.notFound, device: text, operation: "find device",
                                        detail: "PipeWire offers \(devices.count) camera(s); run `mediadevices list --backend \(backend.rawValue)`")
            }
            return devices[index]
        }
        let found = devices.first { device in
            device.uniqueID == text || device.path == text
                || device.pipeWireNodes.contains { "pipewire:\($0.serial)" == text || "pipewire:\($0.name)" == text || $0.name == text }
        }
        guard let found else {
            throw MediaDevicesError(.notFound, device: text, operation: "find device",
                                    detail: "PipeWire offers no camera with that path, index, uniqueID or node (\(devices.count) camera(s)); run `mediadevices list --backend \(backend.rawValue)`")
        }
        return found
    }
}

extension CameraBackendRule {
    /// `CameraPortal.requestAccess()`, waited for on this (the command's) thread.
    package static func requestPortalAccess() throws {
        // @unchecked Sendable: `error` is written by the task before `done.signal()` and read after `done.wait()`.
        final class Outcome: @unchecked Sendable { var error: (any Error)? }
        let outcome = Outcome(), done = DispatchSemaphore(value: 0)
        Task.detached {
            do { try await CameraPortal().requestAccess() } catch { outcome.error = error }
            done.signal()
        }
        done.wait()
        if let error = outcome.error { throw error }
    }
}

/// `--backend v4l2|pipewire|portal` on `formats`, `controls` and `snapshot`.
package struct CameraBackendOption: ParsableArguments {
    /// Parsed from the arguments by ArgumentParser.
    package init() {}

    @Option(help: ArgumentHelp(CameraBackendRule.help))
    package var backend: CaptureBackend?
}

/// A `--backend` name on `capture`, which takes screens' backends and cameras': `portal` is the
/// screen-cast portal for a screen and the Camera portal for a camera.
package enum DeviceBackendName: String, ExpressibleByArgument, CaseIterable {
    case v4l2, pipewire, portal, kms, x11

    /// The camera backend it names, if any.
    package var camera: CaptureBackend? { CaptureBackend(rawValue: rawValue) }
    /// The screen backend it names, if any.
    package var screen: ScreenBackend? { ScreenBackend(rawValue: rawValue) }
}
