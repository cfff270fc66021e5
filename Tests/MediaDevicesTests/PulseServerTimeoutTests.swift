import Foundation
import Glibc
import XCTest
import MediaDevices

/// `AudioStreamOptions.serverTimeout` against a sound server that accepts the connection and
/// never answers (a listening Unix socket nobody reads, reached through PULSE_SERVER): the
/// stream fails with `.timeout` after the asked time, not the default 5 s, and not before.
final class PulseServerTimeoutTests: XCTestCase {
    /// Runs `body` with PULSE_SERVER pointing at a listening socket nobody reads.
    private func withMuteServer(_ body: () async throws -> Void) async throws {
        let path = NSTemporaryDirectory() + "mute-pulse-\(getpid())"
        unlink(path)
        let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        XCTAssertGreaterThanOrEqual(listener, 0)
        defer { close(listener); unlink(path) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            _ = path.utf8CString.withUnsafeBytes { memcpy(raw.baseAddress!, $0.baseAddress!, min(raw.count - 1, $0.count)) }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        XCTAssertEqual(bound, 0, "bind \(path): errno \(errno)")
        XCTAssertEqual(listen(listener, 4), 0)

        let saved = ProcessInfo.processInfo.environment["PULSE_SERVER"]
        defer { if let saved { setenv("PULSE_SERVER", saved, 1) } else { unsetenv("PULSE_SERVER") } }
        setenv("PULSE_SERVER", "unix:\(path)", 1)

        try await body()
    }

    func testAMuteServerFailsTheStreamWithTimeoutAfterTheOptionsServerTimeout() async throws {
        try await withMuteServer {
            let driver = AudioDriver()
            let format = AudioFormat(sampleRate: 48000, channels: 2, sampleFormat: .s16LE)
            let start = Date()
            XCTAssertThrowsError(try driver.initializeRendering(device: .pulse("mdsink", direction: .output), format: format,
                                                                 options: AudioStreamOptions(serverTimeout: .milliseconds(400)))) { error in
                let error = error as? MediaDevicesError
                XCTAssertEqual(error?.code, .timeout, "\(String(describing: error))")
                XCTAssertTrue(error?.description.contains("0.4 s") == true, "the error names the asked timeout: \(String(describing: error))")
                XCTAssertTrue(error?.description.contains("serverTimeout") == true, "the error names the option that gives more time: \(String(describing: error))")
            }
            let seconds = Date().timeIntervalSince(start)
            XCTAssertGreaterThanOrEqual(seconds, 0.4, "not before the asked time")
            XCTAssertLessThan(seconds, 3, "the asked 0.4 s, not the 5 s default")
            XCTAssertFalse(driver.isRendering)
        }
    }

    /// A discovery waiting on a server that never answers ends as soon as its task is cancelled,
    /// with the ALSA devices it found and a `.cancelled` problem for the server.
    func testCancellingADiscoveryEndsItsWaitOnAMuteServer() async throws {
        try await withMuteServer {
            let start = Date()
            let task = Task { await AudioDevice.discover(pulseTimeout: .seconds(30)) }
            try await Task.sleep(for: .milliseconds(300))
            task.cancel()
            let discovery = await task.value
            let seconds = Date().timeIntervalSince(start)
            XCTAssertLessThan(seconds, 2, "cancelled, not the 30 s timeout")
            XCTAssertTrue(discovery.problems.contains { $0.code == .cancelled && $0.device == "pulse" }, "\(discovery.problems)")
            XCTAssertFalse(discovery.devices.contains { $0.backend == .pulse }, "\(discovery.devices)")
        }
    }

    /// Without cancellation the same discovery gives the server its `pulseTimeout` and says so.
    func testADiscoveryOnAMuteServerEndsAfterItsPulseTimeout() async throws {
        try await withMuteServer {
            let start = Date()
            let discovery = await AudioDevice.discover(pulseTimeout: .milliseconds(300))
            let seconds = Date().timeIntervalSince(start)
            XCTAssertGreaterThanOrEqual(seconds, 0.3)
            XCTAssertLessThan(seconds, 3)
            XCTAssertTrue(discovery.problems.contains { $0.code == .timeout && $0.device == "pulse" }, "\(discovery.problems)")
        }
    }

    /// A stream's open that waits on a server that never answers ends as soon as its task is
    /// cancelled, with `.cancelled`, and leaves the side uninitialized (nothing open).
    func testCancellingAnAsyncInitializeEndsItsWaitOnAMuteServer() async throws {
        try await withMuteServer {
            let driver = AudioDriver()
            let format = AudioFormat(sampleRate: 48000, channels: 2, sampleFormat: .s16LE)
            let start = Date()
            let task = Task {
                try await driver.initializeRendering(device: .pulse("mdsink", direction: .output), format: format,
                                                     options: AudioStreamOptions(serverTimeout: .seconds(30)))
            }
            try await Task.sleep(for: .milliseconds(300))
            task.cancel()
            let outcome = await task.result
            let seconds = Date().timeIntervalSince(start)
            XCTAssertLessThan(seconds, 2, "cancelled, not the 30 s timeout")
            XCTAssertThrowsError(try outcome.get()) { error in
                XCTAssertEqual((error as? MediaDevicesError)?.code, .cancelled, "\(error)")
            }
            XCTAssertFalse(driver.isRenderingInitialized)
        }
    }
}
