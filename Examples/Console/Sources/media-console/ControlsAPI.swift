import Foundation
import Hummingbird
import MediaDevices

/// `GET` and `POST /api/cameras/{id}/controls`: the camera's controls as the library describes
/// them, and a JSON object of settings (`{"brightness": 160, "power_line_frequency": "50 Hz"}`)
/// applied as one request through `setControls` (all or none).
enum ControlsAPI {
    /// The controls (class headers left out); the test pattern has none.
    static func controls(of camera: DeviceCatalog.Camera) throws -> [CameraControl] {
        switch camera {
        case .testPattern: return []
        case .device(let device): return try device.controls().filter { $0.type != .controlClass }
        }
    }

    /// The settings a request body holds: each value a number, a boolean or a text (a menu
    /// entry's name), read for the control by the library.
    static func settings(from body: ByteBuffer) throws -> [ControlSetting] {
        guard let object = try? JSONDecoder().decode([String: SettingValue].self, from: Data(body.readableBytesView)), !object.isEmpty else {
            throw HTTPError(.badRequest, message: "Send a JSON object of control names and values (whole numbers, true/false or texts), such as {\"brightness\": 160}")
        }
        return object.keys.sorted().map { name in
            switch object[name]! {
            case .flag(let flag): ControlSetting(name: name, value: .integer(flag ? 1 : 0))
            case .number(let value): ControlSetting(name: name, value: .integer(value))
            case .text(let text): ControlSetting(name: name, text: text)
            }
        }
    }

    /// One value of a settings object.
    enum SettingValue: Decodable {
        case flag(Bool), number(Int64), text(String)

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let flag = try? container.decode(Bool.self) { self = .flag(flag) }
            else if let number = try? container.decode(Int64.self) { self = .number(number) }
            else { self = .text(try container.decode(String.self)) }
        }
    }

    /// Applies `settings` to `camera` as one request.
    static func apply(_ settings: [ControlSetting], to camera: DeviceCatalog.Camera) throws {
        switch camera {
        case .testPattern:
            throw MediaDevicesError(.notFound, device: DeviceCatalog.testPatternID, operation: "set controls",
                                    detail: "The test pattern has no controls (\(settings.map(\.description).joined(separator: ", ")) not set); choose a camera")
        case .device(let device):
            try device.setControls(settings)
        }
    }
}
