import Foundation
import MediaDevices
import TestSupport
import XCTest

/// The round trip through a real PulseAudio null sink and its monitor at the periods a call
/// uses (10 and 20 ms), against `pacat` and `parec` with the same latency request in the same
/// boot, with the latency the server reports and the audio threads' allocations.
final class AudioPulseLatencyTests: XCTestCase {
    /// Seconds of silence before the tone: more than the null sink's 2 s block.
    static let settle = 2.5

    override func setUpWithError() throws { try Rig.require() }

    func testRoundTripAt10And20MillisecondPeriodsAgainstPacatAndParec() throws {
        let daemon = try PulseDaemon(name: "latency")
        defer { daemon.kill() }
        let format = AudioFormat(sampleRate: 48000, channels: 2, sampleFormat: .s16LE)
        let periods = 4
        for milliseconds in [10, 20] {
            let periodFrames = format.sampleRate * milliseconds / 1000
            let period = Double(milliseconds) / 1000
            let label = "\(milliseconds) ms periods"
            let driver = AudioDriver()
            let options = AudioStreamOptions(periodFrames: periodFrames, periods: periods)
            try driver.initializeRendering(device: .pulse("mdsink", direction: .output), format: format, options: options)
            try driver.initializeCapture(device: .pulse("mdsink.monitor", direction: .input), format: format, options: options)
            // The request as the server took it: minreq, fragsize and maxlength as asked; tlength
            // is the whole latency, which the server splits between the sink and the stream's buffer.
            XCTAssertEqual(driver.render.periodFrames, periodFrames, "\(label): render period (minreq)")
            let tlength = try XCTUnwrap(driver.render.bufferFrames)
            XCTAssertTrue((periodFrames...periods * periodFrames).contains(tlength), "\(label): render buffer (tlength) \(tlength) within the request")
            XCTAssertEqual(driver.capture.periodFrames, periodFrames, "\(label): capture period (fragsize)")
            XCTAssertEqual(driver.capture.bufferFrames, periods * periodFrames, "\(label): capture buffer (maxlength)")
            let captureProbe = AudioAllocationProbe(warmUp: 5, measured: 25), renderProbe = AudioAllocationProbe(warmUp: 5, measured: 25)
            driver.capture.periodObserver = captureProbe.observer
            driver.render.periodObserver = renderProbe.observer

            // The lead lets the sink settle: idle, the null sink has rendered its 2 s maximum
            // latency ahead, and the first stream to connect waits until that block has played.
            let run = try AudioToneRun(driver: driver, format: format).run(lead: Self.settle, seconds: 0.6)
            let ours = try XCTUnwrap(run.roundTrip, "\(label): the tone came back through the monitor")
            _ = AudioToneRun.assertTone(run.captured, format: format, skip: 0.1, label: "Pulse \(label)")
            let render = driver.render.statistics, capture = driver.capture.statistics
            XCTAssertGreaterThan(render.meanDelayMicroseconds, 0, "\(label): the server reports the render latency")
            let renderLatency = driver.estimatedRenderDelay, captureLatency = driver.estimatedCaptureDelay
            XCTAssertLessThanOrEqual(renderLatency, 2 * Double(periods) * period, "\(label): the reported render latency keeps to the request")
            XCTAssertEqual(captureProbe.done.wait(timeout: .now()), .success, "\(label): 30 capture periods ran")
            XCTAssertEqual(renderProbe.done.wait(timeout: .now()), .success, "\(label): 30 render periods ran")
            XCTAssertEqual(captureProbe.allocations, 0, "\(label): heap allocations on the capture thread (first in period \(captureProbe.firstAllocatingPeriod))")
            XCTAssertEqual(renderProbe.allocations, 0, "\(label): heap allocations on the render thread (first in period \(renderProbe.firstAllocatingPeriod))")
            driver.render.terminate()
            driver.capture.terminate()

            let reference = try XCTUnwrap(PulseToolsRoundTrip(sink: "mdsink").measure(
                playbackLatencyMilliseconds: periods * milliseconds, recordLatencyMilliseconds: milliseconds, periodFrames: periodFrames, lead: Self.settle),
                "\(label): the tone came back through pacat and parec")
            print(String(format: "figure: PulseAudio round trip at %d ms periods (tlength %d ms, fragsize %d ms): ours %.1f ms, pacat|parec %.1f ms (%.2fx); reported latency: render %.1f ms (mean %.1f ms), capture %.1f ms (mean %.1f ms)",
                         milliseconds, periods * milliseconds, milliseconds, ours * 1000, reference * 1000, ours / reference,
                         renderLatency * 1000, render.meanDelayMicroseconds / 1000, captureLatency * 1000, capture.meanDelayMicroseconds / 1000))
            XCTAssertLessThanOrEqual(ours, 2 * reference + period, "\(label): ours within twice pacat|parec's round trip plus a period")
        }
    }
}
