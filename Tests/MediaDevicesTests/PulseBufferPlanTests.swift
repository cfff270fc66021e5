import CPulse
import XCTest
@testable import MediaDevices
@testable import MediaDevicesAudio
@testable import MediaDevicesVideo
@testable import MediaDevicesCore

/// The buffer attributes a Pulse stream asks for, and the error mapping of libpulse's codes.
final class PulseBufferPlanTests: XCTestCase {
    func testPlaybackAsksForTheWholeLatencyInTlengthAndStartsAfterOnePeriod() {
        // 10 ms periods of 48 kHz stereo S16 (4 bytes a frame), 4 of them.
        let attributes = PulseBufferPlan(direction: .output, periodFrames: 480, periods: 4, bytesPerFrame: 4).attributes
        XCTAssertEqual(attributes.tlength, 4 * 480 * 4, "tlength: periods × period")
        XCTAssertEqual(attributes.minreq, 480 * 4, "minreq: one period")
        XCTAssertEqual(attributes.prebuf, 480 * 4, "prebuf: one period, not the whole buffer")
        XCTAssertEqual(attributes.maxlength, UInt32.max, "maxlength: the server's default")
        XCTAssertEqual(PulseBufferPlan.periodBytes(of: attributes, direction: .output), 480 * 4)
        XCTAssertEqual(PulseBufferPlan.bufferBytes(of: attributes, direction: .output, periods: 4), 4 * 480 * 4)
    }

    func testRecordAsksForOnePeriodFragmentsAndKeepsWhatArrives() {
        let attributes = PulseBufferPlan(direction: .input, periodFrames: 960, periods: 3, bytesPerFrame: 8).attributes
        XCTAssertEqual(attributes.fragsize, 960 * 8, "fragsize: one period")
        XCTAssertEqual(attributes.maxlength, UInt32.max, "maxlength: the server's default; a bound would only lose data")
        XCTAssertEqual(PulseBufferPlan.periodBytes(of: attributes, direction: .input), 960 * 8)
        XCTAssertEqual(PulseBufferPlan.bufferBytes(of: attributes, direction: .input, periods: 3), 3 * 960 * 8)
    }

    func testAtLeastTwoPeriodsAreBuffered() {
        XCTAssertEqual(PulseBufferPlan(direction: .output, periodFrames: 480, periods: 1, bytesPerFrame: 2).attributes.tlength, 2 * 480 * 2)
        let record = PulseBufferPlan(direction: .input, periodFrames: 480, periods: 0, bytesPerFrame: 2).attributes
        XCTAssertEqual(PulseBufferPlan.bufferBytes(of: record, direction: .input, periods: 0), 2 * 480 * 2)
    }

    func testServerErrorsMapToTheLibrarysCodes() {
        let cases: [(pa_error_code, MediaDevicesError.Code)] = [
            (PA_ERR_CONNECTIONTERMINATED, .disconnected), (PA_ERR_KILLED, .disconnected),
            (PA_ERR_CONNECTIONREFUSED, .notFound), (PA_ERR_NOENTITY, .notFound),
            (PA_ERR_INVALID, .unsupportedFormat), (PA_ERR_ACCESS, .permissionDenied), (PA_ERR_IO, .io),
        ]
        for (code, expected) in cases {
            let error = PulseError.make(Int32(code.rawValue), device: "pulse:mdsink", operation: "pa_stream_connect_playback")
            XCTAssertEqual(error.code, expected, "\(code)")
            XCTAssertEqual(error.device, "pulse:mdsink")
        }
        XCTAssertEqual(PulseError.stalled(device: "pulse:mdsink", operation: "pa_stream_peek", seconds: 2).code, .timeout)
    }
}
