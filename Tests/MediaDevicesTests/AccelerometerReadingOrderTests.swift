import Foundation
import Glibc
import Synchronization
import XCTest
@testable import MediaDevices
@testable import MediaDevicesAudio
@testable import MediaDevicesVideo
@testable import MediaDevicesCore

/// The tracker's thread and `update()` never interleave their readings: a reading the thread
/// started before the device turned is recorded before `update()`'s newer one, never after it.
/// (In the rig, one run in 18 saw the thread's first reading, slow while the HID sensor powered
/// up, overwrite the turn a test had just read.)
///
/// A fake sysfs folder stands in for the sensor; its `in_accel_z_raw` is a FIFO at first, so the
/// thread's first reading waits on its last axis until the test answers it.
final class AccelerometerReadingOrderTests: XCTestCase {
    func testAReadingInProgressIsRecordedBeforeANewerOne() throws {
        let folder = NSTemporaryDirectory() + "md-accel-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        func write(_ axis: String, _ value: String) throws {
            try "\(value)\n".write(toFile: "\(folder)/in_accel_\(axis)_raw", atomically: true, encoding: .utf8)
        }
        try write("x", "0")
        try write("y", "-100")   // upright: gravity along -y
        try "0.0980665\n".write(toFile: "\(folder)/in_accel_scale", atomically: true, encoding: .utf8)
        let fifo = "\(folder)/in_accel_z_raw"
        XCTAssertEqual(mkfifo(fifo, 0o600), 0, "mkfifo: \(String(cString: strerror(errno)))")

        let accelerometer = try Accelerometer(sysfsPath: folder, matrix: .identity)
        // The thread's first reading starts now: x and y upright, then it waits in the FIFO's
        // open() for a writer.
        let tracker = try AccelerometerOrientationTracker(accelerometer: accelerometer, interval: .seconds(3600))
        defer { tracker.stop() }   // the thread waits in poll() by then
        XCTAssertTrue(waitUntilAThreadIsInFIFOOpen(named: "md-orientation"), "the tracker's thread reached z and waits there")

        // The device turns (left edge up) while that reading waits; z becomes a plain file, so
        // a newer reading does not wait. The app asks for one.
        XCTAssertEqual(rename(fifo, fifo + ".held"), 0)
        try write("x", "100")
        try write("y", "0")
        try write("z", "0")
        let updated = Mutex<Result<DeviceOrientation?, any Error>?>(nil)
        let asker = Thread {
            let result = Result { try tracker.update() }
            updated.withLock { $0 = result }
        }
        asker.start()
        // Were readings interleaved, update() would be done by now, and the thread's older
        // reading, answered below, would be recorded after it.
        var waited = 0
        while updated.withLock({ $0 == nil }) && waited < 100 { usleep(10_000); waited += 1 }
        try feed(fifo + ".held", "0")

        let deadline = Date().addingTimeInterval(10)
        while updated.withLock({ $0 == nil }) && Date() < deadline { usleep(10_000) }
        let result = try XCTUnwrap(updated.withLock { $0 }, "update() returned")
        XCTAssertEqual(try result.get(), .leftUp, "update() read the turned device")
        XCTAssertEqual(tracker.deviceOrientation, .leftUp, "the thread's older reading was recorded first, not last")
        XCTAssertEqual(tracker.orientation, .left)
        XCTAssertEqual(tracker.lastReading?.x ?? 0, 9.80665, accuracy: 0.001)
    }

    /// Waits (up to 10 s) until a thread of this process named `name` sleeps in a FIFO's open()
    /// (`wait_for_partner`, read from `/proc/self/task/*/wchan`).
    private func waitUntilAThreadIsInFIFOOpen(named name: String) -> Bool {
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            for task in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? [] {
                let comm = (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8)) ?? ""
                let wchan = (try? String(contentsOfFile: "/proc/self/task/\(task)/wchan", encoding: .utf8)) ?? ""
                if comm.trimmingCharacters(in: .whitespacesAndNewlines) == name && wchan == "wait_for_partner" { return true }
            }
            usleep(5_000)
        }
        return false
    }

    /// Opens `fifo` for writing once a reader has it open (within 10 s), writes `value`, closes.
    private func feed(_ fifo: String, _ value: String) throws {
        let deadline = Date().addingTimeInterval(10)
        var fd: Int32 = -1
        while fd < 0 && Date() < deadline {
            fd = open(fifo, O_WRONLY | O_NONBLOCK | O_CLOEXEC)
            if fd < 0 { usleep(5_000) }
        }
        guard fd >= 0 else {
            return XCTFail("no reading opened \(fifo) within 10 s to take the value \(value) (ENXIO: no reader)")
        }
        defer { close(fd) }
        let bytes = Array("\(value)\n".utf8)
        XCTAssertEqual(Glibc.write(fd, bytes, bytes.count), bytes.count)
    }
}
