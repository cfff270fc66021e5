import ArgumentParser
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
        throw MediaDevicesError(.notFound, device: text, operation: "find screen",
                                detail: "There are \(screens.count) screen(s) (\(screens.map(\.name).joined(separator: ", "))); run `mediadevices screens`")
    }
}
