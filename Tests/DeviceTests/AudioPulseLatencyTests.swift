import Foundation
import MediaDevices
import TestSupport
import XCTest

/// The round trip through a real PulseAudio null sink and its monitor at the periods a call
/// uses (10 and 20 ms), against `pacat` and `parec` with the same latency request in the same
/// boot and against the ALSA loopback with the same periods, with the latency the server
/// reports and the audio threads' allocations.
final class AudioPulseLatencyTests: XCTestCase {
    /// Seconds of silence before the tone: more than the null sink's 2 s block.
    static let settle = 2.5

    override func setUpWithError() throws { try Rig.require() }

    func testRoundTripAt10And20MillisecondPeriodsAgainstPacatAndParec() throws {
        try Self.roundTrips(PulseDaemon(name: "latency"))
    }

    /// Tries of each round trip. Five, not three: with the host's two cores busy, three tries in
    /// a row have all been stalled (ours 111–280 ms against pacat's 53–62 ms in one loaded CI run,
    /// the test's feeding thread starved: a render bus shortfall).
    static let attempts = 5

    /// The round trips at 10 and 20 ms periods through `daemon`'s null sink, ours against
    /// pacat | parec and against the ALSA loopback's with the same periods (also run by
    /// `AudioPipeWireTests` against PipeWire). Issue 14's bounds: ours at most twice pacat | parec
    /// plus a period, and (with `nearALSA`, the issue's bound for PulseAudio) within two periods
    /// of snd-aloop's round trip. PipeWire is held to the first only: its graph runs on its own
    /// quantum and threads, was +1.5 to +1.7 periods over snd-aloop on an idle host and +3 to +5
    /// under a loaded one, where pacat | parec slowed alike (90–127 ms against 101–105).
    static func roundTrips(_ daemon: SoundServer, nearALSA: Bool = true) throws {
        defer { daemon.kill() }
        try Rig.run("modprobe snd-aloop")
        for _ in 0..<100 where !FileManager.default.fileExists(atPath: "/dev/snd/pcmC0D1c") { usleep(20_000) }
        let format = AudioFormat(sampleRate: 48000, channels: 2, sampleFormat: .s16LE)
        // 6 periods: 4 (40 ms at 10 ms periods) underruns too often in the software-emulated
        // guest for the tone to come back whole, with pacat as with us.
        let periods = 6
        for milliseconds in [10, 20] {
            let periodFrames = format.sampleRate * milliseconds / 1000
            let period = Double(milliseconds) / 1000
            // Up to five attempts; the bounds hold for the least of each kind so far. A latency
            // is structural: a stall of the emulated guest (or a host busier than the guest's
            // periods, which starves the test's feeding thread) only adds to one measurement,
            // never takes away, so the least is the figure. A broken tone is tried again too.
            var least = (ours: Double.infinity, tools: Double.infinity, alsa: Double.infinity)
            for attempt in 1...Self.attempts {
                let label = "\(milliseconds) ms periods, attempt \(attempt)"
                let ours = try daemon.reporting { try ourRoundTrip(format: format, periodFrames: periodFrames, periods: periods, label: label, last: attempt == Self.attempts) }
                let reference = try XCTUnwrap(PulseToolsRoundTrip(sink: "mdsink").measure(
                    playbackLatencyMilliseconds: periods * milliseconds, recordLatencyMilliseconds: milliseconds, periodFrames: periodFrames, lead: Self.settle),
                    "\(label): the tone came back through pacat and parec")
                let alsa = try loopbackRoundTrip(format: format, periodFrames: periodFrames, periods: periods, label: label)
                least = (min(least.ours, ours.roundTrip), min(least.tools, reference), min(least.alsa, alsa))
                print(String(format: "figure: %@ round trip at %d ms periods (tlength %d ms, fragsize %d ms), attempt %d: ours %.1f ms, pacat|parec %.1f ms (%.2fx), snd-aloop with the same periods %.1f ms (%+.1f periods); reported latency: render %.1f ms (mean %.1f ms), capture %.1f ms (mean %.1f ms)",
                             daemon.product, milliseconds, periods * milliseconds, milliseconds, attempt, ours.roundTrip * 1000, reference * 1000, ours.roundTrip / reference,
                             alsa * 1000, (ours.roundTrip - alsa) / period,
                             ours.renderLatency * 1000, ours.render.meanDelayMicroseconds / 1000, ours.captureLatency * 1000, ours.capture.meanDelayMicroseconds / 1000))
                let withinTools = least.ours <= 2 * least.tools + period
                let withinALSA = !nearALSA || least.ours <= least.alsa + 2 * period
                if withinTools && withinALSA && ours.wholeTone {
                    print(String(format: "figure: %@ round trip at %d ms periods, least of %d attempt(s): ours %.1f ms, pacat|parec %.1f ms (%.2fx), snd-aloop %.1f ms (ours %+.1f periods)",
                                 daemon.product, milliseconds, attempt, least.ours * 1000, least.tools * 1000, least.ours / least.tools,
                                 least.alsa * 1000, (least.ours - least.alsa) / period))
                    break
                }
                if !ours.wholeTone {
                    print("figure: \(label): the tone came back broken (render bus shortfall \(ours.render.busShortfallSamples) samples, xruns \(ours.render.xruns))\(attempt < Self.attempts ? "; trying again" : "")")
                }
                guard attempt == Self.attempts else { continue }
                if !withinTools {
                    XCTFail(String(format: "%@: ours %.1f ms at best, more than twice pacat|parec's %.1f ms plus a period", label, least.ours * 1000, least.tools * 1000))
                }
                if !withinALSA {
                    XCTFail(String(format: "%@: ours %.1f ms at best, more than two periods over snd-aloop's %.1f ms", label, least.ours * 1000, least.alsa * 1000))
                }
            }
        }
    }

    /// A driver rendering into `render` and capturing from `capture` with the same format and periods.
    private static func pair(render: AudioDevice, capture: AudioDevice, format: AudioFormat, periodFrames: Int, periods: Int) throws -> AudioDriver {
        let driver = AudioDriver()
        let options = AudioStreamOptions.rig(periodFrames: periodFrames, periods: periods)
        try driver.initializeRendering(device: render, format: format, options: options)
        try driver.initializeCapture(device: capture, format: format, options: options)
        return driver
    }

    /// The round trip through snd-aloop (hw:Loopback,0,0 → hw:Loopback,1,0) with the same
    /// format, periods and tone run: what the issue holds the sound server's round trip to.
    private static func loopbackRoundTrip(format: AudioFormat, periodFrames: Int, periods: Int, label: String) throws -> Double {
        let driver = try pair(render: .alsa("hw:Loopback,0,0", direction: .output), capture: .alsa("hw:Loopback,1,0", direction: .input),
                              format: format, periodFrames: periodFrames, periods: periods)
        defer { driver.render.terminate(); driver.capture.terminate() }
        XCTAssertEqual(driver.render.periodFrames, periodFrames, "\(label): snd-aloop takes the period")
        let run = try AudioToneRun(driver: driver, format: format).run(seconds: 0.3)
        return try XCTUnwrap(run.roundTrip, "\(label): the tone came back through snd-aloop")
    }

    /// One round trip through an `AudioDriver` on the null sink and its monitor, checking what
    /// the server took of the request, the tone, the reported latency and the audio threads'
    /// allocations.
    /// The tone is asserted on the `last` attempt; before it, `wholeTone` says whether it came back whole.
    private static func ourRoundTrip(format: AudioFormat, periodFrames: Int, periods: Int, label: String, last: Bool) throws
        -> (roundTrip: Double, renderLatency: Double, captureLatency: Double, render: AudioStatistics, capture: AudioStatistics, wholeTone: Bool) {
        let period = Double(periodFrames) / Double(format.sampleRate)
        let driver = try pair(render: .pulse("mdsink", direction: .output), capture: .pulse("mdsink.monitor", direction: .input),
                              format: format, periodFrames: periodFrames, periods: periods)
        defer { driver.render.terminate(); driver.capture.terminate() }
        // The request as the server took it: minreq and fragsize as asked; tlength is the whole
        // latency, which the server splits between the sink and the stream's buffer.
        XCTAssertEqual(driver.render.periodFrames, periodFrames, "\(label): render period (minreq)")
        let tlength = try XCTUnwrap(driver.render.bufferFrames)
        XCTAssertTrue((periodFrames...periods * periodFrames).contains(tlength), "\(label): render buffer (tlength) \(tlength) within the request")
        XCTAssertEqual(driver.capture.periodFrames, periodFrames, "\(label): capture period (fragsize)")
        let captureProbe = AudioAllocationProbe(warmUp: 5, measured: 25), renderProbe = AudioAllocationProbe(warmUp: 5, measured: 25)
        driver.capture.periodObserver = captureProbe.observer
        driver.render.periodObserver = renderProbe.observer

        // The lead lets the sink settle: idle, the null sink has rendered its 2 s maximum
        // latency ahead, and the first stream to connect waits until that block has played.
        let run = try AudioToneRun(driver: driver, format: format).run(lead: settle, seconds: 0.6)
        let roundTrip = try XCTUnwrap(run.roundTrip, "\(label): the tone came back through the monitor")
        let wholeTone = AudioToneRun.isWholeTone(run.captured, format: format, skip: 0.1)
        if last { _ = AudioToneRun.assertTone(run.captured, format: format, skip: 0.1, label: "Pulse \(label)") }
        let render = driver.render.statistics, capture = driver.capture.statistics
        XCTAssertGreaterThan(render.meanDelayMicroseconds, 0, "\(label): the server reports the render latency")
        let renderLatency = driver.estimatedRenderDelay, captureLatency = driver.estimatedCaptureDelay
        XCTAssertLessThanOrEqual(renderLatency, 2 * Double(periods) * period, "\(label): the reported render latency keeps to the request")
        XCTAssertEqual(captureProbe.done.wait(timeout: .now()), .success, "\(label): 30 capture periods ran")
        XCTAssertEqual(renderProbe.done.wait(timeout: .now()), .success, "\(label): 30 render periods ran")
        XCTAssertEqual(captureProbe.allocations, 0, "\(label): heap allocations on the capture thread (first in period \(captureProbe.firstAllocatingPeriod))")
        XCTAssertEqual(renderProbe.allocations, 0, "\(label): heap allocations on the render thread (first in period \(renderProbe.firstAllocatingPeriod))")
        return (roundTrip, renderLatency, captureLatency, render, capture, wholeTone)
    }
}
