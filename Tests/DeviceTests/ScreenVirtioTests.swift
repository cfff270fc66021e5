import MediaDevices
import XCTest

/// Screen capture on virtio-gpu (QEMU `-device virtio-gpu-pci`): runs in the rig's
/// `--display virtio` boot (scripts/test.sh runs classes named `…VirtioTests` there).
final class ScreenVirtioTests: XCTestCase {
    override func setUpWithError() throws { try Rig.require() }

    func test1ConsoleFramebufferIsGrabbedNonBlank() throws {
        try ScreenScenarios.console(try ScreenScenarios.loadDisplay("virtio-gpu"))
    }

    func testEnumerationMatchesSysfsAndEDID() throws {
        try ScreenScenarios.enumeration(try ScreenScenarios.loadDisplay("virtio-gpu"), driver: "virtio_gpu")
    }

    func testGrabReturnsThePatternPixelForPixelByDumbMapAndByPRIME() throws {
        let screen = try ScreenScenarios.loadDisplay("virtio-gpu")
        try ScreenScenarios.pattern(screen, mapping: .dumbBuffer)
        try ScreenScenarios.pattern(screen, mapping: .prime)
    }

    func testModeChangeDuringCaptureIsFollowed() async throws {
        try await ScreenScenarios.modeChange(try ScreenScenarios.loadDisplay("virtio-gpu"))
    }

    func testCursorPlaneOverlay() throws {
        try ScreenScenarios.cursor(try ScreenScenarios.loadDisplay("virtio-gpu"))
    }

    func testUnprivilegedGrabIsPermissionDeniedWithTheRemedy() throws {
        try ScreenScenarios.unprivileged(try ScreenScenarios.loadDisplay("virtio-gpu"))
    }
}
