import Foundation
import MediaDevices
import TestSupport
import XCTest

/// Voice processing in the driver on real devices: espeak-ng speech rendered into snd-aloop's
/// hw:Loopback,0,0 comes back on hw:Loopback,1,0 as a 0 dB "echo" delayed by both devices'
/// buffers; the capture side cancels it, the reference aligned by the devices' timestamps,
/// allocating nothing on either audio thread. The capture device holds 8 s: in the emulator the
/// capture thread with the canceller runs at 40-80 % of real time on a busy host, so it falls
/// behind by seconds, and what it processes was recorded that long before; what is asserted is
/// the canceller on all of it, not the emulator's speed (the figures print the pace).
final class VoiceProcessingLoopbackTests: XCTestCase {
    override func setUpWithError() throws {
        try Rig.require()
        try Rig.run("modprobe snd-aloop")
        for _ in 0..<100 { guard !FileManager.default.fileExists(atPath: "/dev/snd/pcmC0D1c") else { break }; usleep(20_000) }
    }

    /// Plays `far` through the loopback with `voice` on the capture side; returns what was captured.
    private func run(far: [Float], format: AudioFormat, voice: VoiceProcessingOptions?,
                     probes: (render: AudioAllocationProbe, capture: AudioAllocationProbe)? = nil) throws -> (captured: [Float], renderDelay: Double, figures: String) {
        let driver = AudioDriver()
        try driver.initializeRendering(device: .alsa("hw:Loopback,0,0", direction: .output), format: format,
                                       options: AudioStreamOptions(periodFrames: 320, periods: 25))
        try driver.initializeCapture(device: .alsa("hw:Loopback,1,0", direction: .input), format: format,
                                     options: AudioStreamOptions(periodFrames: 320, periods: 400), voiceProcessing: voice)
        if let probes {
            driver.render.periodObserver = probes.render.observer
            driver.capture.periodObserver = probes.capture.observer
        }
        // The whole far end is queued at once and the capture taken as it comes, into one
        // buffer: the test's own thread costs the emulated CPUs next to nothing.
        let far16 = far.map { SampleConversion.int16($0) }
        let queued = far16.withUnsafeBufferPointer { driver.bus.writeRenderData($0) }
        XCTAssertEqual(queued, far16.count, "the bus holds the far end")
        var captured16 = [Int16](repeating: 0, count: far.count)
        var got = 0
        try driver.startCapture()
        try driver.startRendering()
        let deadline = Date().addingTimeInterval(Double(far.count) / Double(format.sampleRate) * 4 + 10)
        while got < far.count && Date() < deadline && driver.isCapturing {
            guard driver.bus.waitForCaptureData(samples: 1, timeout: .milliseconds(200)) else { continue }
            got += captured16.withUnsafeMutableBufferPointer { driver.bus.readCaptureData(into: UnsafeMutableBufferPointer(rebasing: $0[got...])) }
        }
        let captured = captured16[0..<got].map { Float($0) / 32768 }
        let renderDelay = driver.render.statistics.meanDelay.inMilliseconds, captureDelay = driver.capture.statistics.meanDelay.inMilliseconds
        let captureRate = driver.capture.statistics.achievedSampleRate, captureCost = driver.capture.statistics.meanPeriodCost.inMilliseconds
        driver.capture.stop()
        driver.render.stop()
        XCTAssertNil(driver.capture.endError)
        XCTAssertNil(driver.render.endError)
        var figures = String(format: "mean delays: render %.1f ms, capture %.1f ms, xruns render %d capture %d, capture overflow %d samples",
                             renderDelay, captureDelay, driver.render.statistics.xruns, driver.capture.statistics.xruns, driver.capture.statistics.busShortfallSamples)
        figures += String(format: "; capture %.0f Hz, %.1f ms work per period", captureRate, captureCost)
        if let processor = driver.voiceProcessor {
            let metrics = processor.echoMetrics
            figures += String(format: "; latency %.1f ms; canceller's ERLE %.0f dB, delay found %.0f ms; reference re-aligned: render %d capture %d",
                              Double(processor.latencyFrames) * 1000 / Double(format.sampleRate), metrics?.echoReturnLossEnhancement ?? .nan,
                              metrics?.delay.map { Double($0.components.attoseconds) / 1e15 + Double($0.components.seconds) * 1000 } ?? .nan,
                              processor.renderJumps, processor.captureJumps)
        }
        driver.render.terminate()
        driver.capture.terminate()
        return (captured, renderDelay / 1000, figures)
    }

    func testEchoThroughTheLoopbackIsCancelledWithoutAllocating() throws {
        let format = AudioFormat(sampleRate: 16000, channels: 1, sampleFormat: .s16LE)
        let speech = SimulatedRoom.scaled(try SpokenSpeech.speak(VoiceRoomScenario.farText, voice: "en-us", sampleRate: format.sampleRate), toRMS: -20)
        let far = Array(speech.prefix(8 * format.sampleRate))
        let probes = (render: AudioAllocationProbe(warmUp: 300, measured: 200), capture: AudioAllocationProbe(warmUp: 300, measured: 200))
        let (processed, renderDelay, figures) = try run(far: far, format: format, voice: VoiceProcessingOptions(processing: .echoCancellation), probes: probes)
        // From 2 s on, far end against what came back (the loopback returns it at 0 dB).
        // The far end is heard (and comes back) the render side's delay after the capture
        // began: from 2 s after that, the far end against what came back then.
        let lag = Int(renderDelay * Double(format.sampleRate)), from = 2 * format.sampleRate + lag, count = min(far.count, processed.count)
        XCTAssertGreaterThan(count, from + 4 * format.sampleRate, "at least 4 s came back 2 s after the far end was first heard")
        let erle = ToneAnalysis.rmsDecibels(of: Array(far[(from - lag)..<(count - lag)])) - ToneAnalysis.rmsDecibels(of: Array(processed[from..<count]))
        print(String(format: "figure: voice processing through snd-aloop, 16 kHz mono S16: ERLE %.1f dB after 2 s; ", erle) + figures)
        XCTAssertGreaterThanOrEqual(erle, 25)
        if AllocationProbe.isActive {
            XCTAssertEqual(probes.render.allocations, 0, "render thread with voice processing on")
            XCTAssertEqual(probes.capture.allocations, 0, "capture thread with voice processing on")
        }

        // The control: with voice processing off the speech comes back at its level.
        let (plain, _, _) = try run(far: Array(far[0..<(4 * format.sampleRate)]), format: format, voice: nil)
        let through = ToneAnalysis.rmsDecibels(of: Array(far[format.sampleRate..<min(plain.count, 4 * format.sampleRate)])) -
            ToneAnalysis.rmsDecibels(of: Array(plain[format.sampleRate..<min(plain.count, 4 * format.sampleRate)]))
        XCTAssertLessThan(abs(through), 3, "without voice processing the loopback returns the far end")
    }
}
