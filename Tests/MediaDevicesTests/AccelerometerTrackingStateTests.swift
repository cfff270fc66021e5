import Foundation
import XCTest
@testable import MediaDevices
@testable import MediaDevicesAudio
@testable import MediaDevicesVideo
@testable import MediaDevicesCore

/// The tracker says whether it still reads: when the sensor goes away its thread ends, and
/// `isTracking` turns false (it stayed true before, so `start()` did nothing and the app could
/// not tell); `start()` then starts reading again. A fake sysfs folder stands in for the sensor.
final class AccelerometerTrackingStateTests: XCTestCase {
    /// A mount matrix given as text that is not three rows of three numbers is refused before
    /// the sensor is read, naming the sensor, the operation and what to give instead.
    func testAMalformedMountMatrixIsRefusedWithARemedy() {
        XCTAssertThrowsError(try Accelerometer(sysfsPath: "/sys/bus/iio/devices/iio:device9", mountMatrix: "1, 0; 0, 1")) { error in
            guard let error = error as? MediaDevicesError else { return XCTFail("\(error)") }
            XCTAssertEqual(error.code, .invalidState)
            XCTAssertEqual(error.device, "/sys/bus/iio/devices/iio:device9")
            XCTAssertEqual(error.operation, "set the mount matrix")
            XCTAssertTrue(error.remedy?.contains("1, 0, 0; 0, 1, 0; 0, 0, 1") ?? false, "\(error)")
        }
    }

    func testALostSensorEndsTrackingAndStartReadsAgain() throws {
        let folder = NSTemporaryDirectory() + "md-accel-state-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        func make() throws {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            for (axis, value) in [("x", "0"), ("y", "-100"), ("z", "0")] {
                try "\(value)\n".write(toFile: "\(folder)/in_accel_\(axis)_raw", atomically: true, encoding: .utf8)
            }
            try "0.0980665\n".write(toFile: "\(folder)/in_accel_scale", atomically: true, encoding: .utf8)
        }
        try make()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let tracker = try AccelerometerOrientationTracker(accelerometer: try Accelerometer(sysfsPath: folder, matrix: .identity),
                                                          interval: .milliseconds(20))
        defer { tracker.stop() }
        XCTAssertTrue(tracker.isTracking)
        XCTAssertTrue(wait { tracker.deviceOrientation == .normal }, "first readings: upright")

        try FileManager.default.removeItem(atPath: folder)   // the sensor goes away
        XCTAssertTrue(wait { !tracker.isTracking }, "the thread ended on the lost sensor and says so")
        XCTAssertNotNil(tracker.lastError)

        try make()
        try "100\n".write(toFile: "\(folder)/in_accel_x_raw", atomically: true, encoding: .utf8)
        try "0\n".write(toFile: "\(folder)/in_accel_y_raw", atomically: true, encoding: .utf8)
        try tracker.start()
        XCTAssertTrue(tracker.isTracking, "start() after the thread ended starts a new one")
        XCTAssertTrue(wait { tracker.deviceOrientation == .leftUp }, "the new thread reads: \(String(describing: tracker.deviceOrientation))")
        tracker.stop()
        XCTAssertFalse(tracker.isTracking)
    }

    private func wait(_ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(10)
        while !condition() {
            if Date() > deadline { return false }
            usleep(10_000)
        }
        return true
    }
}
