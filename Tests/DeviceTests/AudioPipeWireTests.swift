import Foundation
import MediaDevices
import XCTest

/// Issue 14's PipeWire: the same Pulse backend, unchanged, against a real PipeWire session
/// (`pipewire` + `wireplumber` + `pipewire-pulse`, as Debian 12 desktops run it), with the same
/// checks as `AudioPulseTests` against PulseAudio.
final class AudioPipeWireTests: XCTestCase {
    override func setUpWithError() throws { try Rig.require() }

    func testToneThroughNullSinkAndMonitor() throws {
        let server = try PipeWireDaemon(name: "tone")
        print(String(format: "figure: PipeWire session (dbus-daemon, pipewire, wireplumber, pipewire-pulse) answered pactl %.1f s after start", server.startSeconds))
        try SoundServerChecks.toneThroughNullSinkAndMonitor(server)
    }

    func testRoundTripAt10And20MillisecondPeriodsAgainstPacatAndParec() throws {
        try AudioPulseLatencyTests.roundTrips(PipeWireDaemon(name: "latency"), nearTools: false)
    }

    func testEnumerationAgreesWithPactl() throws { try SoundServerChecks.enumerationAgreesWithPactl(PipeWireDaemon(name: "list")) }

    func testKillingTheServerMidStreamDisconnects() throws { try SoundServerChecks.killingTheServerMidStreamDisconnects(PipeWireDaemon(name: "kill")) }

    func testStoppedServerTimesOutAndStopReturnsPromptly() throws {
        try SoundServerChecks.stoppedServerTimesOutAndStopReturnsPromptly(PipeWireDaemon(name: "stop"))
    }
}
