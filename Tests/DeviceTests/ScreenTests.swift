import MediaDevices
import XCTest

/// Screen capture on bochs (QEMU `-vga std`): runs in the rig's `--display std` boot.
final class ScreenTests: XCTestCase {
    override func setUpWithError() throws { try Rig.require() }

    // Named to run first in this class: the console has not been replaced by a test display yet.
    func test1ConsoleFramebufferIsGrabbedNonBlank() throws {
        try ScreenScenarios.console(try ScreenScenarios.loadDisplay("bochs"))
    }

    func testEnumerationMatchesSysfsAndEDID() throws {
        try ScreenScenarios.enumeration(try ScreenScenarios.loadDisplay("bochs"), driver: "bochs-drm")
    }

    func testGrabReturnsThePatternPixelForPixel() throws {
        try ScreenScenarios.pattern(try ScreenScenarios.loadDisplay("bochs"))
    }

    func testModeChangeDuringCaptureIsFollowed() async throws {
        try await ScreenScenarios.modeChange(try ScreenScenarios.loadDisplay("bochs"))
    }

    func testUnprivilegedGrabIsPermissionDeniedWithTheRemedy() throws {
        try ScreenScenarios.unprivileged(try ScreenScenarios.loadDisplay("bochs"))
    }
}

extension ScreenTests {
    /// bochs cannot export PRIME buffers (why `ffmpeg -f kmsgrab` fails on it): forcing PRIME
    /// is a clear error naming the ioctl, while the automatic choice maps the dumb buffer.
    func testPRIMEOnlyFailsClearlyOnBochsWhileAutomaticWorks() throws {
        let screen = try ScreenScenarios.loadDisplay("bochs")
        let prime = ScreenSource(screen: screen, mapping: .prime)
        defer { prime.release() }
        XCTAssertThrowsError(try prime.initialize()) { error in
            let error = error as? MediaDevicesError
            XCTAssertEqual(error?.code, .io)
            XCTAssertTrue(error?.detail.contains("DRM_IOCTL_PRIME_HANDLE_TO_FD") ?? false, "\(String(describing: error))")
            print("bochs, PRIME only: \(String(describing: error))")
        }
        let automatic = ScreenSource(screen: screen)
        defer { automatic.release() }
        try automatic.initialize()
        XCTAssertEqual(automatic.framebuffer?.mapping, .dumbBuffer)
    }

    /// Nor can it export a frame's DMA-BUF: asking for one is `.unsupportedFormat` naming the
    /// ioctl and the remedy, never frames without it.
    func testDMABufExportIsRefusedClearlyOnBochs() throws {
        let screen = try ScreenScenarios.loadDisplay("bochs")
        let source = ScreenSource(screen: screen, exportsDMABuf: true)
        defer { source.release() }
        XCTAssertThrowsError(try source.initialize()) { error in
            let error = error as? MediaDevicesError
            XCTAssertEqual(error?.code, .unsupportedFormat)
            XCTAssertTrue(error?.detail.contains("DRM_IOCTL_PRIME_HANDLE_TO_FD: ENOSYS") ?? false, "\(String(describing: error))")
            print("bochs, exportsDMABuf: \(String(describing: error))")
        }
    }
}
