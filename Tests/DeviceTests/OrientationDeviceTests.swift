import Foundation
import MediaDevices
import UHIDAccelerometer
import XCTest

/// A real IIO accelerometer in the rig: a HID sensor-hub 3D accelerometer made through
/// /dev/uhid (Tests/UHIDAccelerometer), bound by the kernel's hid-sensor-hub and
/// hid-sensor-accel-3d as `accel_3d`. The tests drive it through every pose and check the
/// tracker's answers, its hysteresis, its change sequence and the frames a camera stamps.
final class OrientationDeviceTests: XCTestCase {
    override func setUpWithError() throws { try Rig.require() }

    /// Raw units per g of the emulated sensor (unit exponent -2).
    private static let g: Int16 = 100

    private func makeSensor() throws -> (OpaquePointer, Accelerometer) {
        try Rig.run("modprobe uhid && modprobe hid-sensor-hub && modprobe hid-sensor-accel-3d")
        var error = [CChar](repeating: 0, count: 256)
        guard let sensor = uhidaccel_create("MediaDevices test accelerometer", &error, error.count) else {
            XCTFail("uhid accelerometer: \(String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))")
            throw RigError.commandFailed("uhidaccel_create")
        }
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            if let found = Accelerometer.all().first(where: { $0.name == "accel_3d" }) { return (sensor, found) }
            usleep(50_000)
        }
        uhidaccel_destroy(sensor)
        XCTFail("no accel_3d IIO device appeared in 10 s:\n\(Rig.shell("dmesg | tail -20").output)")
        throw RigError.commandFailed("accel_3d")
    }

    private func pose(_ sensor: OpaquePointer, _ x: Int16, _ y: Int16, _ z: Int16) {
        XCTAssertEqual(uhidaccel_set(sensor, x, y, z), 0)
    }

    func testPosesAndHysteresis() throws {
        let (sensor, accelerometer) = try makeSensor()
        defer { uhidaccel_destroy(sensor) }
        print("accelerometer: \(accelerometer)")
        XCTAssertEqual(accelerometer.scale, 0.0980665, accuracy: 1e-6, "unit 'none' with exponent -2: 9.80665/100 m/s² per unit")
        XCTAssertEqual(accelerometer.mountMatrixSource, .identity, "no hwdb and no kernel mount matrix here")

        pose(sensor, 0, -Self.g, 0)
        let reading = try accelerometer.read()
        XCTAssertEqual(reading.y, -9.80665, accuracy: 0.01, "a raw read reaches the emulator (GET_REPORT) and comes back scaled")
        XCTAssertEqual(reading.x, 0, accuracy: 0.01)
        XCTAssertGreaterThan(uhidaccel_power_state(sensor), 0, "the driver wrote the power state")

        let tracker = try AccelerometerOrientationTracker(accelerometer: accelerometer, interval: .seconds(3600))
        defer { tracker.stop() }
        // (x, y, z) in g/100 → expected state. Lying flat and shallow tilts keep the last state.
        let steps: [(Int16, Int16, Int16, DeviceOrientation, VideoOrientation, String)] = [
            (0, -100, 0, .normal, .up, "upright"),
            (100, 0, 0, .leftUp, .left, "turned clockwise: left edge up"),
            (0, 0, -100, .leftUp, .left, "lying flat keeps the last state"),
            (30, -30, -90, .leftUp, .left, "tilted 25° only: still the last state"),
            (-100, 0, 0, .rightUp, .right, "right edge up"),
            (0, 100, 0, .bottomUp, .down, "upside down"),
            (50, 87, 0, .bottomUp, .down, "30° off bottom-up: under the 35° threshold"),
            (70, 70, 0, .leftUp, .left, "a corner counts as portrait"),
            (-50, -87, 0, .normal, .up, "30° off upright towards the right edge: normal"),
        ]
        for (x, y, z, expected, video, why) in steps {
            pose(sensor, x, y, z)
            XCTAssertEqual(try tracker.update(), expected, why)
            XCTAssertEqual(tracker.deviceOrientation, expected, why)
            XCTAssertEqual(tracker.orientation, video, why)
        }
        print("orientation: \(steps.count) poses, \(uhidaccel_requests(sensor)) HID requests answered")
    }

    func testTrackerThreadReportsChangesAndFramesCarryThem() async throws {
        let (sensor, accelerometer) = try makeSensor()
        defer { uhidaccel_destroy(sensor) }
        pose(sensor, 0, -Self.g, 0)
        let tracker = try AccelerometerOrientationTracker(accelerometer: accelerometer, interval: .milliseconds(100))
        var changes = tracker.orientationChanges().makeAsyncIterator()
        let first = await changes.next()
        XCTAssertEqual(first, .up)
        let started = Date()
        pose(sensor, Self.g, 0, 0)
        var seen = first
        while seen != .left, Date().timeIntervalSince(started) < 5 { seen = await changes.next() }
        XCTAssertEqual(seen, .left, "the reading thread saw the left edge go up")
        print("orientation change seen after \(Int(Date().timeIntervalSince(started) * 1000)) ms (interval 100 ms)")

        // A camera with this tracker stamps each frame with the orientation at capture time,
        // and a consumer that asks for upright frames gets them turned by the pixel pipeline.
        let node = try Rig.loadVivid("n_devs=1")[0]
        try Rig.colourBars(node)
        let source = CameraSource(device: try CaptureDevice(path: node), request: FormatRequest(pixelFormat: .yuyv, size: .vga))
        try source.setOrientationTracker(tracker)
        let recorder = FrameRecorder(target: 5)
        source.consumer = recorder
        let upright = try source.frameSequence(bufferSize: 2, output: OutputFormat(.argb, upright: true))
        try source.start()
        let framesArrived = await recorder.wait(seconds: 20)
        XCTAssertTrue(framesArrived)
        XCTAssertEqual(recorder.snapshot.last?.orientation, .left, "vivid has no sensor rotation: the tracker's orientation alone")
        var iterator = upright.makeAsyncIterator()
        let turned = try await nextFrame(&iterator)
        XCTAssertEqual(turned.size, Size(width: 480, height: 640), "turned a quarter: portrait")
        XCTAssertEqual(turned.orientation, .up)
        // vivid's bars run white … black from left to right; turned clockwise they run from top
        // to bottom, so each row is one colour: white at the top, black at the bottom.
        XCTAssertEqual(turned.firstPixel(row: 0), turned.lastPixel(row: 0), "a row is one bar")
        XCTAssertGreaterThan(turned.firstPixel(row: 0).luma, 200, "top row white")
        XCTAssertLessThan(turned.firstPixel(row: 639).luma, 40, "bottom row black")

        pose(sensor, 0, Self.g, 0)
        let deadline = Date().addingTimeInterval(5)
        while source.orientation != .down, Date() < deadline { usleep(50_000) }
        var flipped = try await nextFrame(&iterator)
        for _ in 0..<10 where flipped.size != Size(width: 640, height: 480) { flipped = try await nextFrame(&iterator) }
        XCTAssertEqual(flipped.size, Size(width: 640, height: 480), "upside down: landscape again")
        XCTAssertLessThan(flipped.firstPixel(row: 0).luma, 40, "turned half: black bar on the left")
        XCTAssertGreaterThan(flipped.lastPixel(row: 0).luma, 200, "white bar on the right")
        source.release()
        XCTAssertEqual(recorder.snapshot.last?.orientation, .down, "frames follow the tracker while capturing")
        tracker.stop()
        XCTAssertFalse(tracker.isTracking)
    }

    func testOrientationCommand() throws {
        let (sensor, _) = try makeSensor()
        defer { uhidaccel_destroy(sensor) }
        pose(sensor, Self.g, 0, 0)
        let json = try Rig.run("\(Rig.tool) orientation --json")
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any], json)
        XCTAssertEqual(object["deviceOrientation"] as? String, "left-up")
        XCTAssertEqual(object["orientation"] as? String, "left")
        XCTAssertEqual(object["rotation"] as? Int, 90)
        XCTAssertEqual(object["mountMatrixSource"] as? String, "identity")
        // --watch: the change to upside down, as one JSON line, then stop after one change.
        let out = "\(Rig.scratch)/orientation.json"
        let script = """
            \(Rig.tool) orientation --watch --json --interval 100 --count 1 --timeout 20 >\(out) &
            pid=$!
            for i in $(seq 200); do [ -s \(out) ] && break; sleep 0.05; done
            wait $pid
            """
        let watcher = Thread { _ = Rig.shell(script) }
        watcher.start()
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline, ((try? String(contentsOfFile: out, encoding: .utf8)) ?? "").isEmpty { usleep(50_000) }
        pose(sensor, 0, Self.g, 0)
        while Date() < deadline, ((try? String(contentsOfFile: out, encoding: .utf8)) ?? "").split(separator: "\n").count < 2 { usleep(50_000) }
        let lines = try String(contentsOfFile: out, encoding: .utf8).split(separator: "\n")
        XCTAssertEqual(lines.count, 2, "the current orientation, then one change: \(lines)")
        let last = try XCTUnwrap(JSONSerialization.jsonObject(with: Data((lines.last ?? "").utf8)) as? [String: Any])
        XCTAssertEqual(last["deviceOrientation"] as? String, "bottom-up")
        XCTAssertEqual(last["orientation"] as? String, "down")
    }

    /// bochs (the rig's std display) has a connector without "panel orientation" and a primary
    /// plane without "rotation": upright. The answer must come from libdrm's view of the card.
    func testDisplayOrientationOnBochs() throws {
        try Rig.run("modprobe bochs")
        let card = try XCTUnwrap(try FileManager.default.contentsOfDirectory(atPath: "/dev/dri").filter { $0.hasPrefix("card") }.sorted().first)
        let tracker = try DisplayOrientationTracker(card: "/dev/dri/\(card)")
        print("display: /dev/dri/\(card) \(tracker.properties)")
        XCTAssertTrue(tracker.properties.connector.hasPrefix("Virtual-"), tracker.properties.connector)
        XCTAssertNil(tracker.properties.panelOrientation)
        XCTAssertEqual(tracker.orientation, .up)
        XCTAssertThrowsError(try DisplayOrientationTracker(card: "/dev/dri/\(card)", connector: "eDP-9")) { error in
            XCTAssertEqual((error as? MediaDevicesError)?.code, .notFound)
            XCTAssertTrue("\(error)".contains(tracker.properties.connector), "names the connectors there are: \(error)")
        }
    }

    private func nextFrame(_ iterator: inout VideoFrames.AsyncIterator) async throws -> Pixels {
        guard let buffer = try await iterator.next() else {
            XCTFail("the upright sequence ended")
            throw RigError.commandFailed("frames")
        }
        return buffer.withFrame { Pixels($0) }
    }

    /// An ARGB frame's first plane, copied (bytes B, G, R, A).
    struct Pixels {
        struct BGR: Equatable {
            var b: UInt8, g: UInt8, r: UInt8
            var luma: Int { (Int(r) * 299 + Int(g) * 587 + Int(b) * 114) / 1000 }
        }
        let size: Size
        let orientation: VideoOrientation
        let bytes: [UInt8]
        let stride: Int
        init(_ frame: VideoFrame) {
            size = Size(width: frame.width, height: frame.height)
            orientation = frame.orientation
            bytes = Array(frame.plane(0).bytes)
            stride = frame.plane(0).bytesPerRow
        }
        func pixel(_ x: Int, _ y: Int) -> BGR {
            let i = y * stride + x * 4
            return BGR(b: bytes[i], g: bytes[i + 1], r: bytes[i + 2])
        }
        func firstPixel(row: Int) -> BGR { pixel(2, row) }
        func lastPixel(row: Int) -> BGR { pixel(size.width - 3, row) }
    }
}
