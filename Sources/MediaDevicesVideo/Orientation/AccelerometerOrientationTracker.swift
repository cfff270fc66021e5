import MediaDevicesCore
import CUdev
import Foundation
import Glibc
import Synchronization

/// An IIO accelerometer as sysfs shows it (`/sys/bus/iio/devices/iio:deviceN`).
public struct Accelerometer: Sendable, Hashable, CustomStringConvertible {
    /// Where the mount matrix came from.
    package enum MountMatrixSource: String, Sendable, Codable {
        /// Given by the app.
        case app
        /// The udev hwdb's `ACCEL_MOUNT_MATRIX` property (needs systemd-udevd).
        case hwdb
        /// The kernel's `mount_matrix` / `in_accel_mount_matrix` attribute.
        case kernel
        /// None found: the sensor's axes are taken as the device's.
        case identity
    }

    /// The sysfs folder (`/sys/bus/iio/devices/iio:device0`).
    public let sysfsPath: String
    /// The IIO device name (`accel_3d` for HID sensor hubs, `mxc4005`, `bmc150_accel`, …).
    public let name: String
    /// m/s² per raw unit (`in_accel_scale`).
    package let scale: Double
    /// Added to raw values before scaling (`in_accel_offset`, usually 0).
    package let offset: Double
    /// Maps the sensor's axes onto the device's.
    package let mountMatrix: MountMatrix
    /// Where `mountMatrix` came from.
    package let mountMatrixSource: MountMatrixSource

    /// `"iio:device0 accel_3d (scale 0.0980665, mount matrix identity)"`.
    public var description: String {
        "\((sysfsPath as NSString).lastPathComponent) \(name) (scale \(scale), mount matrix \(mountMatrixSource == .identity ? "identity" : "\(mountMatrix) from \(mountMatrixSource.rawValue)"))"
    }

    /// Every IIO device with `in_accel_{x,y,z}_raw`, in device-number order.
    public static func all(in folder: String = "/sys/bus/iio/devices") -> [Accelerometer] {
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [])
            .filter { $0.hasPrefix("iio:device") }
            .sorted { (Int($0.dropFirst(10)) ?? 0) < (Int($1.dropFirst(10)) ?? 0) }
        return names.compactMap { try? Accelerometer(sysfsPath: "\(folder)/\($0)", matrix: nil) }
    }

    /// The accelerometer at `sysfsPath`; `mountMatrix` overrides what udev and the kernel say,
    /// in their text form: three rows of three numbers, rows separated by `;`, numbers by `,`
    /// (`"0, -1, 0; 1, 0, 0; 0, 0, 1"` maps the sensor's x onto the device's y). A matrix that
    /// is not that, or is all zeros, throws `.invalidState`.
    public init(sysfsPath: String, mountMatrix: String? = nil) throws(MediaDevicesError) {
        var matrix: MountMatrix?
        if let mountMatrix {
            guard let parsed = MountMatrix(mountMatrix) else {
                throw MediaDevicesError(.invalidState, device: sysfsPath, operation: "set the mount matrix",
                                        detail: "\"\(mountMatrix)\" is not three rows of three numbers",
                                        remedy: "Give the matrix as the kernel writes it, rows separated by semicolons (\"1, 0, 0; 0, 1, 0; 0, 0, 1\" is the identity), or nil to take the kernel's or udev's")
            }
            matrix = parsed
        }
        try self.init(sysfsPath: sysfsPath, matrix: matrix)
    }

    /// The accelerometer at `sysfsPath`; `matrix` overrides what udev and the kernel say.
    package init(sysfsPath: String, matrix mountMatrix: MountMatrix?) throws(MediaDevicesError) {
        let path = URL(fileURLWithPath: sysfsPath).resolvingSymlinksInPath().path
        for axis in ["x", "y", "z"] where !FileManager.default.fileExists(atPath: "\(path)/in_accel_\(axis)_raw") {
            throw MediaDevicesError(.notFound, device: sysfsPath, operation: "read in_accel_\(axis)_raw",
                                    detail: "This IIO device is not a 3-axis accelerometer; `ls /sys/bus/iio/devices/*/in_accel_x_raw` lists the ones there are")
        }
        resolvedPath = path
        self.sysfsPath = sysfsPath
        name = Sysfs.attribute(path, "name") ?? "iio"
        scale = (Sysfs.attribute(path, "in_accel_scale") ?? Sysfs.attribute(path, "in_accel_x_scale")).flatMap(Double.init) ?? 1
        offset = Sysfs.attribute(path, "in_accel_offset").flatMap(Double.init) ?? 0
        if let mountMatrix {
            (self.mountMatrix, mountMatrixSource) = (mountMatrix, .app)
        } else if let hwdb = Accelerometer.udevProperty(path, "ACCEL_MOUNT_MATRIX").flatMap(MountMatrix.init) {
            (self.mountMatrix, mountMatrixSource) = (hwdb, .hwdb)
        } else if let kernel = (Sysfs.attribute(path, "in_accel_mount_matrix") ?? Sysfs.attribute(path, "mount_matrix")).flatMap(MountMatrix.init) {
            (self.mountMatrix, mountMatrixSource) = (kernel, .kernel)
        } else {
            (self.mountMatrix, mountMatrixSource) = (.identity, .identity)
        }
    }

    private let resolvedPath: String

    /// Reads the three raw values and returns them in m/s², in the device's frame. Each read
    /// of a HID sensor wakes the sensor and asks it for a report, so this can take a while.
    public func read() throws(MediaDevicesError) -> AccelerationReading {
        var values: [Double] = []
        for axis in ["x", "y", "z"] {
            let file = "\(resolvedPath)/in_accel_\(axis)_raw"
            guard let fd = Optional(open(file, O_RDONLY | O_CLOEXEC)), fd >= 0 else {
                throw MediaDevicesError.fromErrno(errno, device: sysfsPath, operation: "open in_accel_\(axis)_raw")
            }
            defer { close(fd) }
            var buffer = [UInt8](repeating: 0, count: 32)
            let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, 31) }
            guard count > 0 else {
                throw MediaDevicesError.fromErrno(count < 0 ? errno : EIO, device: sysfsPath, operation: "read in_accel_\(axis)_raw")
            }
            let text = String(decoding: buffer.prefix(count), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            guard let raw = Double(text) else {
                throw MediaDevicesError(.io, device: sysfsPath, operation: "read in_accel_\(axis)_raw",
                                        detail: "The driver gave \"\(text)\", not a number; see `dmesg`")
            }
            values.append((raw + offset) * scale)
        }
        return mountMatrix.apply(AccelerationReading(x: values[0], y: values[1], z: values[2]))
    }

    /// A property udev recorded for the device (only when systemd-udevd runs).
    static func udevProperty(_ syspath: String, _ key: String) -> String? {
        guard let udev = udev_new() else { return nil }
        defer { udev_unref(udev) }
        guard let device = udev_device_new_from_syspath(udev, syspath) else { return nil }
        defer { udev_device_unref(device) }
        return udev_device_get_property_value(device, key).map { String(cString: $0) }
    }
}

/// The device's orientation from an IIO accelerometer, with iio-sensor-proxy's states and
/// hysteresis (`OrientationCalculator`). A thread reads the sensor every `interval` (700 ms by
/// default, like iio-sensor-proxy) until `stop()` or until the tracker is freed.
///
/// Until one edge has been clearly up the tracker reports `initial`.
public final class AccelerometerOrientationTracker: OrientationTracker, Sendable {
    /// The sensor read.
    public let accelerometer: Accelerometer
    /// Time between readings.
    public let interval: Duration
    private let cell: OrientationCell
    private let shared = Shared()
    /// The reading thread while one was started and not stopped (it may have ended by itself:
    /// see `Run.reading`).
    private let run = Mutex<Run?>(nil)

    /// One reading thread, with its own wake-up and its own "still reading" flag, so that a
    /// thread being stopped (joined outside the lock) and its successor never share either.
    private final class Run: Sendable {
        let wake: WakeUpEvent
        let reading = Atomic<Bool>(true)
        let thread = Mutex<CaptureThread?>(nil)
        init() throws(MediaDevicesError) { wake = try WakeUpEvent() }
    }


    private struct State {
        var calculator = OrientationCalculator()
        var lastReading: AccelerationReading?
        var lastError: MediaDevicesError?
    }

    /// What the reading thread and the callers share.
    private final class Shared: Sendable {
        let state = Mutex(State())
        /// Held from a reading's first axis until its orientation is published.
        private let measuring = Mutex(())

        /// Reads `accelerometer`, records the reading and publishes the orientation after it to
        /// `cell`; returns that orientation. One reading at a time: the thread's and `update()`'s
        /// are never interleaved, so an older reading (a sensor read can take hundreds of
        /// milliseconds while the driver powers the sensor up) is never recorded or published
        /// after a newer one, and the three axes of one reading are read together.
        func measure(_ accelerometer: Accelerometer, publishingTo cell: OrientationCell) throws(MediaDevicesError) -> DeviceOrientation? {
            try measuring.withLock { (_) throws(MediaDevicesError) in
                let reading = try accelerometer.read()
                let up = state.withLock { state in
                    state.lastReading = reading
                    state.lastError = nil
                    return state.calculator.update(reading)
                }
                if let up { cell.set(up.videoOrientation) }
                return up
            }
        }
    }

    /// Tracks `accelerometer` (the first one found if `nil`) and starts reading it.
    /// Throws `.notFound` if there is none.
    public init(accelerometer: Accelerometer? = nil, interval: Duration = .milliseconds(700),
                initial: VideoOrientation = .up) throws(MediaDevicesError) {
        guard let chosen = accelerometer ?? Accelerometer.all().first else {
            throw MediaDevicesError(.notFound, device: "/sys/bus/iio/devices", operation: "find an accelerometer",
                                    detail: "No IIO accelerometer (in_accel_x_raw) is present; use FixedOrientationTracker, or load the sensor's driver (for example hid-sensor-accel-3d)")
        }
        self.accelerometer = chosen
        self.interval = interval
        cell = OrientationCell(initial)
        try start()
    }

    deinit { stop(); cell.finish() }

    /// The orientation now.
    public var orientation: VideoOrientation { cell.orientation }

    /// The orientation now, then each change.
    public func orientationChanges() -> AsyncStream<VideoOrientation> { cell.changes() }

    /// Which edge is up, `nil` until one has clearly been.
    public var deviceOrientation: DeviceOrientation? { shared.state.withLock { $0.calculator.orientation } }

    /// The last reading (m/s², device frame).
    public var lastReading: AccelerationReading? { shared.state.withLock { $0.lastReading } }

    /// Why the last reading failed, if it did (the sensor may be gone: the thread then stops).
    public var lastError: MediaDevicesError? { shared.state.withLock { $0.lastError } }

    /// Whether the reading thread runs: false after `stop()`, and after the thread ended by
    /// itself because the sensor went away (`lastError` says why; `start()` tries again).
    public var isTracking: Bool { run.withLock { $0?.reading.load(ordering: .acquiring) ?? false } }

    /// Starts the reading thread (after `stop()`, or after it ended on a lost sensor); does
    /// nothing if it runs.
    public func start() throws(MediaDevicesError) {
        let ended = try run.withLock { (current) throws(MediaDevicesError) -> Run? in
            if let current, current.reading.load(ordering: .acquiring) { return nil }
            let ended = current
            let next = try Run()
            let (accelerometer, cell, shared, milliseconds) = (self.accelerometer, self.cell, self.shared, interval.millisecondCount)
            let thread = try CaptureThread(name: "md-orientation") {
                defer { next.reading.store(false, ordering: .releasing) }
                var descriptor = pollfd(fd: next.wake.descriptor, events: Int16(POLLIN), revents: 0)
                while true {
                    do {
                        _ = try shared.measure(accelerometer, publishingTo: cell)
                    } catch let error as MediaDevicesError {
                        shared.state.withLock { $0.lastError = error }
                        if error.code == .disconnected || error.code == .notFound { return }
                    } catch {}
                    descriptor.revents = 0
                    if poll(&descriptor, 1, max(1, milliseconds)) > 0 { return }
                }
            }
            next.thread.withLock { $0 = thread }
            current = next
            return ended
        }
        ended?.thread.withLock { $0 }?.join()  // it ended by itself: joins at once, outside the lock
    }

    /// Stops the reading thread and waits for it (outside the tracker's lock); the last
    /// orientation stays.
    public func stop() {
        guard let stopping = run.withLock({ current -> Run? in defer { current = nil }; return current }) else { return }
        stopping.wake.signal()
        stopping.thread.withLock { $0 }?.join()
    }

    /// Reads the sensor once now and feeds the reading to the calculator (also while the thread
    /// runs: a reading of the thread's in progress finishes first); returns the orientation
    /// after it.
    @discardableResult
    public func update() throws(MediaDevicesError) -> DeviceOrientation? {
        try shared.measure(accelerometer, publishingTo: cell)
    }
}
