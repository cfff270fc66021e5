import XCTest
@testable import MediaDevicesVideo
@testable import MediaDevicesCore

/// A UVC camera's libcamera camera id read from sysfs as libcamera's UVC pipeline handler makes
/// it, and the camera WirePlumber 0.4 offers twice (V4L2 node and libcamera node) listed once.
/// On trees laid out as the kernel lays out sysfs for a laptop's webcam (ACPI), a webcam behind
/// a hub on a devicetree board, and a USB/IP camera (no firmware node). The rig cannot show a
/// real UVC libcamera node: its USB cameras are USB/IP ones, which libcamera refuses.
final class LibcameraUVCNamesTests: XCTestCase {
    private var sysfs: FakeSysfs!
    private var root: String { sysfs.root }

    override func setUpWithError() throws { sysfs = try FakeSysfs() }

    override func tearDownWithError() throws { sysfs.remove() }

    private func write(_ text: String, _ path: String) throws { try sysfs.write(text, path) }

    private func link(_ path: String, to target: String) throws { try sysfs.link(path, to: target) }

    /// A USB device at `device` (under `devices/`) with interface `interface` holding V4L2 nodes
    /// `nodes`, each with its class link and its `device` link, as the kernel makes them.
    private func camera(_ device: String, interface: String, vendor: String, product: String, nodes: [String]) throws {
        try write("\(vendor)\n", "devices/\(device)/idVendor")
        try write("\(product)\n", "devices/\(device)/idProduct")
        for node in nodes {
            let classDevice = "devices/\(device)/\(interface)/video4linux/\(node)"
            try FileManager.default.createDirectory(atPath: "\(root)/\(classDevice)", withIntermediateDirectories: true)
            try link("\(classDevice)/device", to: "../../../\(interface)")
            try link("class/video4linux/\(node)", to: "\(root)/\(classDevice)")
        }
    }

    /// A laptop's webcam: the port has an ACPI node below the controller's, and the port's is
    /// the one libcamera takes (the nearest); the bus number is left out, the ids kept as sysfs
    /// writes them.
    func testALaptopWebcamIsNamedByItsPortsACPINode() throws {
        try write("\\_SB_.PCI0.XHC_\n", "devices/pci0000:00/0000:00:14.0/firmware_node/path")
        try write("\\_SB_.PCI0.XHC_.RHUB.HS08\n", "devices/pci0000:00/0000:00:14.0/usb3/3-8/firmware_node/path")
        try camera("pci0000:00/0000:00:14.0/usb3/3-8", interface: "3-8:1.0", vendor: "0c45", product: "6366", nodes: ["video0", "video1"])
        let names = LibcameraUVCNames(sysfs: root)
        XCTAssertEqual(names.cameraID(ofVideoNode: "/dev/video0"), "\\_SB_.PCI0.XHC_.RHUB.HS08-8:1.0-0c45:6366")
        XCTAssertEqual(names.cameraID(ofVideoNode: "/dev/video1"), "\\_SB_.PCI0.XHC_.RHUB.HS08-8:1.0-0c45:6366")
        XCTAssertEqual(names.videoNodes(ofCameraID: "\\_SB_.PCI0.XHC_.RHUB.HS08-8:1.0-0c45:6366"), ["/dev/video0", "/dev/video1"])
        XCTAssertEqual(names.videoNodes(ofCameraID: "\\_SB_.PCI0.XHC_.RHUB.HS09-9:1.0-0c45:6366"), [])
        XCTAssertNil(names.cameraID(ofVideoNode: "/dev/video7"), "no such node")
    }

    /// Behind a hub on a devicetree board: no firmware node on the hub's ports, so the
    /// controller's devicetree path (its `of_node`, less the devicetree folder).
    func testAWebcamBehindAHubIsNamedByItsControllersDevicetreeNode() throws {
        try FileManager.default.createDirectory(atPath: "\(root)/firmware/devicetree/base/soc/usb@7e980000", withIntermediateDirectories: true)
        try link("devices/platform/soc/fe980000.usb/of_node", to: "\(root)/firmware/devicetree/base/soc/usb@7e980000")
        try camera("platform/soc/fe980000.usb/usb1/1-1/1-1.3", interface: "1-1.3:1.0", vendor: "046d", product: "0825", nodes: ["video2"])
        XCTAssertEqual(LibcameraUVCNames(sysfs: root).cameraID(ofVideoNode: "/dev/video2"), "/base/soc/usb@7e980000-1.3:1.0-046d:0825")
    }

    /// A USB/IP camera (vhci_hcd is a platform device without a firmware node): no id, as
    /// libcamera finds none ("Can not find controller ID").
    func testACameraWithoutAFirmwareNodeHasNoID() throws {
        try camera("platform/vhci_hcd.0/usb3/3-1", interface: "3-1:1.0", vendor: "1d6b", product: "0102", nodes: ["video8"])
        XCTAssertNil(LibcameraUVCNames(sysfs: root).cameraID(ofVideoNode: "/dev/video8"))
    }

    private func node(_ id: UInt32, _ properties: [String: String]) -> PipeWireCameraNode {
        PipeWireCameraNode(id: id, serial: UInt64(id) + 100, properties: properties, formats: [], givesFrameRates: false, unmappedFormats: [])
    }

    /// WirePlumber 0.4's two nodes of one UVC webcam are one camera with both routes, the V4L2
    /// node's first, whichever order the session lists them in; a libcamera camera that is not
    /// a UVC one (vimc) stays a camera of its own.
    func testAUVCCamerasLibcameraNodeJoinsItsV4L2Device() throws {
        try write("\\_SB_.PCI0.XHC_.RHUB.HS08\n", "devices/pci0000:00/0000:00:14.0/usb3/3-8/firmware_node/path")
        try camera("pci0000:00/0000:00:14.0/usb3/3-8", interface: "3-8:1.0", vendor: "0c45", product: "6366", nodes: ["video0", "video1"])
        let names = LibcameraUVCNames(sysfs: root)
        let libcamera = node(60, ["node.name": "libcamera_input._SB_.PCI0.XHC_.RHUB.HS08-8_1.0-0c45_6366",
                                  "api.libcamera.path": "\\_SB_.PCI0.XHC_.RHUB.HS08-8:1.0-0c45:6366"])
        let v4l2 = node(61, ["node.name": "v4l2_input.pci-0000_00_14.0-usb-0_8_1.0", "api.v4l2.path": "/dev/video0",
                             "api.v4l2.cap.driver": "uvcvideo", "api.v4l2.cap.bus_info": "usb-0000:00:14.0-8",
                             "api.v4l2.cap.card": "Integrated Camera"])
        let vimc = node(62, ["node.name": "libcamera_input.platform_vimc.0_Sensor_B", "api.libcamera.path": "platform/vimc.0 Sensor B"])
        let direct = CaptureDevice(path: "/dev/video0", name: "Integrated Camera", driver: "uvcvideo", busInfo: "usb-0000:00:14.0-8",
                                   capabilities: 1, uniqueID: "usb-Sonix_Integrated_Camera-video-index0", position: .unknown,
                                   isMultiplanar: false, routes: [.v4l2(path: "/dev/video0")])
        let merged = CaptureDevice.merging([direct], [libcamera, vimc, v4l2], stableLink: { _ in nil }, libcamera: names)
        XCTAssertEqual(merged.map(\.uniqueID), ["usb-Sonix_Integrated_Camera-video-index0", "libcamera:platform/vimc.0 Sensor B"])
        XCTAssertEqual(merged[0].backends, [.v4l2, .pipewire])
        XCTAssertEqual(merged[0].pipeWireNodes.map(\.id), [61, 60])
        XCTAssertEqual(merged[1].pipeWireNodes.map(\.id), [62])

        // Listed through PipeWire alone (this process may not open the device): one camera, by
        // the identifier the V4L2 node gives it, which the libcamera node alone also gets.
        let link: (String) -> String? = { $0 == "/dev/video0" ? "usb-Sonix_Integrated_Camera-video-index0" : nil }
        let pipeWireOnly = CaptureDevice.merging([], [libcamera, v4l2], stableLink: link, libcamera: names)
        XCTAssertEqual(pipeWireOnly.map(\.uniqueID), ["usb-Sonix_Integrated_Camera-video-index0"])
        XCTAssertEqual(pipeWireOnly[0].pipeWireNodes.map(\.id), [61, 60])
        XCTAssertEqual(CaptureDevice.identifier(of: libcamera, stableLink: link, libcamera: names), "usb-Sonix_Integrated_Camera-video-index0")

        // Without the V4L2 device in sysfs (another machine's id), the libcamera node is its own camera.
        let elsewhere = CaptureDevice.merging([direct], [node(63, ["node.name": "libcamera_input.x",
                                                                  "api.libcamera.path": "\\_SB_.PCI0.XHC_.RHUB.HS01-1:1.0-0c45:6366"])],
                                              stableLink: { _ in nil }, libcamera: names)
        XCTAssertEqual(elsewhere.map(\.uniqueID), ["usb-Sonix_Integrated_Camera-video-index0", "libcamera:\\_SB_.PCI0.XHC_.RHUB.HS01-1:1.0-0c45:6366"])
    }
}
