import Foundation
import MediaDevices
import XCTest

/// Issue 14's PipeWire: the same Pulse backend, unchanged, against a real PipeWire session
/// (`pipewire` + `wireplumber` + `pipewire-pulse`, as Debian 12 desktops run it), with the same
/// checks as `AudioPulseTests` against PulseAudio.
///
/// The tests share one session (`PipeWireDaemon.Shared`): starting one costs 17–20 s of the
/// emulated guest's time, and only the kill test ends it (the next test starts a new one). The
/// SIGSTOP test resumes it, and the tone test after it checks that it still serves.
final class AudioPipeWireTests: XCTestCase {
    private static let session = PipeWireDaemon.Shared(name: "pipewire-tests")

    override func setUpWithError() throws { try Rig.require() }

    override class func tearDown() {
        session.stop()
        super.tearDown()
    }

    func testToneThroughNullSinkAndMonitor() throws {
        try SoundServerChecks.toneThroughNullSinkAndMonitor(Self.session.daemon())
    }

    func testRoundTripAt10And20MillisecondPeriodsAgainstPacatAndParec() throws {
        try AudioPulseLatencyTests.roundTrips(Self.session.daemon(), nearTools: false)
    }

    func testEnumerationAgreesWithPactl() throws { try SoundServerChecks.enumerationAgreesWithPactl(Self.session.daemon()) }

    func testKillingTheServerMidStreamDisconnects() throws { try SoundServerChecks.killingTheServerMidStreamDisconnects(Self.session.daemon()) }

    func testStoppedServerTimesOutAndStopReturnsPromptly() throws {
        try SoundServerChecks.stoppedServerTimesOutAndStopReturnsPromptly(Self.session.daemon())
    }
}
