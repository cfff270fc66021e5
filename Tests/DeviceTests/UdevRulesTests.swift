import Foundation
import MediaDevices
import XCTest

/// udev/70-mediadevices.rules in a real systemd-udevd inside the rig (the root is read-only,
/// so the rules go to /run/udev/rules.d, beside the system's own rules): tags, groups, modes
/// and stable names on vivid's, snd-aloop's and vgem's nodes, and the hotplug monitor reading
/// udevd's events instead of the kernel's.
final class UdevRulesTests: XCTestCase {
    override func setUpWithError() throws { try Rig.require() }

    private static let rules = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("udev/70-mediadevices.rules").path

    /// `mode group` of a node, following links.
    private func modeAndGroup(_ path: String) throws -> String {
        try Rig.run("stat -L -c '%a %G' \(path)").trimmingCharacters(in: .whitespacesAndNewlines)
    }

    private func tags(_ path: String) throws -> String {
        try Rig.run("udevadm info -q property -n \(path)").split(separator: "\n").first { $0.hasPrefix("TAGS=") }.map(String.init) ?? ""
    }

    func testRulesInSystemdUdevd() async throws {
        Rig.shell("modprobe -r vivid; modprobe -r snd-aloop; modprobe -r vgem")
        let udevd = try UdevDaemon(rules: [Self.rules])
        defer { udevd.stop() }
        try udevd.trigger(["video4linux", "sound", "drm"])
        XCTAssertEqual(DeviceMonitor.Source.detected, .udev, "udevd's control socket is there")

        let monitor = try DeviceMonitor()
        XCTAssertEqual(monitor.source, .udev)
        let events = HotplugDeviceTests.Collector(monitor)
        try Rig.run("modprobe vivid n_devs=1 && modprobe snd-aloop && modprobe vgem")
        try udevd.waitForLinks(["/dev/v4l/by-path/platform-vivid.0-video-index0", "/dev/mediadevices/camera/platform-vivid.0",
                                "/dev/mediadevices/sound/platform-snd_aloop.0", "/dev/mediadevices/render/platform-vgem"])

        // Cameras: group video, 0660, uaccess, and our stable name.
        let camera = try XCTUnwrap(CaptureDevice.scan().devices.first { $0.driver == "vivid" })
        XCTAssertEqual(try modeAndGroup(camera.path), "660 video")
        let cameraTags = try tags(camera.path)
        XCTAssertTrue(cameraTags.contains(":uaccess:"), cameraTags)
        XCTAssertEqual(try modeAndGroup("/dev/mediadevices/camera/platform-vivid.0"), "660 video")
        XCTAssertEqual(try Rig.run("readlink -f /dev/mediadevices/camera/platform-vivid.0").trimmingCharacters(in: .whitespacesAndNewlines), camera.path)
        XCTAssertTrue(camera.uniqueID.hasPrefix("platform-vivid.0"), "with udevd, the uniqueID is the /dev/v4l/by-path name: \(camera.uniqueID)")

        // Sound: group audio, 0660, uaccess on the control and PCM nodes, and our stable name.
        let control = try Rig.run("readlink -f /dev/mediadevices/sound/platform-snd_aloop.0").trimmingCharacters(in: .whitespacesAndNewlines)
        XCTAssertTrue(control.hasPrefix("/dev/snd/controlC"), control)
        XCTAssertEqual(try modeAndGroup(control), "660 audio")
        XCTAssertTrue(try tags(control).contains(":uaccess:"))
        let pcm = control.replacingOccurrences(of: "controlC", with: "pcmC") + "D0p"
        XCTAssertEqual(try modeAndGroup(pcm), "660 audio")

        // DRM render node (vgem): group render, 0660, uaccess, stable name.
        let render = try Rig.run("readlink -f /dev/mediadevices/render/platform-vgem").trimmingCharacters(in: .whitespacesAndNewlines)
        XCTAssertTrue(render.hasPrefix("/dev/dri/renderD"), render)
        XCTAssertEqual(try modeAndGroup(render), "660 render")
        XCTAssertTrue(try tags(render).contains(":uaccess:"))

        // Nothing world-writable among the nodes the rules touch.
        let open = try Rig.run("find -L /dev/video* /dev/snd /dev/dri /dev/mediadevices -type c -perm -o+w -print")
        XCTAssertEqual(open, "", "world-writable nodes: \(open)")

        // udevd's events carry ID_PATH, so sound cards get a path-based uniqueID, and a camera
        // event the same by-path uniqueID that enumeration gives.
        let soundEvent = await events.wait("sound card added (udev)") { $0.kind == .sound && $0.action == .added }
        let sound = try XCTUnwrap(soundEvent)
        XCTAssertEqual(sound.device.idPath, "platform-snd_aloop.0")
        XCTAssertEqual(sound.uniqueID, "alsa:platform-snd_aloop.0")
        let cameraAddedEvent = await events.wait("camera added (udev)") { $0.kind == .camera && $0.action == .added }
        let cameraAdded = try XCTUnwrap(cameraAddedEvent)
        XCTAssertEqual(cameraAdded.uniqueID, camera.uniqueID)
        print("udev: \(camera.path) \(try modeAndGroup(camera.path)), \(control), \(render); \(events.all.count) udev events")
        monitor.stop()
        try Rig.run("modprobe -r vivid && modprobe -r snd-aloop && modprobe -r vgem && udevadm settle --timeout=60")
    }
}
