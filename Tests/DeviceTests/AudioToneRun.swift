import Foundation
import MediaDevices
import XCTest
import TestSupport

/// Plays a 997 Hz tone through an `AudioDriver`'s render side and records through its capture
/// side at the same time, as an application would: one thread keeps the render bus a few
/// periods ahead and drains the capture bus. Measures the round trip from writing the tone's
/// first sample into the bus to reading it back out.
struct AudioToneRun {
    static let frequency = 997.0
    static let amplitude = 0.5

    let driver: AudioDriver
    /// The render bus's format (and the capture bus's unless `captureFormat` says otherwise).
    let format: AudioFormat
    /// The capture bus's format when it differs from the render bus's (a converting side).
    var captureFormat: AudioFormat? = nil

    /// The result of a run.
    struct Result {
        /// Captured samples from the tone's onset on, interleaved floats.
        var captured: [Float] = []
        /// Seconds from writing the onset into the render bus to reading it from the capture bus.
        var roundTrip: Double?
        /// Samples captured before the onset arrived.
        var leadSamples = 0
        /// How far ahead the feeding thread keeps the render bus while it writes the tone (seconds).
        var feedAhead = 0.0
        /// The longest the feeding thread slept while it still had tone to write, for a 1 ms
        /// `usleep` (seconds): the machine's, not the library's (no library call is in it). Longer
        /// than `feedAhead`, the bus ran dry because this thread was not scheduled.
        var longestFeederSleep = 0.0
        /// Whether the feeding thread was kept off the CPU longer than the bus was ahead.
        var feederStarved: Bool { longestFeederSleep > feedAhead }
    }

    /// Runs: `lead` seconds of nothing (the render side plays silence), then `seconds` of tone
    /// with a gap of `gap` seconds after `gapAfter` seconds where the application writes nothing.
    /// While the tone plays, the bus is kept `ahead` seconds full (at least 3 periods), so a test
    /// thread starved on a busy host does not leave gaps; the onset goes into an empty bus, so the
    /// round trip is the device's and server's, whatever `ahead` is.
    func run(lead: Double = 0.3, seconds: Double, gapAfter: Double? = nil, gap: Double = 0, ahead: Double = 0.2) throws -> Result {
        let channels = format.channels
        let period = driver.render.periodFrames ?? 512
        // One second of the tone, made before the run: a whole number of cycles (the frequency is
        // whole hertz), so it repeats without a seam, and the feeding loop only copies. Computing
        // sines there, and looking for the onset through a generic `firstIndex`, took the emulated
        // guest's CPU from the audio threads the run measures (a debug build under emulation).
        var sine = SineGenerator(frequency: Self.frequency, amplitude: Self.amplitude, sampleRate: format.sampleRate)
        let second = sine.samples(frames: format.sampleRate, channels: channels)
        var position = 0
        let threshold = Float(Self.amplitude) * 0.3
        let queued = max(3 * period, Int(ahead * Double(format.sampleRate)))
        let captured = captureFormat ?? format
        var incoming = [Float](repeating: 0, count: 8192 * captured.channels)
        let capturedFrames = Int(seconds * Double(captured.sampleRate))
        var result = Result()
        result.feedAhead = Double(queued) / Double(format.sampleRate)
        let start = Date()
        var onsetWritten: Date?
        var framesWritten = 0
        let totalFrames = Int(seconds * Double(format.sampleRate))
        let gapStart = gapAfter.map { Int($0 * Double(format.sampleRate)) }
        var gapUntil: Date?
        try driver.startCapture()
        try driver.startRendering()
        defer { driver.stopRendering(); driver.stopCapture() }
        let deadline = start.addingTimeInterval(lead + seconds + gap + 10)
        while Date() < deadline {
            guard driver.isCapturing, driver.isRendering else { break }
            let now = Date()
            // Feed: after the lead, keep `queued` frames in the bus until the tone is all written.
            if now.timeIntervalSince(start) >= lead && framesWritten < totalFrames {
                if let gapStart, framesWritten >= gapStart, gapUntil == nil { gapUntil = now.addingTimeInterval(gap) }
                let paused = gapUntil.map { now < $0 } ?? false
                if !paused {
                    while framesWritten < totalFrames && driver.bus.renderSamplesQueued < queued * channels {
                        let count = min(period * channels, second.count - position)
                        let written = second.withUnsafeBufferPointer { driver.bus.writeRenderData(UnsafeBufferPointer(rebasing: $0[position..<position + count])) }
                        if onsetWritten == nil { onsetWritten = Date() }
                        position = (position + written) % second.count
                        framesWritten += written / channels
                        if written == 0 { break }
                        if let gapStart, gapUntil == nil, framesWritten >= gapStart { break }
                    }
                }
            }
            // Drain.
            let got = incoming.withUnsafeMutableBufferPointer { driver.bus.readCaptureData(into: $0) }
            if got > 0 {
                if result.roundTrip == nil, let onsetWritten {
                    if let index = Self.firstSample(above: threshold, in: incoming, count: got) {
                        // As the application sees it: from writing the onset to reading it back.
                        result.roundTrip = Date().timeIntervalSince(onsetWritten)
                        result.leadSamples += index
                        result.captured.append(contentsOf: incoming[index..<got])
                    } else {
                        result.leadSamples += got
                    }
                } else if result.roundTrip != nil {
                    result.captured.append(contentsOf: incoming[0..<got])
                }
            }
            if framesWritten >= totalFrames && result.captured.count / captured.channels >= capturedFrames { break }
            let slept = DispatchTime.now().uptimeNanoseconds
            usleep(1000)
            if onsetWritten != nil && framesWritten < totalFrames {
                result.longestFeederSleep = max(result.longestFeederSleep, Double(DispatchTime.now().uptimeNanoseconds - slept) / 1e9)
            }
        }
        return result
    }

    /// The index of the first of `samples[0..<count]` whose magnitude exceeds `threshold`.
    static func firstSample(above threshold: Float, in samples: [Float], count: Int) -> Int? {
        samples.withUnsafeBufferPointer { buffer in
            var index = 0
            while index < count {
                if abs(buffer[index]) > threshold { return index }
                index += 1
            }
            return nil
        }
    }

    /// Checks frequency (within 1 Hz, per channel) and level (within 1 dB) of the captured tone
    /// from `skip` seconds after the onset on.
    /// The tone as measured on one channel: the sine fitted to each 100 ms window after `skip`
    /// (the last 50 ms left out), and those of whole tone among them (THD+N under -40 dB). A
    /// stalled guest puts gaps (silence played for what arrived late, counted by the library as
    /// xruns or shortfall) into some windows; a window with a gap shows as one (its THD+N is at
    /// best about -20 dB), never as a clean tone at another pitch or level. So the tone is judged
    /// on its whole windows: a path that scales, shifts or distorts the tone leaves none right.
    struct ChannelTone {
        /// Every window's fit.
        let windows: [SineFit]
        /// The windows of whole tone.
        let whole: [SineFit]
        /// Median frequency and level of the whole windows (nil without enough of them).
        var measured: (frequency: Double, level: Double)? {
            guard whole.count >= AudioToneRun.wholeWindows else { return nil }
            func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
            return (median(whole.map(\.frequency)), median(whole.map(\.levelDecibels)))
        }
    }

    /// How many whole 100 ms windows a channel needs for its tone to be judged.
    static let wholeWindows = 3

    /// Each channel of `captured` measured (`ChannelTone`); nil when too little was captured.
    static func channelTones(_ captured: [Float], format: AudioFormat, skip: Double) -> [ChannelTone]? {
        let frames = captured.count / format.channels
        let first = Int(skip * Double(format.sampleRate))
        guard frames > first + format.sampleRate / 4 else { return nil }
        return (0..<format.channels).map { channel in
            let samples = ToneAnalysis.channel(channel, of: captured, channels: format.channels)
            let window = format.sampleRate / 10
            var fits: [SineFit] = []
            var start = first
            while start + window <= samples.count - format.sampleRate / 20 {
                if let fit = SineFit(Array(samples[start..<start + window]), sampleRate: format.sampleRate) { fits.append(fit) }
                start += window
            }
            return ChannelTone(windows: fits, whole: fits.filter { $0.thdPlusNoiseDecibels < -40 })
        }
    }

    /// Whether `captured` holds the tone whole (what `assertTone` checks), without failing.
    /// `gainDecibels` as in `assertTone`.
    static func isWholeTone(_ captured: [Float], format: AudioFormat, skip: Double = 0.1, gainDecibels: Double = 0) -> Bool {
        guard let tones = channelTones(captured, format: format, skip: skip) else { return false }
        return tones.allSatisfy { tone in
            guard let (measured, level) = tone.measured else { return false }
            return abs(measured - frequency) <= 1 && abs(level - ToneAnalysis.sineDecibels(amplitude: amplitude) - gainDecibels) <= 1
        }
    }

    /// `gainDecibels`: what the path adds to the tone's level (a server's channel mixing).
    /// Returns the worst channel's frequency and level, for callers that print them.
    @discardableResult
    static func assertTone(_ captured: [Float], format: AudioFormat, skip: Double = 0.1, label: String, gainDecibels: Double = 0,
                           file: StaticString = #filePath, line: UInt = #line) -> (frequency: Double, level: Double)? {
        guard let tones = channelTones(captured, format: format, skip: skip) else {
            XCTFail("\(label): only \(captured.count / format.channels) frames of tone captured", file: file, line: line)
            return nil
        }
        var worst: (Double, Double) = (.nan, .nan)
        let expected = ToneAnalysis.sineDecibels(amplitude: amplitude) + gainDecibels
        for (channel, tone) in tones.enumerated() {
            guard let (measured, level) = tone.measured else {
                XCTFail("\(label) channel \(channel): \(tone.whole.count) of \(tone.windows.count) windows of 100 ms hold the tone whole (THD+N under -40 dB; need \(wholeWindows)); THD+N per window: \(tone.windows.map { String(format: "%.0f", $0.thdPlusNoiseDecibels) })",
                        file: file, line: line)
                return nil
            }
            XCTAssertEqual(measured, frequency, accuracy: 1, "\(label) channel \(channel): frequency", file: file, line: line)
            XCTAssertEqual(level, expected, accuracy: 1, "\(label) channel \(channel): level in dBFS (median of \(tone.whole.count) whole windows of \(tone.windows.count))", file: file, line: line)
            if worst.0.isNaN || abs(measured - frequency) >= abs(worst.0 - frequency) { worst.0 = measured }
            if worst.1.isNaN || abs(level - expected) >= abs(worst.1 - expected) { worst.1 = level }
        }
        return worst
    }
}
