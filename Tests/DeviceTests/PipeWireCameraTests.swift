import Foundation
import MediaDevices
import XCTest

/// Issue 34: cameras through PipeWire. vivid → WirePlumber's V4L2 monitor → a PipeWire camera
/// node, listed by MediaDevices as the same camera as the V4L2 device, with the formats the
/// node's EnumFormat params give (checked against pw-cli).
final class PipeWireCameraTests: XCTestCase {
    override func setUpWithError() throws { try Rig.require() }

    func testVividNodeIsTheV4L2CameraWithBothRoutesAndPwCliFormats() throws {
        let path = try Rig.loadVivid("node_types=1")[0]
        let session = try CameraSession(name: "formats", devices: [path])
        defer { session.stop() }
        let node = try XCTUnwrap(session.nodes[path])
        print(String(format: "figure: camera session (dbus-daemon, pipewire, wireplumber) offered %@ as node %u %.1f s after start", path, node.id, session.seconds))

        let direct = try CaptureDevice(path: path)
        let devices = CaptureDevice.scan(backends: [.v4l2, .pipewire]).devices
        let camera = try XCTUnwrap(devices.first { $0.path == path }, "\(devices)")
        XCTAssertEqual(camera.uniqueID, direct.uniqueID)
        XCTAssertEqual(camera.backends, [.v4l2, .pipewire])
        XCTAssertEqual(devices.filter { $0.uniqueID == direct.uniqueID }.count, 1, "one camera, listed once: \(devices)")
        let listed = try XCTUnwrap(camera.pipeWireNodes.first)
        XCTAssertEqual(listed.id, node.id)
        XCTAssertEqual(listed.serial, node.serial)
        XCTAssertEqual(listed.v4l2Path, path)
        XCTAssertEqual(listed.v4l2Driver, "vivid")
        XCTAssertEqual(listed.displayName, direct.name)
        XCTAssertTrue(listed.givesFrameRates)

        let reference = PipeWireEnumFormat.lines(try session.run("pw-cli enum-params \(node.id) EnumFormat"))
        let ours = PipeWireEnumFormat.lines(listed)
        let unmapped = Set(listed.unmappedFormats)
        let expected = reference.filter { !unmapped.contains(String($0.prefix { $0 != " " })) }
        XCTAssertGreaterThan(ours.count, 100, "vivid offers many formats and sizes: \(ours.sorted().prefix(5))")
        XCTAssertEqual(ours, expected, "missing: \(expected.subtracting(ours).sorted().prefix(8)); extra: \(ours.subtracting(expected).sorted().prefix(8))")
        // Every format pw-cli lists is either ours or named as unmapped (vivid's Bayer formats, say).
        let referenceNames = Set(reference.map { String($0.prefix { $0 != " " }) })
        XCTAssertEqual(referenceNames.subtracting(unmapped), Set(ours.map { String($0.prefix { $0 != " " }) }))
        XCTAssertTrue(unmapped.isSubset(of: referenceNames), "\(unmapped)")
        XCTAssertTrue(listed.formats.contains { $0.pixelFormat.fourCC == "YUYV" })
        print("figure: vivid's node lists \(ours.count) format/size entries MediaDevices reads (\(listed.formats.count) pixel formats), unmapped: \(unmapped.sorted())")

        // PipeWire alone: the same camera, with only its PipeWire route.
        let viaPipeWire = CaptureDevice.scan(backends: [.pipewire]).devices
        let only = try XCTUnwrap(viaPipeWire.first { $0.uniqueID == direct.uniqueID }, "\(viaPipeWire)")
        XCTAssertEqual(only.backends, [.pipewire])
    }

    /// `mediadevices list --backend v4l2 --backend pipewire`: vivid once, with both routes.
    func testCLIListsTheCameraOnceWithBothRoutes() throws {
        let path = try Rig.loadVivid("node_types=1")[0]
        let session = try CameraSession(name: "cli", devices: [path])
        defer { session.stop() }
        let node = try XCTUnwrap(session.nodes[path])
        let printed = try session.run("\(Rig.tool) list --backend v4l2 --backend pipewire --json")
        struct Listing: Decodable {
            struct Camera: Decodable {
                struct Route: Decodable { let backend: String; let path: String?; let node: UInt32?; let serial: UInt64? }
                let path: String; let uniqueID: String; let routes: [Route]
            }
            let cameras: [Camera]
        }
        let listing = try JSONDecoder().decode(Listing.self, from: Data(printed.utf8))
        let cameras = listing.cameras.filter { $0.path == path }
        XCTAssertEqual(cameras.count, 1, printed)
        XCTAssertEqual(cameras.first?.uniqueID, try CaptureDevice(path: path).uniqueID)
        XCTAssertEqual(cameras.first?.routes.map(\.backend), ["v4l2", "pipewire"])
        XCTAssertEqual(cameras.first?.routes.last?.node, node.id)
        XCTAssertEqual(cameras.first?.routes.last?.serial, node.serial)
        XCTAssertEqual(cameras.first?.routes.last?.path, path)
        let text = try session.run("\(Rig.tool) list --backend pipewire")
        XCTAssertTrue(text.contains("routes: pipewire:\(node.serial)"), text)
    }

    func testNoSessionIsNotFoundNamingWhatToStart() throws {
        setenv("PIPEWIRE_REMOTE", "\(Rig.scratch)/no-such-pipewire-0", 1)
        defer { unsetenv("PIPEWIRE_REMOTE") }
        let found = CaptureDevice.scan(backends: [.pipewire])
        XCTAssertEqual(found.devices.map(\.uniqueID), [])
        let error = found.problems.first
        XCTAssertEqual(found.problems.count, 1, "\(found.problems)")
        XCTAssertEqual(error?.code, .notFound)
        XCTAssertTrue("\(error.map { "\($0)" } ?? "")".contains("wireplumber"), "\(String(describing: error))")
    }
}
