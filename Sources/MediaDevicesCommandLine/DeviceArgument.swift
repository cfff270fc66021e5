import ArgumentParser
import Foundation
import MediaDevices

/// What a DEVICE argument names: a camera (by path, index from `list`, uniqueID, or PipeWire
/// node: see `CameraBackendRule`) or the
/// built-in test pattern (`testpattern`, `testpattern:noise`), or a screen (`screen:N`).
package enum DeviceSelection {
    case camera(CaptureDevice)
    case testPattern(TestPatternSource.Pattern)
    case screen(Screen)

    /// Resolves `text` (screens from `screenBackend`, automatic when `nil`; cameras among those
    /// `cameraBackend` offers, chosen by `CameraBackendRule` when `nil`); throws `.notFound`
    /// naming what exists.
    package static func resolve(_ text: String, screenBackend: ScreenBackend? = nil, cameraBackend: CaptureBackend? = nil) throws -> DeviceSelection {
        if text == "testpattern" || text == "testpattern:bars" { return .testPattern(.colorBars) }
        if text == "testpattern:noise" { return .testPattern(.noise) }
        if text == "screen" || text.hasPrefix("screen:") { return .screen(try resolveScreen(text, backend: screenBackend)) }
        return .camera(try CameraBackendRule.camera(text, backend: cameraBackend))
    }

    /// Resolves `screen` (the first), `screen:N` (index from `screens`) or `screen:NAME`
    /// (connector or monitor name such as `Virtual-1`, or uniqueID such as
    /// `/dev/dri/card0:Virtual-1`) among the screens of `backend` (automatic when `nil`).
    package static func resolveScreen(_ text: String, backend: ScreenBackend? = nil) throws -> Screen {
        let discovery = ScreenSource.scan(backend: backend)
        let (screens, problems) = (discovery.devices, discovery.problems)
        let key = text == "screen" ? "0" : String(text.dropFirst("screen:".count))
        let found = Int(key).flatMap { screens.indices.contains($0) ? screens[$0] : nil }
            ?? screens.first { $0.name == key || $0.uniqueID == key }
        if let found { return found }
        if let problem = problems.first, screens.isEmpty { throw problem }
        if screens.isEmpty {
            throw MediaDevicesError(.notFound, device: text, operation: "find screen",
                                    detail: "No screen was found: \(whyNoScreens(backend: backend)). Run it in a desktop session (DISPLAY or WAYLAND_DISPLAY set), or on a machine with a display connected, as a user who may open /dev/dri/card*; `mediadevices screens` lists what each backend sees")
        }
        throw MediaDevicesError(.notFound, device: text, operation: "find screen",
                                detail: "\(key) is not one of the \(screens.count) screen(s) (\(screens.enumerated().map { "\($0.offset): \($0.element.name)" }.joined(separator: ", "))); run `mediadevices screens`")
    }

    /// What each backend `backend` (all when `nil`) looked at when none gave a screen.
    private static func whyNoScreens(backend: ScreenBackend?) -> String {
        func unset(_ name: String) -> Bool { (getenv(name).map { String(cString: $0) } ?? "").isEmpty }
        var reasons: [String] = []
        if backend == nil || backend == .portal {
            reasons.append(unset("WAYLAND_DISPLAY") ? "no Wayland session (WAYLAND_DISPLAY is not set)" : "the portal offered none")
        }
        if backend == nil || backend == .x11 {
            reasons.append(unset("DISPLAY") ? "no X11 display (DISPLAY is not set)" : "the X11 display has no monitor")
        }
        if backend == nil || backend == .kms {
            let cards = ((try? FileManager.default.contentsOfDirectory(atPath: "/dev/dri")) ?? []).filter { $0.hasPrefix("card") }.sorted()
            reasons.append(cards.isEmpty ? "no DRM card (/dev/dri/card* is missing)"
                                         : "no connected output on \(cards.map { "/dev/dri/" + $0 }.joined(separator: ", "))")
        }
        return reasons.joined(separator: ", ")
    }
}
