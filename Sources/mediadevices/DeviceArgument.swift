import MediaDevices

/// What a DEVICE argument names: a camera (by path, index from `list`, or uniqueID) or the
/// built-in test pattern (`testpattern`, `testpattern:noise`).
enum DeviceSelection {
    case camera(CaptureDevice)
    case testPattern(TestPatternSource.Pattern)

    /// Resolves `text`; throws `.notFound` naming what exists.
    static func resolve(_ text: String) throws -> DeviceSelection {
        if text == "testpattern" || text == "testpattern:bars" { return .testPattern(.colorBars) }
        if text == "testpattern:noise" { return .testPattern(.noise) }
        let devices = CaptureDevice.devices
        if let index = Int(text) {
            guard devices.indices.contains(index) else {
                throw MediaDevicesError(.notFound, device: text, operation: "find device",
                                        detail: "There are \(devices.count) capture device(s); run `mediadevices list`")
            }
            return .camera(devices[index])
        }
        if let device = devices.first(where: { $0.uniqueID == text || $0.path == text }) { return .camera(device) }
        if text.hasPrefix("/") { return .camera(try CaptureDevice(path: text)) }
        throw MediaDevicesError(.notFound, device: text, operation: "find device",
                                detail: "No device has that path, index or uniqueID; run `mediadevices list`, or use `testpattern`")
    }
}
