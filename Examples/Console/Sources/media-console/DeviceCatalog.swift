import Hummingbird
import MediaDevices

/// The devices the console offers, discovered afresh on each request (so a camera plugged in
/// shows on the next reload), and the cameras by the id the URLs use.
struct DeviceCatalog: Sendable {
    /// The id of the library's built-in test pattern, when offered.
    static let testPatternID = "testpattern"

    /// Whether `--test-pattern` was given.
    let offersTestPattern: Bool

    /// A camera the console can stream: a V4L2 device or the test pattern.
    enum Camera: Sendable {
        case device(CaptureDevice)
        case testPattern
    }

    /// The URL id of a V4L2 camera: its node's name (`video0`).
    static func id(of device: CaptureDevice) -> String {
        String(device.path.split(separator: "/").last ?? Substring(device.path))
    }

    /// The camera `id` names; 404 when there is none.
    func camera(_ id: String) async throws -> Camera {
        if offersTestPattern && id == Self.testPatternID { return .testPattern }
        let cameras = await CaptureDevice.discover()
        guard let device = cameras.devices.first(where: { Self.id(of: $0) == id }) else {
            throw HTTPError(.notFound, message: "No camera \(id); GET /api/devices lists them")
        }
        return .device(device)
    }

    /// Every camera, screen and audio device, and what could not be read.
    func listing() async -> DeviceListing {
        async let cameras = CaptureDevice.discover()
        async let screens = ScreenSource.discover()
        async let audio = AudioDevice.discover(pulseTimeout: .seconds(1))
        let (c, s, a) = await (cameras, screens, audio)
        var cameraRows = c.devices.map {
            DeviceListing.CameraRow(id: Self.id(of: $0), name: $0.name, path: $0.path, driver: $0.driver,
                                    uniqueID: $0.uniqueID, isTestPattern: false)
        }
        if offersTestPattern {
            cameraRows.append(DeviceListing.CameraRow(id: Self.testPatternID, name: "Test pattern (MediaDevices)", path: nil,
                                                      driver: "testpattern", uniqueID: Self.testPatternID, isTestPattern: true))
        }
        return DeviceListing(
            cameras: cameraRows,
            screens: s.devices.map { .init(uniqueID: $0.uniqueID, name: $0.name, width: $0.mode?.width, height: $0.mode?.height,
                                           backend: String(describing: $0.backend)) },
            audio: a.devices.map { .init(uniqueID: $0.uniqueID, name: $0.name, description: $0.description,
                                         direction: $0.direction.rawValue, backend: $0.backend.rawValue, isDefault: $0.isDefault) },
            problems: (c.problems + s.problems + a.problems).map(\.description))
    }
}

/// `GET /api/devices`.
struct DeviceListing: Encodable, Sendable {
    /// A camera, with the id its URLs use.
    struct CameraRow: Encodable, Sendable {
        let id: String, name: String, path: String?, driver: String, uniqueID: String, isTestPattern: Bool
    }
    /// A screen.
    struct ScreenRow: Encodable, Sendable {
        let uniqueID: String, name: String, width: Int?, height: Int?, backend: String
    }
    /// A microphone or a speaker.
    struct AudioRow: Encodable, Sendable {
        let uniqueID: String, name: String, description: String, direction: String, backend: String, isDefault: Bool
    }
    let cameras: [CameraRow]
    let screens: [ScreenRow]
    let audio: [AudioRow]
    /// Devices that could not be read, as the library words it (a node this user may not open).
    let problems: [String]
}
