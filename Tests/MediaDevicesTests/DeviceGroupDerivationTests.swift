import XCTest
@testable import MediaDevices
@testable import MediaDevicesAudio
@testable import MediaDevicesVideo
@testable import MediaDevicesCore

/// `group`: which physical device a camera node and a sound card belong to, read from sysfs
/// trees laid out as the kernel lays them out (a USB/IP webcam with its microphone, one behind a
/// hub, a PCI capture card, vivid, snd-aloop, v4l2loopback), and a camera's microphones found by it.
final class DeviceGroupDerivationTests: XCTestCase {
    private var sysfs: FakeSysfs!

    override func setUpWithError() throws { sysfs = try FakeSysfs() }

    override func tearDownWithError() throws { sysfs.remove() }

    /// The class device `devices/PARENT/CLASS/NAME` with its `device` link to PARENT (none when
    /// `parent` is under `virtual/`), its `class/CLASS/NAME` link and, for a character device
    /// `number` (`81:0`), its `dev/char` link.
    private func classDevice(_ subclass: String, _ name: String, under parent: String, number: String? = nil) throws {
        let folder = "devices/\(parent)/\(subclass)/\(name)"
        try sysfs.folder(folder)
        if !parent.hasPrefix("virtual") { try sysfs.link("\(folder)/device", to: "../../../\((parent as NSString).lastPathComponent)") }
        try sysfs.link("class/\(subclass)/\(name)", to: "\(sysfs.root)/\(folder)")
        if let number { try sysfs.link("dev/char/\(number)", to: "\(sysfs.root)/\(folder)") }
    }

    /// A USB device at `devices/PATH` on bus `bus`, port path `ports` (the kernel's `busnum` and
    /// `devpath`), with its root hub's attributes above it.
    private func usbDevice(_ path: String, bus: Int, ports: String) throws {
        try sysfs.write("\(bus)\n", "devices/\(path)/busnum")
        try sysfs.write("\(ports)\n", "devices/\(path)/devpath")
        try sysfs.write("2\n", "devices/\(path)/devnum")
        let rootHub = (path as NSString).deletingLastPathComponent
        try sysfs.write("\(bus)\n", "devices/\(rootHub)/busnum")
        try sysfs.write("0\n", "devices/\(rootHub)/devpath")
    }

    /// A device on `bus` (`platform`, `pci`) at `devices/PATH`, its `subsystem` link made.
    private func busDevice(_ path: String, bus: String) throws {
        try sysfs.folder("bus/\(bus)")
        try sysfs.link("devices/\(path)/subsystem", to: "\(sysfs.root)/bus/\(bus)")
    }

    /// A webcam over USB/IP: its video interface (3-1:1.0) and its audio interfaces (3-1:1.3) are
    /// one USB device, so the V4L2 node and the sound card have one group, named by bus and port.
    func testAWebcamsCameraAndSoundCardShareTheUSBDevicesGroup() throws {
        try usbDevice("platform/vhci_hcd.0/usb3/3-1", bus: 3, ports: "1")
        try classDevice("video4linux", "video0", under: "platform/vhci_hcd.0/usb3/3-1/3-1:1.0", number: "81:0")
        try classDevice("video4linux", "video1", under: "platform/vhci_hcd.0/usb3/3-1/3-1:1.0", number: "81:1")
        try classDevice("sound", "card1", under: "platform/vhci_hcd.0/usb3/3-1/3-1:1.3")
        XCTAssertEqual(DeviceGroup.of(classDevice: "\(sysfs.root)/dev/char/81:0", sysfs: sysfs.root), "usb:3-1")
        XCTAssertEqual(DeviceGroup.of(classDevice: "\(sysfs.root)/dev/char/81:1", sysfs: sysfs.root), "usb:3-1")
        XCTAssertEqual(DeviceGroup.of(soundCard: 1, sysfs: sysfs.root), "usb:3-1")
        XCTAssertNil(DeviceGroup.of(soundCard: 2, sysfs: sysfs.root), "no such card")
    }

    /// Behind a hub the port path has every port on the way; a second webcam on the hub's next
    /// port is another group, and its card is not the first webcam's.
    func testWebcamsBehindAHubAreGroupedByTheirOwnPorts() throws {
        try usbDevice("pci0000:00/0000:00:14.0/usb1/1-1/1-1.4", bus: 1, ports: "1.4")
        try sysfs.write("1\n", "devices/pci0000:00/0000:00:14.0/usb1/1-1/busnum")
        try sysfs.write("1\n", "devices/pci0000:00/0000:00:14.0/usb1/1-1/devpath")
        try classDevice("video4linux", "video2", under: "pci0000:00/0000:00:14.0/usb1/1-1/1-1.4/1-1.4:1.0", number: "81:2")
        try classDevice("sound", "card3", under: "pci0000:00/0000:00:14.0/usb1/1-1/1-1.4/1-1.4:1.2")
        try sysfs.write("1\n", "devices/pci0000:00/0000:00:14.0/usb1/1-1/1-1.5/busnum")
        try sysfs.write("1.5\n", "devices/pci0000:00/0000:00:14.0/usb1/1-1/1-1.5/devpath")
        try classDevice("sound", "card4", under: "pci0000:00/0000:00:14.0/usb1/1-1/1-1.5/1-1.5:1.2")
        XCTAssertEqual(DeviceGroup.of(classDevice: "\(sysfs.root)/dev/char/81:2", sysfs: sysfs.root), "usb:1-1.4")
        XCTAssertEqual(DeviceGroup.of(soundCard: 3, sysfs: sysfs.root), "usb:1-1.4")
        XCTAssertEqual(DeviceGroup.of(soundCard: 4, sysfs: sysfs.root), "usb:1-1.5")
    }

    /// vivid and snd-aloop are platform devices of their own: each has a group, never the
    /// other's; v4l2loopback has no parent, so no group.
    func testVividAndSndAloopHaveGroupsOfTheirOwnAndV4L2LoopbackNone() throws {
        try busDevice("platform/vivid.0", bus: "platform")
        try busDevice("platform/snd_aloop.0", bus: "platform")
        try classDevice("video4linux", "video3", under: "platform/vivid.0", number: "81:3")
        try classDevice("sound", "card0", under: "platform/snd_aloop.0")
        try classDevice("video4linux", "video10", under: "virtual", number: "81:10")
        XCTAssertEqual(DeviceGroup.of(classDevice: "\(sysfs.root)/dev/char/81:3", sysfs: sysfs.root), "platform:vivid.0")
        XCTAssertEqual(DeviceGroup.of(soundCard: 0, sysfs: sysfs.root), "platform:snd_aloop.0")
        XCTAssertNil(DeviceGroup.of(classDevice: "\(sysfs.root)/dev/char/81:10", sysfs: sysfs.root))
    }

    /// A PCI capture card's video (function 0) and sound (function 1, as cx88-alsa binds) are one
    /// card: the slot is the group. The sound card of another slot is not in it.
    func testAPCICaptureCardsFunctionsShareTheSlot() throws {
        try busDevice("pci0000:00/0000:00:1c.0/0000:03:00.0", bus: "pci")
        try busDevice("pci0000:00/0000:00:1c.0/0000:03:00.1", bus: "pci")
        try busDevice("pci0000:00/0000:00:1f.3", bus: "pci")
        try classDevice("video4linux", "video4", under: "pci0000:00/0000:00:1c.0/0000:03:00.0", number: "81:4")
        try classDevice("sound", "card2", under: "pci0000:00/0000:00:1c.0/0000:03:00.1")
        try classDevice("sound", "card5", under: "pci0000:00/0000:00:1f.3")
        XCTAssertEqual(DeviceGroup.of(classDevice: "\(sysfs.root)/dev/char/81:4", sysfs: sysfs.root), "pci:0000:03:00")
        XCTAssertEqual(DeviceGroup.of(soundCard: 2, sysfs: sysfs.root), "pci:0000:03:00")
        XCTAssertEqual(DeviceGroup.of(soundCard: 5, sysfs: sysfs.root), "pci:0000:00:1f")
    }

    /// A node is found by its device number, whatever its name: a file that is not a character
    /// device has no group; glibc's `major`/`minor` split, small and large numbers.
    func testCharacterDevicesAreFoundByNumber() throws {
        try sysfs.write("not a device", "plain")
        XCTAssertNil(DeviceGroup.of(characterDevice: "\(sysfs.root)/plain", sysfs: sysfs.root))
        XCTAssertNil(DeviceGroup.of(characterDevice: "\(sysfs.root)/missing", sysfs: sysfs.root))
        XCTAssertTrue(DeviceGroup.deviceNumbers(0x5103) == (81, 3))
        // makedev(511, 300000): minor's low byte, then its high bits above the major's 12.
        let large: UInt64 = (300000 & 0xff) | ((511 & 0xfff) << 8) | ((300000 & ~0xff) << 12)
        XCTAssertTrue(DeviceGroup.deviceNumbers(large) == (511, 300000))
        // /dev/null is 1:3 everywhere.
        var info = stat()
        XCTAssertEqual(stat("/dev/null", &info), 0)
        XCTAssertTrue(DeviceGroup.deviceNumbers(UInt64(info.st_rdev)) == (1, 3))
    }

    private func camera(group: String?) -> CaptureDevice {
        CaptureDevice(path: "/dev/video0", name: "Webcam", driver: "uvcvideo", busInfo: "usb-vhci_hcd.0-1", capabilities: 1,
                      uniqueID: "usb-Webcam-video-index0", position: .external, isMultiplanar: false, routes: [.v4l2(path: "/dev/video0")],
                      group: group)
    }

    private func audio(_ name: String, _ direction: AudioDevice.Direction, group: String?, backend: AudioDevice.Backend = .alsa) -> AudioDevice {
        AudioDevice(name: name, description: name, direction: direction, isDefault: false, backend: backend, group: group)
    }

    /// A camera's microphones: the inputs of its group, every route to them in the list's order;
    /// not its group's outputs, not another group's inputs; and none for a camera without a
    /// group, even beside devices without one.
    func testACamerasMicrophonesAreTheInputsOfItsGroup() {
        let devices = [
            audio("default", .input, group: nil),
            audio("hw:CARD=Loopback,DEV=0", .input, group: "platform:snd_aloop.0"),
            audio("hw:CARD=Webcam,DEV=0", .input, group: "usb:3-1"),
            audio("plughw:CARD=Webcam,DEV=0", .input, group: "usb:3-1"),
            audio("hw:CARD=Webcam,DEV=0", .output, group: "usb:3-1"),
            audio("alsa_input.usb-Webcam-02.mono-fallback", .input, group: "usb:3-1", backend: .pulse),
            audio("hw:CARD=Other,DEV=0", .input, group: "usb:3-2"),
        ]
        XCTAssertEqual(camera(group: "usb:3-1").microphones(among: devices).map(\.uniqueID),
                       ["alsa:hw:CARD=Webcam,DEV=0", "alsa:plughw:CARD=Webcam,DEV=0", "pulse:alsa_input.usb-Webcam-02.mono-fallback"])
        XCTAssertEqual(camera(group: nil).microphones(among: devices), [])
        XCTAssertEqual(camera(group: "platform:vivid.0").microphones(among: devices), [])
    }
}
