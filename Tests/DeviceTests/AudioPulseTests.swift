import Foundation
import MediaDevices
import XCTest

/// The Pulse backend against a real PulseAudio daemon: `SoundServerChecks` (the tone through a
/// null sink and its monitor, enumeration against `pactl`, the daemon killed and stopped
/// mid-stream). `AudioPipeWireTests` runs the same checks against PipeWire.
final class AudioPulseTests: XCTestCase {
    override func setUpWithError() throws { try Rig.require() }

    func testToneThroughNullSinkAndMonitor() throws { try SoundServerChecks.toneThroughNullSinkAndMonitor(PulseDaemon(name: "tone")) }

    func testEnumerationAgreesWithPactl() throws { try SoundServerChecks.enumerationAgreesWithPactl(PulseDaemon(name: "list")) }

    func testKillingTheDaemonMidStreamDisconnects() throws { try SoundServerChecks.killingTheServerMidStreamDisconnects(PulseDaemon(name: "kill")) }

    func testSideCallsFromThePeriodObserver() throws { try SoundServerChecks.sideCallsFromThePeriodObserver(PulseDaemon(name: "observer")) }

    func testStoppedDaemonTimesOutAndStopReturnsPromptly() throws {
        try SoundServerChecks.stoppedServerTimesOutAndStopReturnsPromptly(PulseDaemon(name: "stop"))
    }
}

/// When the sides of a driver ended their runs, in order, as `onStop` saw it (a `stop()` counts).
final class RunEndings: @unchecked Sendable {
    private let lock = NSLock()
    private var times: [Date] = []
    private var consumed = 0
    private let ended = DispatchSemaphore(value: 0)

    /// Installs itself as both sides' `onStop` (before they start).
    init(_ driver: AudioDriver) {
        for side in [driver.capture, driver.render] {
            side.onStop = { [self] _ in
                lock.withLock { times.append(Date()) }
                ended.signal()
            }
        }
    }

    /// Waits for the next `count` endings, at most `timeout` seconds; returns the seconds from
    /// `since` to the last of them, or nil when they did not all come.
    func wait(for count: Int, timeout: Double, since: Date) -> Double? {
        let deadline = DispatchTime.now() + timeout
        for _ in 0..<count where ended.wait(timeout: deadline) == .timedOut { return nil }
        return lock.withLock {
            consumed += count
            return times[consumed - 1].timeIntervalSince(since)
        }
    }
}
