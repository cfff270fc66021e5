import Foundation
import Logging
@testable import MediaDevices
@testable import MediaDevicesAudio
@testable import MediaDevicesVideo
@testable import MediaDevicesCore
import Synchronization
import TestSupport
import XCTest

/// No global state an application cannot replace: the portal's restore tokens are kept in a
/// store the options name (the process's by default), and the types that log take the
/// application's swift-log `Logger` and log a run's events to it, none per frame.
final class InstanceStateTests: XCTestCase {
    func testRestoreTokensAreKeptInTheStoreTheOptionsName() throws {
        let screen = PortalScreens.screen(card: "unix:path=/run/instance-state-test", type: 1, name: "monitor")
        let mine = PortalRestoreTokens(), theirs = PortalRestoreTokens()
        try PortalScreens.keep("mine", for: screen, options: PortalOptions(restoreTokens: mine))
        XCTAssertEqual(PortalScreens.restoreToken(for: screen, options: PortalOptions(restoreTokens: mine)), "mine")
        XCTAssertNil(PortalScreens.restoreToken(for: screen, options: PortalOptions(restoreTokens: theirs)), "another store sees none")
        XCTAssertNil(PortalScreens.restoreToken(for: screen, options: PortalOptions()), "the process's store sees none")
        // The default is the process's store, as before.
        XCTAssertTrue(PortalOptions().restoreTokens === PortalRestoreTokens.shared)
        try PortalScreens.keep("shared", for: screen, options: PortalOptions())
        defer { PortalRestoreTokens.shared.removeAll() }
        XCTAssertEqual(PortalScreens.restoreToken(for: screen, options: PortalOptions()), "shared")
        XCTAssertEqual(PortalScreens.restoreToken(for: screen, options: PortalOptions(restoreTokens: mine)), "mine")
        XCTAssertNotEqual(PortalOptions(restoreTokens: mine), PortalOptions(restoreTokens: theirs))
    }

    func testEnumerationLogsToTheApplicationsLogger() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("instance-state-\(getpid())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // Not a video device: opening works, VIDIOC_QUERYCAP does not; the node is skipped and logged.
        XCTAssertTrue(FileManager.default.createFile(atPath: directory + "/video0", contents: Data()))
        let kept = LogRecorder()
        let found = CaptureDevice.enumerate(in: directory, logger: kept.logger(label: "app.cameras", level: .debug))
        let (devices, problems) = (found.devices, found.problems)
        XCTAssertEqual(devices.count, 0)
        XCTAssertEqual(problems.count, 1)
        let lines = kept.lines
        XCTAssertEqual(lines.count, 1, "\(lines)")
        XCTAssertTrue(lines.first?.contains("skipping a video node") ?? false, "\(lines)")
        XCTAssertTrue(lines.first?.contains("\(directory)/video0") ?? false, "the node, as metadata: \(lines)")
    }

    func testTheDeviceMonitorKeepsTheApplicationsLogger() throws {
        let monitor = try DeviceMonitor(kinds: [.camera], source: .kernel, logger: Logger(label: "app.hotplug"))
        defer { monitor.stop() }
        XCTAssertEqual(monitor.logger?.label, "app.hotplug")
        // Without one it does not log: the library makes no logger of its own (swift-log's
        // advice for libraries), and `grep 'Logger(label' Sources` finds none outside the tools.
        let byDefault = try DeviceMonitor(kinds: [.camera], source: .kernel)
        defer { byDefault.stop() }
        XCTAssertNil(byDefault.logger)
    }
}
