import ArgumentParser
import Foundation
import MediaDevices
import MediaDevicesCommandLine

/// `mediadevices orientation`: which way up the device (or a display, or a camera) is.
struct OrientationCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "orientation",
        abstract: "Print the current orientation and, with --watch, its changes.",
        discussion: """
            By default the device's orientation from its IIO accelerometer (normal, bottom-up, \
            left-up, right-up, as iio-sensor-proxy names them). --display reads a DRM connector's \
            "panel orientation" and its primary plane's "rotation"; --camera reads a camera's \
            mounting controls. "rotation" is the clockwise turn a picture needs to look upright.

            """ + Examples.orientation)

    @Flag(help: "Print JSON (one object per line with --watch).")
    var json = false

    @Flag(help: "Keep printing each change.")
    var watch = false

    @OptionGroup(title: "With --watch") var streaming: StreamingOptions

    @Option(help: "The accelerometer's sysfs folder (default: the first IIO accelerometer).")
    var accelerometer: String?

    @Option(help: "The accelerometer's mount matrix, \"x1, y1, z1; x2, y2, z2; x3, y3, z3\" (default: udev hwdb, then the kernel's).")
    var mountMatrix: String?

    @Option(help: "Milliseconds between accelerometer readings.")
    var interval: Int = 700

    @Option(help: "A DRM card (/dev/dri/card0) whose display orientation to read instead.")
    var display: String?

    @Option(help: "With --display: the connector (Virtual-1, eDP-1); default the first connected one.")
    var connector: String?

    @Option(help: "A camera (path, index or uniqueID) whose mounting to read instead.")
    var camera: String?

    func validate() throws {
        if let mountMatrix, MountMatrix(mountMatrix) == nil {
            throw ValidationError("--mount-matrix \"\(mountMatrix)\" is not three rows of three numbers (\"1, 0, 0; 0, 1, 0; 0, 0, 1\")")
        }
        if let camera, camera.hasPrefix("testpattern") {
            throw ValidationError("--camera: the test pattern has no mounting; name a camera (`mediadevices list`)")
        }
    }

    struct Output: Encodable {
        let source: String
        let orientation: String
        let rotation: Int
        var device: String?
        var deviceOrientation: String?
        var reading: AccelerationReading?
        var mountMatrix: String?
        var mountMatrixSource: String?
        var panelOrientation: String?
        var planeRotation: UInt64?
        var position: String?
    }

    func run() throws {
        try reportingErrors(json: json) {
            let (tracker, describe) = try makeTracker()
            let emit: @Sendable (Output) -> Void = { output in
                if json {
                    printJSON(output, compact: watch)
                } else {
                    var line = "\(output.source): \(output.deviceOrientation.map { "\($0), " } ?? "")picture \(output.orientation) (turn \(output.rotation)° clockwise)"
                    if let reading = output.reading { line += String(format: "  reading (%.2f, %.2f, %.2f) m/s²", reading.x, reading.y, reading.z) }
                    if let panel = output.panelOrientation { line += "  panel \(panel)" }
                    if let plane = output.planeRotation { line += "  plane rotation 0x\(String(plane, radix: 16))" }
                    if let position = output.position { line += "  position \(position)" }
                    print(line)
                }
                fflush(nil)
            }
            emit(describe())
            guard watch else { return }
            // The sequence starts with the orientation now, printed already.
            streaming.forEach(tracker.orientationChanges().dropFirst()) { _ in emit(describe()) }
            (tracker as? AccelerometerOrientationTracker)?.stop()
        }
    }

    private func makeTracker() throws -> (any OrientationTracker, @Sendable () -> Output) {
        if let display {
            let tracker = try DisplayOrientationTracker(card: display, connector: connector)
            return (tracker, {
                let p = tracker.properties
                return Output(source: "display", orientation: tracker.orientation.rawValue, rotation: tracker.orientation.rotationDegrees,
                              device: "\(display) \(p.connector)", panelOrientation: p.panelOrientation, planeRotation: p.planeRotation)
            })
        }
        if let camera {
            guard case .camera(let device) = try DeviceSelection.resolve(camera) else {
                throw MediaDevicesError(.notFound, device: camera, operation: "orientation --camera",
                                        detail: "The test pattern has no mounting; name a camera (`mediadevices list`)")
            }
            let tracker = try CameraMountOrientationTracker(device: device)
            return (tracker, {
                Output(source: "camera", orientation: tracker.orientation.rawValue, rotation: tracker.orientation.rotationDegrees,
                       device: device.path, position: tracker.position.rawValue)
            })
        }
        var matrix: MountMatrix?
        if let mountMatrix {
            guard let parsed = MountMatrix(mountMatrix) else {
                throw MediaDevicesError(.invalidState, device: nil, operation: "orientation --mount-matrix",
                                        detail: "\"\(mountMatrix)\" is not three rows of three numbers (\"1, 0, 0; 0, 1, 0; 0, 0, 1\")")
            }
            matrix = parsed
        }
        let sensor = try accelerometer.map { try Accelerometer(sysfsPath: $0, matrix: matrix) }
            ?? Accelerometer.all().first.map { try Accelerometer(sysfsPath: $0.sysfsPath, matrix: matrix) }
        guard let sensor else {
            // The library's error names a library type; a CLI user has options instead.
            throw MediaDevicesError(.notFound, device: "/sys/bus/iio/devices", operation: "find an accelerometer",
                                    detail: "No IIO accelerometer (in_accel_x_raw) is present; load the sensor's driver (for example hid-sensor-accel-3d), name one with --accelerometer SYSFS_DIR, or read a display's orientation (--display /dev/dri/card0) or a camera's mounting (--camera DEVICE) instead")
        }
        let tracker = try AccelerometerOrientationTracker(accelerometer: sensor, interval: .milliseconds(max(10, interval)))
        try tracker.update()  // the current answer now, not after the first interval
        return (tracker, {
            Output(source: "accelerometer", orientation: tracker.orientation.rawValue, rotation: tracker.orientation.rotationDegrees,
                   device: "\(tracker.accelerometer.sysfsPath) \(tracker.accelerometer.name)",
                   deviceOrientation: tracker.deviceOrientation?.rawValue ?? "undefined", reading: tracker.lastReading,
                   mountMatrix: tracker.accelerometer.mountMatrix.description, mountMatrixSource: tracker.accelerometer.mountMatrixSource.rawValue)
        })
    }
}
