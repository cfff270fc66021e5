import Foundation
import MediaDevices
import XCTest

/// The browser console (`Examples/Console`, its own package) against real drivers, over HTTP as a
/// browser reaches it: vivid and the emulated USB camera listed; vivid's YUYV encoded to JPEGs of
/// the size asked; the USB camera's MJPEG passed through byte for byte as the camera sent it; a
/// control set through the API read back with `v4l2-ctl`, and one set by `v4l2-ctl` echoed to the
/// page's events; a stalled viewer dropped while a second one goes on; the USB camera's unplug and
/// replug reaching the page's device events; a snd-aloop tone on the microphone meter. It runs in
/// the late rig boot, after the host has built the console (scripts/console-check.sh).
final class ConsoleTests: XCTestCase {
    override func setUpWithError() throws { try Rig.require() }

    /// The console's debug build, where `scripts/console-check.sh` puts it (in the build folder it shares
    /// with `scripts/quickstarts.sh`; the guest sees the host's files).
    static var binary: String {
        URL(fileURLWithPath: Rig.script("console-check.sh")).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent(".build-apps/debug/media-console").path
    }

    /// A running console: its port, its log, and curl against it.
    struct Console {
        let process: Process
        let port: Int
        let log: String

        /// Starts the console on a free port and waits until it serves (its first start over 9p is slow).
        static func start() throws -> Console {
            guard FileManager.default.isExecutableFile(atPath: ConsoleTests.binary) else {
                XCTFail("the console is not built at \(ConsoleTests.binary): `scripts/console-check.sh` builds it (scripts/test.sh runs it before this boot)")
                throw RigError.commandFailed("media-console missing")
            }
            let port = 18000 + Int.random(in: 0..<1000)
            let log = "\(Rig.scratch)/console-\(port).log"
            let process = try Rig.spawn([ConsoleTests.binary, "--port", String(port)], output: log, errors: "\(log).err")
            func serving() -> Bool { ConsoleTests.contents(log).contains("serving http") }
            for _ in 0..<1200 { guard process.isRunning && !serving() else { break }; usleep(100_000) }
            guard serving() else {
                process.terminate()
                XCTFail("the console did not start: \(Rig.shell("cat \(log) \(log).err").output)")
                throw RigError.commandFailed("media-console")
            }
            return Console(process: process, port: port, log: log)
        }

        var base: String { "http://127.0.0.1:\(port)" }

        /// GET (or POST `json`) `path`: the HTTP status and the body.
        func request(_ path: String, json: String? = nil) throws -> (status: Int, body: String) {
            let post = json.map { " -X POST -H 'Content-Type: application/json' --data '\($0)'" } ?? ""
            let result = Rig.shell("curl -s -m 30 -w '\\n%{http_code}'\(post) '\(base)\(path)'")
            let lines = result.output.split(separator: "\n", omittingEmptySubsequences: false)
            guard let status = lines.last.flatMap({ Int($0) }) else { throw RigError.commandFailed("curl \(path): \(result.errors)") }
            return (status, lines.dropLast().joined(separator: "\n"))
        }

        /// Reads `path` for `seconds` into a file in the background (a stream or server-sent events).
        func record(_ path: String, seconds: Int, into file: String, limitRate: String? = nil) throws -> Process {
            try Rig.spawn(["/usr/bin/curl", "-s", "-N", "-m", String(seconds)] + (limitRate.map { ["--limit-rate", $0] } ?? []) + ["\(base)\(path)"],
                          output: file, errors: "\(file).err")
        }

        /// The server's log so far.
        var said: String { ConsoleTests.contents(log) }

        func stop() {
            process.terminate()
            _ = Rig.wait(for: process, seconds: 10)
        }
    }

    /// The JPEG parts of a recorded `multipart/x-mixed-replace` stream (its Content-Length parts).
    static func parts(_ file: String) -> [[UInt8]] {
        guard let data = FileManager.default.contents(atPath: file) else { return [] }
        let bytes = [UInt8](data)
        var parts: [[UInt8]] = [], index = 0
        let separator = Array("\r\n\r\n".utf8)
        while let headEnd = find(separator, in: bytes, from: index) {
            let head = String(decoding: bytes[index..<headEnd], as: UTF8.self)
            guard let line = head.split(separator: "\r\n").first(where: { $0.lowercased().hasPrefix("content-length:") }),
                  let length = Int(line.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) else { break }
            let start = headEnd + separator.count
            guard start + length <= bytes.count else { break }   // the last part, cut off by curl's time limit
            parts.append(Array(bytes[start..<start + length]))
            index = start + length + 2
        }
        return parts
    }

    private static func find(_ needle: [UInt8], in bytes: [UInt8], from start: Int) -> Int? {
        guard bytes.count >= needle.count, start <= bytes.count - needle.count else { return nil }
        for i in start...(bytes.count - needle.count) where bytes[i] == needle[0] && Array(bytes[i..<i + needle.count]) == needle { return i }
        return nil
    }

    /// A whole JPEG's size (SOI … EOI, the SOFn marker's width and height); nil otherwise.
    static func jpegSize(_ jpeg: [UInt8]) -> Size? {
        guard jpeg.count > 4, jpeg[0] == 0xFF, jpeg[1] == 0xD8, jpeg[jpeg.count - 2] == 0xFF, jpeg[jpeg.count - 1] == 0xD9 else { return nil }
        var i = 2
        while i + 9 < jpeg.count, jpeg[i] == 0xFF {
            let marker = jpeg[i + 1], length = Int(jpeg[i + 2]) << 8 | Int(jpeg[i + 3])
            if (0xC0...0xCF).contains(marker) && ![0xC4, 0xC8, 0xCC].contains(marker) {
                return Size(width: Int(jpeg[i + 7]) << 8 | Int(jpeg[i + 8]), height: Int(jpeg[i + 5]) << 8 | Int(jpeg[i + 6]))
            }
            i += 2 + length
        }
        return nil
    }

    /// A text file's contents so far ("" while it is missing).
    static func contents(_ file: String) -> String {
        FileManager.default.contents(atPath: file).map { String(decoding: $0, as: UTF8.self) } ?? ""
    }

    /// Waits up to `seconds` for `text` in `file`.
    static func wait(for text: String, in file: String, seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if contents(file).contains(text) { return true }
            usleep(200_000)
        }
        return false
    }

    func testCamerasControlsHotplugAndMeterOverHTTP() throws {
        var steps: [String] = [], last = Date()
        func step(_ name: String) { steps.append("\(name) \(String(format: "%.1f", Date().timeIntervalSince(last))) s"); last = Date() }
        let vividNode = try XCTUnwrap(try Rig.loadVivid("n_devs=1 node_types=1 input_types=0").first)   // a webcam input
        try Rig.run("modprobe snd-aloop")
        let camera = try Rig.usbCamera()
        defer { camera.close() }
        let usb = try camera.device()
        step("devices")
        let console = try Console.start()
        defer { console.stop() }
        step("console start")
        let vivid = String(vividNode.split(separator: "/").last!), usbID = String(usb.path.split(separator: "/").last!)
        let scratch = Rig.scratch

        // The device list: both cameras, and snd-aloop's capture PCM among the microphones.
        let devices = try console.request("/api/devices")
        XCTAssertEqual(devices.status, 200)
        let listing = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(devices.body.utf8)) as? [String: Any], devices.body)
        let cameraIDs = (listing["cameras"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
        XCTAssertTrue(cameraIDs.contains(vivid) && cameraIDs.contains(usbID), "both cameras listed: \(cameraIDs)")
        let microphone = "alsa:hw:CARD=Loopback,DEV=1"
        let audioIDs = (listing["audio"] as? [[String: Any]] ?? []).compactMap { $0["uniqueID"] as? String }
        XCTAssertTrue(audioIDs.contains(microphone), "snd-aloop's capture side listed: \(audioIDs)")

        // The page's events while everything below happens: devices (hotplug) and vivid's controls.
        let deviceEvents = try console.record("/api/events", seconds: 120, into: "\(scratch)/console-devices.sse")
        let controlEvents = try console.record("/api/cameras/\(vivid)/events", seconds: 120, into: "\(scratch)/console-controls.sse")
        defer { deviceEvents.terminate(); controlEvents.terminate() }

        step("listing")
        // vivid's YUYV, encoded by libjpeg-turbo at the size asked, and the USB camera's own JPEGs at once.
        // Each read until it holds 5 parts (a count, not a time: a busy machine starts a camera slower).
        let vividStream = try console.record("/api/cameras/\(vivid)/stream.mjpg?format=YUYV&width=640&height=480&fps=25", seconds: 90,
                                             into: "\(scratch)/console-vivid.mjpg")
        let usbStream = try console.record("/api/cameras/\(usbID)/stream.mjpg?format=MJPG&width=640&height=480", seconds: 90,
                                           into: "\(scratch)/console-usb.mjpg")
        for _ in 0..<450 {
            guard Self.parts("\(scratch)/console-vivid.mjpg").count < 6 || Self.parts("\(scratch)/console-usb.mjpg").count < 6 else { break }
            usleep(200_000)
        }
        vividStream.terminate(); usbStream.terminate()
        XCTAssertTrue(Rig.wait(for: vividStream, seconds: 30) && Rig.wait(for: usbStream, seconds: 30))
        let vividParts = Self.parts("\(scratch)/console-vivid.mjpg")
        XCTAssertGreaterThanOrEqual(vividParts.count, 5, "vivid's stream gave parts: \(console.said)")
        XCTAssertEqual(Set(vividParts.map { Self.jpegSize($0) }), [Size(width: 640, height: 480)], "every part a whole 640x480 JPEG")
        let usbParts = Self.parts("\(scratch)/console-usb.mjpg")
        XCTAssertGreaterThanOrEqual(usbParts.count, 5, "the USB camera's stream gave parts: \(console.said)")
        var equal = 0
        for part in usbParts {
            let counter = part.withUnsafeBytes { USBCamera.counter(jpeg: $0) }
            guard let counter else {
                XCTFail("a part without the camera's frame counter: \(part.count) bytes, beginning \(part.prefix(8).map { String(format: "%02X", $0) }.joined(separator: " ")), ending \(part.suffix(4).map { String(format: "%02X", $0) }.joined(separator: " "))")
                continue
            }
            if camera.jpeg(Size(width: 640, height: 480), counter: UInt32(counter)) == part { equal += 1 }
        }
        XCTAssertEqual(equal, usbParts.count, "every part is the camera's own JPEG, byte for byte")

        step("streams")
        // A control set through the API reads back with v4l2-ctl; one set by v4l2-ctl reaches the page.
        let set = try console.request("/api/cameras/\(vivid)/controls", json: "{\"brightness\": 200}")
        XCTAssertEqual(set.status, 200, set.body)
        XCTAssertEqual(try Rig.run("v4l2-ctl -d \(vividNode) -C brightness").trimmingCharacters(in: .whitespacesAndNewlines), "brightness: 200")
        let refused = try console.request("/api/cameras/\(vivid)/controls", json: "{\"brightness\": 999}")
        XCTAssertEqual(refused.status, 400, "a value out of range: \(refused.body)")
        try Rig.setControl(vividNode, "brightness=77")
        XCTAssertTrue(Self.wait(for: "\"key\":\"brightness\"", in: "\(scratch)/console-controls.sse", seconds: 20)
                      && Self.wait(for: "77", in: "\(scratch)/console-controls.sse", seconds: 5),
                      "v4l2-ctl's change reached the page's events: \(Rig.shell("cat \(scratch)/console-controls.sse").output)")

        step("controls")
        // A stalled viewer (reading 1 kB/s of a 30 fps MJPEG stream) is dropped; a second one goes on.
        let stalled = try console.record("/api/cameras/\(usbID)/stream.mjpg?format=MJPG&width=1280&height=720", seconds: 60,
                                         into: "\(scratch)/console-stalled.mjpg", limitRate: "1k")
        defer { stalled.terminate() }
        sleep(1)
        let second = try console.record("/api/cameras/\(usbID)/stream.mjpg?format=MJPG&width=1280&height=720", seconds: 60,
                                        into: "\(scratch)/console-second.mjpg")
        defer { second.terminate() }
        XCTAssertTrue(Self.wait(for: "dropped a stalled viewer", in: console.log, seconds: 50), "the stalled viewer was dropped: \(console.said)")
        let before = Self.parts("\(scratch)/console-second.mjpg").count
        sleep(2)
        let after = Self.parts("\(scratch)/console-second.mjpg").count
        XCTAssertGreaterThan(after, before, "the second viewer still gets parts after the drop (\(before) then \(after))")
        second.terminate(); stalled.terminate()

        step("stalled viewer")
        // Hotplug: the USB camera unplugged and plugged in again reaches the page's device events.
        camera.unplug()
        XCTAssertTrue(Self.wait(for: "\"action\":\"removed\"", in: "\(scratch)/console-devices.sse", seconds: 30), "the unplug reached the page")
        try camera.replug()
        _ = try camera.device()
        XCTAssertTrue(Self.wait(for: "\"action\":\"added\"", in: "\(scratch)/console-devices.sse", seconds: 60), "the replug reached the page")

        step("hotplug")
        // The microphone meter: a 440 Hz tone at -18 dBFS peak played into snd-aloop (aplay), metered on its other end.
        try Rig.run("ffmpeg -nostdin -loglevel error -y -f lavfi -i sine=frequency=440:sample_rate=48000:duration=20 -ac 1 -c:a pcm_s16le \(scratch)/console-tone.wav")
        let player = try Rig.spawn(["/usr/bin/aplay", "-q", "-D", "hw:Loopback,0,0", "\(scratch)/console-tone.wav"],
                                   output: "\(scratch)/console-tone.out", errors: "\(scratch)/console-tone.err")
        defer { player.terminate() }
        // The meter only once aplay's stream runs: snd-aloop gives the second side to open the
        // first one's format, and the console's meter asks for FLOAT_LE (aplay's S16_LE was then
        // refused in a run where aplay took more than the second this test used to wait).
        let running = Rig.shell("for i in $(seq 600); do grep -qs RUNNING /proc/asound/Loopback/pcm0p/sub0/status && exit 0; sleep 0.1; done; exit 1")
        XCTAssertEqual(running.status, 0, "aplay's stream did not start in 60 s: " + Rig.shell("cat \(scratch)/console-tone.err").output)
        let meter = try console.record("/api/audio/level?device=\(microphone)", seconds: 4, into: "\(scratch)/console-level.sse")
        XCTAssertTrue(Rig.wait(for: meter, seconds: 30))
        let levels = Rig.shell("grep '^data: ' \(scratch)/console-level.sse").output.split(separator: "\n").compactMap { line -> Double? in
            let object = try? JSONSerialization.jsonObject(with: Data(line.dropFirst(6).utf8)) as? [String: Any]
            return (object?["rms"] as? [Double])?.first
        }
        step("meter")
        XCTAssertGreaterThanOrEqual(levels.count, 10, "level events about ten a second: \(levels.count); the events: "
                                    + Rig.shell("head -c 400 \(scratch)/console-level.sse; cat \(scratch)/console-level.sse.err").output
                                    + "; the console: \(console.said.suffix(600)); the tone: " + Rig.shell("cat \(scratch)/console-tone.err").output)
        let loud = levels.filter { $0 > -22 && $0 < -20 }.count   // ffmpeg's sine: 1/8 of full scale, -18 dBFS peak, -21 dBFS RMS
        XCTAssertGreaterThanOrEqual(loud, levels.count / 2, "the tone's level on the meter (dBFS RMS): \(levels.map { Int($0) })")
        print("figure: console over HTTP: vivid \(vividParts.count) JPEG parts of 640x480; USB camera \(usbParts.count) parts, \(equal) byte-equal to the camera's; "
              + "brightness 200 read back by v4l2-ctl, v4l2-ctl's 77 echoed; stalled viewer dropped, second went on (\(before) -> \(after) parts); "
              + "unplug and replug reached the page; steps: \(steps.joined(separator: ", ")); meter \(levels.count) levels, median \(levels.isEmpty ? "none" : String(levels.sorted()[levels.count / 2])) dBFS RMS")
    }
}
