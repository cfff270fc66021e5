import CPipeWire
import XCTest
@testable import MediaDevices
@testable import MediaDevicesAudio
@testable import MediaDevicesVideo
@testable import MediaDevicesCore

/// PipeWire camera nodes as MediaDevices lists them: EnumFormat entries into `CaptureFormat`s,
/// and nodes merged into the V4L2 devices they wrap.
final class PipeWireCameraModelTests: XCTestCase {
    private func entry(_ name: String, subtype: cpw_subtype = CPW_SUBTYPE_RAW, fourcc: FourCC?, width: UInt32, height: UInt32,
                       rates: [(UInt32, UInt32)] = [], range: Bool = false) -> cpw_format_entry {
        var entry = cpw_format_entry()
        entry.subtype = subtype.rawValue
        entry.fourcc = fourcc?.rawValue ?? 0
        withUnsafeMutableBytes(of: &entry.format_name) { raw in
            for (i, byte) in name.utf8.prefix(raw.count - 1).enumerated() { raw[i] = byte }
        }
        entry.size_kind = CPW_SIZE_FIXED.rawValue
        entry.width = width
        entry.height = height
        entry.rate_kind = rates.isEmpty ? CPW_RATES_NONE.rawValue : (range ? CPW_RATES_RANGE : CPW_RATES_LIST).rawValue
        entry.rate_count = UInt32(rates.count)
        withUnsafeMutableBytes(of: &entry.rates) { raw in
            let slots = raw.bindMemory(to: cpw_rate.self)
            for (i, rate) in rates.enumerated() { slots[i] = cpw_rate(num: rate.0, denom: rate.1) }
        }
        return entry
    }

    func testEntriesGroupByPixelFormatWithSizesAndRatesInNodeOrder() {
        let formats = PipeWireFormats([
            entry("YUY2", fourcc: "YUYV", width: 640, height: 480, rates: [(30, 1), (15, 1)]),
            entry("mjpg", subtype: CPW_SUBTYPE_MJPG, fourcc: "MJPG", width: 1280, height: 720, rates: [(1, 1), (60, 1)], range: true),
            entry("YUY2", fourcc: "YUYV", width: 320, height: 240, rates: [(30, 1)]),
            entry("YUY2", fourcc: "YUYV", width: 640, height: 480, rates: [(30, 1), (15, 1)]),  // repeated: listed once
            entry("v210", fourcc: nil, width: 640, height: 480, rates: [(30, 1)]),
        ])
        XCTAssertEqual(formats.formats.map(\.pixelFormat.fourCC), ["YUYV", "MJPG"])
        XCTAssertEqual(formats.formats[0].frameSizes.map(\.sizes), [.discrete(Size(width: 640, height: 480)), .discrete(Size(width: 320, height: 240))])
        XCTAssertEqual(formats.formats[0].frameSizes[0].frameRateRanges, [FrameRateRange(discrete: FrameRate(30)), FrameRateRange(discrete: FrameRate(15))])
        XCTAssertFalse(formats.formats[0].isCompressed)
        XCTAssertTrue(formats.formats[1].isCompressed)
        let range = formats.formats[1].frameSizes[0].frameRateRanges
        XCTAssertEqual(range.map(\.kind), [.continuous])
        XCTAssertEqual(range.first?.minFrameRate, FrameRate(1))
        XCTAssertEqual(range.first?.maxFrameRate, FrameRate(60))
        XCTAssertTrue(formats.givesFrameRates)
        XCTAssertEqual(formats.unmapped, ["v210"])
    }

    /// libcamera nodes in PipeWire 0.3.65 give no rates: sizes without rates, and the node says so.
    func testEntriesWithoutRatesSayTheNodeGivesNone() {
        let formats = PipeWireFormats([entry("BGR", fourcc: "BGR3", width: 1278, height: 1080), entry("BGR", fourcc: "BGR3", width: 636, height: 480)])
        XCTAssertFalse(formats.givesFrameRates)
        XCTAssertEqual(formats.formats.count, 1)
        XCTAssertEqual(formats.formats[0].frameSizes.map(\.frameRateRanges), [[], []])
    }

    func testSPAFormatsMapToTheV4L2FourCCsOfTheSameBytes() {
        // SPA names bytes in memory order, V4L2 the little-endian word: BGRx is XR24, RGBx XB24.
        XCTAssertEqual(FourCC(rawValue: cpw_fourcc_of_spa_format(cpw_spa_format_named("YUY2"))), "YUYV")
        XCTAssertEqual(FourCC(rawValue: cpw_fourcc_of_spa_format(cpw_spa_format_named("BGRx"))), "XR24")
        XCTAssertEqual(FourCC(rawValue: cpw_fourcc_of_spa_format(cpw_spa_format_named("I420"))), "YU12")
        XCTAssertEqual(cpw_fourcc_of_spa_format(cpw_spa_format_named("v210")), 0)
        XCTAssertNotEqual(cpw_spa_format_named("v210"), 0)
        XCTAssertEqual(cpw_spa_format_named("no such format"), 0)
    }

    /// PipeWire before 1.1.81 names libcamera's RGB formats by the SPA format of the same name,
    /// whose bytes are in the reverse order: such entries are listed as the bytes they hold.
    func testLibcameraRGBLabelsOfOldServersAreReversed() {
        XCTAssertTrue(PipeWireFormats.libcameraLabelsRGBReversed(serverVersion: "0.3.65"))
        XCTAssertTrue(PipeWireFormats.libcameraLabelsRGBReversed(serverVersion: "1.0.5"))
        XCTAssertTrue(PipeWireFormats.libcameraLabelsRGBReversed(serverVersion: ""), "unknown: as an old one")
        XCTAssertFalse(PipeWireFormats.libcameraLabelsRGBReversed(serverVersion: "1.1.81"))
        XCTAssertFalse(PipeWireFormats.libcameraLabelsRGBReversed(serverVersion: "1.2.7"))
        let bgr = entry("BGR", fourcc: "BGR3", width: 640, height: 480)
        var spaBGR = bgr
        spaBGR.spa_format = cpw_spa_format_named("BGR")
        XCTAssertEqual(FourCC(rawValue: PipeWireFormats.byteReversed(spaBGR).fourcc), "RGB3")
        XCTAssertEqual(PipeWireFormats.byteReversed(spaBGR).spa_format, spaBGR.spa_format, "the node's own name is asked for")
        var spaBGRx = entry("BGRx", fourcc: "XR24", width: 640, height: 480)
        spaBGRx.spa_format = cpw_spa_format_named("BGRx")
        XCTAssertEqual(FourCC(rawValue: PipeWireFormats.byteReversed(spaBGRx).fourcc), "BX24")
        var yuyv = entry("YUY2", fourcc: "YUYV", width: 640, height: 480)
        yuyv.spa_format = cpw_spa_format_named("YUY2")
        XCTAssertEqual(FourCC(rawValue: PipeWireFormats.byteReversed(yuyv).fourcc), "YUYV", "not an RGB format: unchanged")
        var node = node(9, ["node.name": "libcamera_input.x", "api.libcamera.path": "x"])
        XCTAssertEqual(node.spaFormat(of: .rgb24), cpw_spa_format_named("RGB"))
        node.labelsRGBReversed = true
        XCTAssertEqual(node.spaFormat(of: .rgb24), cpw_spa_format_named("BGR"))
    }

    private func node(_ id: UInt32, _ properties: [String: String]) -> PipeWireCameraNode {
        PipeWireCameraNode(id: id, serial: UInt64(id) + 100, properties: properties, formats: [], givesFrameRates: false, unmappedFormats: [])
    }

    private func v4l2(_ path: String, uniqueID: String) -> CaptureDevice {
        CaptureDevice(path: path, name: "vivid", driver: "vivid", busInfo: "platform:vivid-000", capabilities: 1,
                      uniqueID: uniqueID, position: .unknown, isMultiplanar: false, routes: [.v4l2(path: path)])
    }

    func testANodeWrappingAV4L2DeviceIsThatDeviceWithBothRoutes() {
        let direct = [v4l2("/dev/video0", uniqueID: "v4l2:vivid:platform:vivid-000")]
        let wrapping = node(36, ["node.name": "v4l2_input.vivid", "api.v4l2.path": "/dev/video0",
                                 "api.v4l2.cap.driver": "vivid", "api.v4l2.cap.bus_info": "platform:vivid-000"])
        let merged = CaptureDevice.merging(direct, [wrapping], stableLink: { _ in nil })
        XCTAssertEqual(merged.count, 1)
        XCTAssertEqual(merged[0].uniqueID, "v4l2:vivid:platform:vivid-000")
        XCTAssertEqual(merged[0].backends, [.v4l2, .pipewire])
        XCTAssertEqual(merged[0].pipeWireNodes.map(\.id), [36])
    }

    /// A node whose device this process cannot open gets the identifier V4L2 would give it.
    func testANodeWithoutItsV4L2DeviceGetsTheIdentifierV4L2WouldGive() {
        let props = ["node.name": "v4l2_input.cam", "api.v4l2.path": "/dev/video7", "api.v4l2.cap.driver": "uvcvideo",
                     "api.v4l2.cap.bus_info": "usb-0000:00:14.0-1", "api.v4l2.cap.card": "Integrated Camera"]
        let merged = CaptureDevice.merging([], [node(40, props)], stableLink: { $0 == "/dev/video7" ? "usb-Vendor_Cam-video-index0" : nil })
        XCTAssertEqual(merged.map(\.uniqueID), ["usb-Vendor_Cam-video-index0"])
        XCTAssertEqual(merged[0].name, "Integrated Camera")
        XCTAssertEqual(merged[0].backends, [.pipewire])
        let plain = CaptureDevice.merging([], [node(40, props)], stableLink: { _ in nil })
        XCTAssertEqual(plain.map(\.uniqueID), ["v4l2:uvcvideo:usb-0000:00:14.0-1"])
    }

    func testLibcameraNodesAreKeyedByTheirCameraIDAndOfferedOnce() {
        let props = ["node.name": "libcamera_input.platform_vimc.0_Sensor_B", "api.libcamera.path": "platform/vimc.0 Sensor B",
                     "node.description": "Sensor B (libcamera)"]
        let merged = CaptureDevice.merging([v4l2("/dev/video0", uniqueID: "v4l2:vivid:platform:vivid-000")],
                                           [node(50, props), node(51, props)], stableLink: { _ in nil })
        XCTAssertEqual(merged.map(\.uniqueID), ["v4l2:vivid:platform:vivid-000", "libcamera:platform/vimc.0 Sensor B"])
        XCTAssertEqual(merged[1].path, "pipewire:libcamera_input.platform_vimc.0_Sensor_B")
        XCTAssertEqual(merged[1].driver, "libcamera")
        XCTAssertEqual(merged[1].pipeWireNodes.map(\.id), [50, 51])
    }

    /// A camera only PipeWire offers answers formats from its node and controls from the session
    /// (read again there, for their current values), never from a device file: with no session,
    /// asking for its controls is PipeWire's `.notFound`, not a failed `open` of a path.
    func testAPipeWireOnlyCameraListsItsNodesFormatsAndControls() throws {
        let brightness = CameraControl(id: 0x20001, name: "Brightness", type: .integer, minimum: 0, maximum: 255, step: 1,
                                       defaultValue: 128, flags: ControlFlags(rawValue: 0), value: .none)
        let format = CaptureFormat(pixelFormat: .yuyv, description: "YUY2 (PipeWire)", isCompressed: false, isEmulated: false,
                                   frameSizes: [FrameSizeOption(sizes: .discrete(.vga), frameRateRanges: [])])
        let node = PipeWireCameraNode(id: 7, serial: 70, properties: ["node.name": "libcamera_input.x", "api.libcamera.path": "x"],
                                      formats: [format], givesFrameRates: false, unmappedFormats: [], controls: [brightness])
        let device = try XCTUnwrap(CaptureDevice.merging([], [node], stableLink: { _ in nil }).first)
        XCTAssertEqual(try device.supportedFormats(), [format])
        let saved = getenv("PIPEWIRE_REMOTE").map { String(cString: $0) }
        setenv("PIPEWIRE_REMOTE", NSTemporaryDirectory() + "no-such-pipewire-\(getpid())", 1)
        defer { if let saved { setenv("PIPEWIRE_REMOTE", saved, 1) } else { unsetenv("PIPEWIRE_REMOTE") } }
        XCTAssertThrowsError(try device.controls()) { error in
            let error = error as? MediaDevicesError
            XCTAssertEqual(error?.code, .notFound, "\(String(describing: error))")
            XCTAssertEqual(error?.operation, "pw_context_connect", "asked the session, not a device file: \(String(describing: error))")
        }
        _ = brightness
    }
}
