import Foundation
import MediaDevices
import TestSupport
import XCTest

/// The application's format, not the device's: snd-aloop's cable held at 44.1 kHz stereo by one
/// end, the other end asked for 48 kHz mono S16. The side opens the device at 44.1 kHz stereo
/// (`deviceFormat`), the bus carries 48 kHz mono (`format`), and the audio thread converts:
/// the 997 Hz tone comes through within 0.1 Hz and 0.1 dB with THD+N below −80 dB, in both
/// directions, with each resampling library, and the converting threads allocate nothing per
/// period.
final class AudioConversionTests: XCTestCase {
    static let device = AudioFormat(sampleRate: 44100, channels: 2, sampleFormat: .floatLE)
    static let app = AudioFormat(sampleRate: 48000, channels: 1, sampleFormat: .s16LE)
    /// 512-frame periods, 16 of them (186 ms at 44.1 kHz): what is judged is the conversion, not
    /// the latency, and a busy host stalls the emulated guest for longer than 4 periods (46 ms)
    /// many times a second (up to 42 xruns in 2 s at load 6 with 4 periods).
    static func options(_ library: AudioResamplerLibrary) -> AudioStreamOptions {
        AudioStreamOptions(periodFrames: 512, periods: 16, resampler: library)
    }

    override func setUpWithError() throws {
        try Rig.require()
        try Rig.run("modprobe snd-aloop")
        for _ in 0..<100 { guard !FileManager.default.fileExists(atPath: "/dev/snd/pcmC0D1c") else { break }; usleep(20_000) }
    }

    /// Capture: the render side plays 44.1 kHz stereo into hw:Loopback,0,0 as the device takes
    /// it; the capture side asks hw:Loopback,1,0 for 48 kHz mono and gets it converted.
    func testDeviceAtFortyFourStereoCapturedAsFortyEightMono() throws { try runEachLibrary(converting: .input) }

    /// Render: the capture side records hw:Loopback,1,0 at 44.1 kHz stereo as the device takes
    /// it; the render side is asked for 48 kHz mono and converts to the cable's format.
    func testAppAtFortyEightMonoRenderedToFortyFourStereo() throws { try runEachLibrary(converting: .output) }

    /// For each library, a driver whose other side opens its end of the cable first, at the
    /// device format (holding the cable there), and whose `direction` side asks for the
    /// application's format and converts.
    private func runEachLibrary(converting direction: AudioDevice.Direction) throws {
        let capturing = direction == .input
        for library in AudioResamplerLibrary.allCases {
            for attempt in 1...Self.attempts {
                let driver = AudioDriver(), options = Self.options(library)
                let (holding, converting) = capturing ? (driver.render, driver.capture) : (driver.capture, driver.render)
                let aloopOut = AudioDevice.alsa("hw:Loopback,0,0", direction: .output), aloopIn = AudioDevice.alsa("hw:Loopback,1,0", direction: .input)
                try holding.initialize(device: capturing ? aloopOut : aloopIn, format: Self.device, options: options)
                try converting.initialize(device: capturing ? aloopIn : aloopOut, format: Self.app, options: options)
                XCTAssertFalse(holding.isConverting, "the holding side's device takes its format")
                let judged = try run(driver, converting: converting, render: capturing ? Self.device : Self.app, capture: capturing ? Self.app : Self.device,
                                     label: "\(library) " + (capturing ? "capture: device 44.1 kHz stereo → app 48 kHz mono S16" : "render: app 48 kHz mono S16 → device 44.1 kHz stereo")
                                         + ", attempt \(attempt)", last: attempt == Self.attempts)
                if judged { break }
            }
        }
    }

    /// Tries of each conversion: an attempt whose tone has fewer than `wholeWindows` whole windows
    /// (a busy host stalls the emulated guest and the loopback loses samples: gaps, not the
    /// converter's doing) is tried again; the first with enough, or the last, is judged.
    static let attempts = 3
    /// The 200 ms windows of whole tone (THD+N under -80 dB: no gap, no click) a judged attempt needs.
    static let wholeWindows = 3

    /// One attempt; returns whether it was judged (asserted on), false when it is to be tried again.
    private func run(_ driver: AudioDriver, converting side: AudioDriverSide, render: AudioFormat, capture: AudioFormat, label: String, last: Bool) throws -> Bool {
        defer { driver.render.terminate(); driver.capture.terminate() }
        XCTAssertEqual(side.deviceFormat, Self.device, "\(label): snd-aloop's other end holds the cable at its format")
        XCTAssertEqual(side.format, Self.app, "\(label): the bus carries the format asked for")
        XCTAssertTrue(side.isConverting)
        XCTAssertEqual(driver.renderFormat, render)
        XCTAssertEqual(driver.captureFormat, capture)
        let counting = AllocationProbe.unavailableReason == nil
        let probe = AudioAllocationProbe(warmUp: 10, measured: 60)
        if counting { side.periodObserver = probe.observer }

        let result = try AudioToneRun(driver: driver, format: render, captureFormat: capture).run(seconds: 2)
        let xruns = driver.render.statistics.xruns + driver.capture.statistics.xruns
        // 200 ms windows after the first 100 ms. The converter's output is judged on the windows
        // of whole tone (THD+N under -80 dB): a stalled guest puts gaps in some windows (the
        // emulator's timing, not the converter), and a window with a gap shows as one, never as
        // a clean tone at another pitch or level; a converter that distorts leaves no whole window.
        var windows: [(all: [SineFit], whole: [SineFit])] = []
        for channel in 0..<capture.channels {
            let samples = ToneAnalysis.channel(channel, of: result.captured, channels: capture.channels)
            let window = capture.sampleRate / 5
            var fits: [SineFit] = []
            var start = capture.sampleRate / 10
            while start + window <= samples.count - capture.sampleRate / 20 {
                if let fit = SineFit(Array(samples[start..<start + window]), sampleRate: capture.sampleRate) { fits.append(fit) }
                start += window
            }
            windows.append((fits, fits.filter { $0.thdPlusNoiseDecibels < -80 }))
        }
        if !last, windows.contains(where: { $0.whole.count < Self.wholeWindows }) {
            print("figure: snd-aloop \(label): whole windows \(windows.map { "\($0.whole.count) of \($0.all.count)" }), xruns \(xruns): the tone came back with gaps; trying again")
            return false
        }
        XCTAssertNotNil(result.roundTrip, "\(label): the tone came back")
        for (channel, fits) in windows.enumerated() {
            let whole = fits.whole
            guard whole.count >= Self.wholeWindows else {
                XCTFail("\(label) channel \(channel): \(whole.count) of \(fits.all.count) windows of whole tone (THD+N under -80 dB; median THD+N \(fits.all.map(\.thdPlusNoiseDecibels).sorted().dropFirst(fits.all.count / 2).first ?? .nan) dB), xruns \(xruns)")
                continue
            }
            func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
            let frequency = median(whole.map(\.frequency)), level = median(whole.map(\.levelDecibels))
            let thdn = median(whole.map(\.thdPlusNoiseDecibels))
            XCTAssertEqual(frequency, AudioToneRun.frequency, accuracy: 0.1, "\(label) channel \(channel): frequency")
            XCTAssertEqual(level, ToneAnalysis.sineDecibels(amplitude: AudioToneRun.amplitude), accuracy: 0.1, "\(label) channel \(channel): level")
            print(String(format: "figure: snd-aloop %@ channel %d: %.4f Hz, %.3f dBFS, THD+N %.1f dB (median of %d whole windows of 200 ms, of %d), xruns %d (render %d), estimated delay %.1f ms",
                         label, channel, frequency, level, thdn, whole.count, fits.all.count, xruns, driver.render.statistics.xruns, side.estimatedDelay.inMilliseconds))
        }
        if counting {
            XCTAssertEqual(probe.done.wait(timeout: .now() + 5), .success, "\(label): 70 periods on the converting side")
            print(String(format: "figure: %@: heap allocations on the converting audio thread over 60 periods: %llu, xruns %d; mean period cost %.1f µs converting, %.1f µs on the other side",
                         label, probe.allocations, xruns, side.statistics.meanPeriodCost.inMicroseconds,
                         (side === driver.render ? driver.capture : driver.render).statistics.meanPeriodCost.inMicroseconds))
            if xruns == 0 {
                XCTAssertEqual(probe.allocations, 0, "\(label): heap allocations on the converting thread (first in period \(probe.firstAllocatingPeriod))")
            } else {
                XCTAssertLessThanOrEqual(probe.allocations, UInt64(2 * xruns), "\(label): only xrun recovery allocates")
            }
        }
        return true
    }
}
