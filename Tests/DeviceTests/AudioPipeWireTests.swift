import Foundation
import MediaDevices
import Synchronization
import XCTest

/// Issue 14's PipeWire: the same Pulse backend, unchanged, against a real PipeWire session
/// (`pipewire` + `wireplumber` + `pipewire-pulse`, as Debian 12 desktops run it), with the same
/// checks as `AudioPulseTests` against PulseAudio.
final class AudioPipeWireTests: XCTestCase {
    override func setUpWithError() throws { try Rig.require() }

    /// One session for the checks that leave it running (enumeration, round trips, the tone):
    /// a PipeWire session takes 10-20 s to start under emulation. The kill and stop checks end
    /// their server, so each has its own.
    private static let shared = Mutex<PipeWireDaemon?>(nil)

    private static func sharedSession() throws -> PipeWireDaemon {
        try shared.withLock { session in
            // The kill and stop checks' own servers took PULSE_SERVER over.
            if let session { session.makeCurrent(); return session }
            let server = try PipeWireDaemon(name: "shared")
            print(String(format: "figure: PipeWire session (dbus-daemon, pipewire, wireplumber, pipewire-pulse) answered pactl %.1f s after start", server.startSeconds))
            session = server
            return server
        }
    }

    override class func tearDown() {
        shared.withLock { $0 = nil }  // the daemon kills its session when freed
        super.tearDown()
    }

    func testToneThroughNullSinkAndMonitor() throws {
        try SoundServerChecks.toneThroughNullSinkAndMonitor(Self.sharedSession())
    }

    func testRoundTripAt10And20MillisecondPeriodsAgainstPacatAndParec() throws {
        try AudioPulseLatencyTests.roundTrips(Self.sharedSession(), nearTools: false)
    }

    func testEnumerationAgreesWithPactl() throws { try SoundServerChecks.enumerationAgreesWithPactl(Self.sharedSession()) }

    func testKillingTheServerMidStreamDisconnects() throws { try SoundServerChecks.killingTheServerMidStreamDisconnects(PipeWireDaemon(name: "kill")) }

    func testStoppedServerTimesOutAndStopReturnsPromptly() throws {
        try SoundServerChecks.stoppedServerTimesOutAndStopReturnsPromptly(PipeWireDaemon(name: "stop"))
    }
}
