import Foundation
import MediaDevices
import TestSupport
import XCTest

/// Hotplug against real kernel events in the rig (no udevd runs: kernel uevents): vivid and
/// snd-aloop loaded and unloaded while monitoring, vivid's `disconnect` while streaming, and
/// `mediadevices monitor`.
final class HotplugDeviceTests: XCTestCase {
    override func setUpWithError() throws { try Rig.require() }

    /// Collects a monitor's events on a task; the test waits for the ones it expects.
    final class Collector: @unchecked Sendable {
        private let lock = NSLock()
        private var events: [DeviceEvent] = []
        private var task: Task<Void, Never>?

        init(_ monitor: DeviceMonitor) {
            task = Task { [weak self] in
                for await event in monitor.events { self?.append(event) }
            }
        }

        private func append(_ event: DeviceEvent) { lock.withLock { events.append(event) } }
        var all: [DeviceEvent] { lock.withLock { events } }

        /// Waits up to `seconds` for an event matching `match`.
        func wait(seconds: Double = 10, _ what: String, _ match: (DeviceEvent) -> Bool,
                  file: StaticString = #filePath, line: UInt = #line) -> DeviceEvent? {
            let deadline = Date().addingTimeInterval(seconds)
            while Date() < deadline {
                if let event = all.first(where: match) { return event }
                usleep(20_000)
            }
            XCTFail("no \(what) within \(seconds) s; saw:\n\(all.map(\.description).joined(separator: "\n"))", file: file, line: line)
            return nil
        }

        /// The same for async tests: it sleeps instead of blocking its thread, which may be the
        /// cooperative pool's only one (one CPU), the one this collector's task needs.
        func wait(seconds: Double = 10, _ what: String, _ match: (DeviceEvent) -> Bool,
                  file: StaticString = #filePath, line: UInt = #line) async -> DeviceEvent? {
            var found: DeviceEvent?
            if await Soak.waitUntil(seconds: seconds, { found = all.first(where: match); return found != nil }) { return found }
            XCTFail("no \(what) within \(seconds) s; saw:\n\(all.map(\.description).joined(separator: "\n"))", file: file, line: line)
            return nil
        }
    }

    func testLoadAndUnloadVividAndAloopFromKernelEvents() throws {
        Rig.shell("modprobe -r vivid; modprobe -r snd-aloop")
        XCTAssertEqual(DeviceMonitor.Source.detected, .kernel, "no udevd runs in the rig")
        let monitor = try DeviceMonitor(source: .automatic)
        XCTAssertEqual(monitor.source, .kernel)
        let events = Collector(monitor)
        let started = Date()

        try Rig.run("modprobe vivid n_devs=1")
        let cameraAdded = try XCTUnwrap(events.wait("camera added") { $0.action == .added && $0.kind == .camera })
        print("hotplug: camera added after \(Int(Date().timeIntervalSince(started) * 1000)) ms: \(cameraAdded)")
        let enumerated = try XCTUnwrap(CaptureDevice.scan().devices.first { $0.path == cameraAdded.device.devnode })
        XCTAssertEqual(cameraAdded.camera, enumerated, "the event carries the same description as enumeration")
        XCTAssertEqual(cameraAdded.uniqueID, enumerated.uniqueID)
        XCTAssertEqual(cameraAdded.camera?.driver, "vivid")
        XCTAssertEqual(events.all.filter { $0.kind == .camera && $0.action == .added }.count, 1,
                       "only the capture node counts as a camera (not vivid's output, VBI, radio, SDR, touch or metadata nodes)")

        try Rig.run("modprobe snd-aloop")
        let soundAdded = try XCTUnwrap(events.wait("sound card added") { $0.action == .added && $0.kind == .sound })
        XCTAssertEqual(soundAdded.device.name, "Loopback", "the ALSA card id")
        let card = try XCTUnwrap(soundAdded.device.cardNumber)
        XCTAssertEqual(soundAdded.device.sysname, "card\(card)")
        XCTAssertEqual(soundAdded.uniqueID, "alsa:platform/snd_aloop.0", "no udevd, so no ID_PATH: the physical path")
        let aplay = Rig.shell("aplay -l").output
        XCTAssertTrue(aplay.contains("card \(card): Loopback"), "aplay agrees on the card number:\n\(aplay)")
        // The event carries the card's PCMs as audio enumeration describes them.
        let enumeratedPCMs = AudioDevice.scan(pulseTimeout: .milliseconds(200)).devices.filter { $0.backend == .alsa && $0.card == card }
        XCTAssertFalse(soundAdded.audioDevices.isEmpty, "the added card's PCMs")
        XCTAssertEqual(Set(soundAdded.audioDevices.map(\.uniqueID)), Set(enumeratedPCMs.map(\.uniqueID)))

        try Rig.run("modprobe -r vivid")
        let cameraRemoved = try XCTUnwrap(events.wait("camera removed") { $0.action == .removed && $0.kind == .camera })
        XCTAssertEqual(cameraRemoved.uniqueID, enumerated.uniqueID, "a removal names the camera that went")
        XCTAssertEqual(cameraRemoved.camera?.name, enumerated.name)
        try Rig.run("modprobe -r snd-aloop")
        let soundRemoved = try XCTUnwrap(events.wait("sound card removed") { $0.action == .removed && $0.kind == .sound })
        XCTAssertEqual(soundRemoved.uniqueID, soundAdded.uniqueID)
        XCTAssertEqual(soundRemoved.device.name, "Loopback", "remembered from when it came")
        XCTAssertEqual(soundRemoved.audioDevices.map(\.uniqueID), soundAdded.audioDevices.map(\.uniqueID), "remembered PCMs")
        monitor.stop()
        print("hotplug: \(events.all.count) events in \(Int(Date().timeIntervalSince(started) * 1000)) ms")
    }

    /// vivid's `disconnect` makes the nodes answer ENODEV (like an unplugged USB camera whose
    /// file is still open) but sends no uevent; the kernel removes the device once the last
    /// file is closed and the module unloads. The stream ends with `.disconnected`, the source
    /// lets go of the device, and the removal then names the camera that was streaming.
    func testDisconnectWhileStreamingEndsTheStreamAndTheRemovalFollows() throws {
        let node = try Rig.loadVivid("n_devs=1")[0]
        let device = try CaptureDevice(path: node)
        let monitor = try DeviceMonitor(kinds: [.camera])
        let events = Collector(monitor)
        let source = CameraSource(device: device, request: FormatRequest(pixelFormat: .yuyv, size: .vga))
        let recorder = FrameRecorder(target: 5)
        source.consumer = recorder
        try source.start()
        XCTAssertTrue(recorder.wait(seconds: 20))
        try Rig.setControl(node, "disconnect=1")
        XCTAssertTrue(recorder.waitForStop(seconds: 10), "the consumer hears the disconnect within 10 s")
        XCTAssertFalse(source.isCapturing)
        XCTAssertEqual(recorder.stopError?.code, .disconnected, "the stream ended with .disconnected")
        source.release()
        // Nothing of ours holds vivid any more, so it unloads.
        try Rig.run("modprobe -r vivid")
        let removed = try XCTUnwrap(events.wait("camera removed") { $0.action == .removed })
        XCTAssertEqual(removed.uniqueID, device.uniqueID)
        XCTAssertEqual(removed.camera?.path, node)
        monitor.stop()
    }

    /// Unplugged while streaming, then plugged in again: the source resumes on the same
    /// physical camera (same uniqueID) and the consumer gets frames again.
    func testResumeWhenTheSameCameraComesBack() async throws {
        let node = try Rig.loadVivid("n_devs=1")[0]
        let device = try CaptureDevice(path: node)
        let source = CameraSource(device: device, request: FormatRequest(pixelFormat: .yuyv, size: .vga))
        let log = LogRecorder()
        source.logger = log.logger(label: "app.camera")
        let first = FrameRecorder(target: 3)
        source.consumer = first
        try source.start()
        let firstFrames = await first.wait(seconds: 20)
        XCTAssertTrue(firstFrames)
        try Rig.setControl(node, "disconnect=1")
        let heardStop = await first.waitForStop(seconds: 10)
        XCTAssertTrue(heardStop, "the consumer hears the disconnect within 10 s")
        XCTAssertEqual(first.stopError?.code, .disconnected)
        // The failed run closed the device, so vivid can go and come back.
        try Rig.run("modprobe -r vivid")
        let none = try await source.resumeWhenReconnected(timeout: .milliseconds(500))
        XCTAssertFalse(none, "nothing to resume on while the camera is away")
        let waits = log.lines.filter { $0.contains("camera=\(device.uniqueID)") }
        XCTAssertEqual(waits.count, 2, "the wait and that it gave up: \(log.lines)")
        XCTAssertTrue(waits.first?.hasPrefix("info: waiting for the camera to come back camera=\(device.uniqueID)") ?? false, "\(waits)")
        XCTAssertTrue(waits.last?.hasPrefix("warning: camera did not come back in time camera=\(device.uniqueID)") ?? false, "\(waits)")
        let again = FrameRecorder(target: 3)
        source.consumer = again
        let resumer = Task { try await source.resumeWhenReconnected(timeout: .seconds(20)) }
        try await Task.sleep(for: .milliseconds(300))
        try Rig.run("modprobe vivid n_devs=1")
        let resumed = try await resumer.value
        XCTAssertTrue(resumed)
        let back = log.lines.filter { $0.contains("camera=\(device.uniqueID)") }.dropFirst(2)
        XCTAssertEqual(back.count, 2, "the second wait, then where it resumed: \(log.lines)")
        XCTAssertTrue(back.last?.hasPrefix("info: camera came back; capturing again") ?? false, "\(back)")
        XCTAssertTrue(back.last?.contains("device=\(source.device.path)") ?? false, "where it resumed: \(back)")
        let framesAgain = await again.wait(seconds: 20)
        XCTAssertTrue(framesAgain, "frames again after the camera came back")
        XCTAssertEqual(source.device.uniqueID, device.uniqueID)
        XCTAssertTrue(source.isCapturing)
        source.release()
    }

    /// A DRM card coming and going (bochs, the rig's std display). Connector hotplug (a
    /// `changed` event with HOTPLUG=1) cannot be caused in this rig: bochs and virtio-gpu only
    /// send it when QEMU changes the display.
    func testScreenCardAddedAndRemoved() throws {
        Rig.shell("modprobe -r bochs")
        let monitor = try DeviceMonitor(kinds: [.screen])
        let events = Collector(monitor)
        try Rig.run("modprobe bochs")
        let added = try XCTUnwrap(events.wait("screen added") { $0.kind == .screen && $0.action == .added })
        let card = try XCTUnwrap(added.device.cardNumber)
        XCTAssertEqual(added.device.devnode, "/dev/dri/card\(card)")
        XCTAssertEqual(added.device.name, "bochs-drm", "the DRM driver")
        XCTAssertTrue(added.uniqueID.hasPrefix("drm:pci0000:00/"), added.uniqueID)
        // The event carries the card's screens as screen enumeration describes them.
        XCTAssertEqual(added.screens.map(\.uniqueID), ScreenSource.scan().devices.filter { $0.card == added.device.devnode }.map(\.uniqueID))
        XCTAssertEqual(added.screens.first?.name, "Virtual-1")
        XCTAssertFalse(events.all.contains { $0.device.sysname.hasPrefix("renderD") || $0.device.sysname.contains("-") },
                       "only cards, not connectors or render nodes")
        try Rig.run("modprobe -r bochs")
        let removed = try XCTUnwrap(events.wait("screen removed") { $0.kind == .screen && $0.action == .removed })
        XCTAssertEqual(removed.uniqueID, added.uniqueID)
        XCTAssertEqual(removed.device.name, "bochs-drm", "remembered from when it came")
        XCTAssertEqual(removed.screens.map(\.uniqueID), added.screens.map(\.uniqueID), "remembered screens")
        monitor.stop()
    }

    func testMonitorCommandPrintsJSONLines() throws {
        Rig.shell("modprobe -r snd-aloop")
        let out = "\(Rig.scratch)/monitor.json", err = "\(Rig.scratch)/monitor.err"
        let script = """
            \(Rig.tool) monitor --json --kinds sound --count 2 --timeout 120 >\(out) 2>\(err) &
            pid=$!
            for i in $(seq 1200); do grep -q listening \(err) && break; sleep 0.05; done
            modprobe snd-aloop && sleep 0.5
            # The monitor reads the new card's PCMs; until it lets go, the module is busy.
            for i in $(seq 200); do modprobe -r snd-aloop 2>/dev/null && break; sleep 0.05; done
            wait $pid
            """
        let (status, _, errors) = Rig.shell(script)
        XCTAssertEqual(status, 0, errors)
        let lines = try String(contentsOfFile: out, encoding: .utf8).split(separator: "\n")
        XCTAssertEqual(lines.count, 2, "one line per event: \(lines)")
        guard lines.count == 2 else { return }
        let objects = try lines.map { try XCTUnwrap(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]) }
        XCTAssertEqual(objects.map { $0["action"] as? String }, ["added", "removed"])
        XCTAssertEqual(objects.map { $0["kind"] as? String }, ["sound", "sound"])
        XCTAssertEqual(objects.map { $0["name"] as? String }, ["Loopback", "Loopback"])
        XCTAssertEqual(objects[0]["uniqueID"] as? String, objects[1]["uniqueID"] as? String)
        XCTAssertTrue(try String(contentsOfFile: err, encoding: .utf8).contains("kernel events"))
    }
}
