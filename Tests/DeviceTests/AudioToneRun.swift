import Foundation
import MediaDevices
import XCTest

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
    }

    /// Runs: `lead` seconds of nothing (the render side plays silence), then `seconds` of tone
    /// with a gap of `gap` seconds after `gapAfter` seconds where the application writes nothing.
    /// While the tone plays, the bus is kept `ahead` seconds full (at least 3 periods), so a test
    /// thread starved on a busy host does not leave gaps; the onset goes into an empty bus, so the
    /// round trip is the device's and server's, whatever `ahead` is.
    func run(lead: Double = 0.3, seconds: Double, gapAfter: Double? = nil, gap: Double = 0, ahead: Double = 0.2) throws -> Result {
        var sine = SineGenerator(frequency: Self.frequency, amplitude: Self.amplitude, sampleRate: format.sampleRate)
        let channels = format.channels
        let period = driver.render.periodFrames ?? 512
        var chunk = [Float](repeating: 0, count: period * channels)
        let queued = max(3 * period, Int(ahead * Double(format.sampleRate)))
        let captured = captureFormat ?? format
        var incoming = [Float](repeating: 0, count: 8192 * captured.channels)
        let capturedFrames = Int(seconds * Double(captured.sampleRate))
        var result = Result()
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
                        chunk.withUnsafeMutableBufferPointer { sine.fill($0, channels: channels) }
                        let written = chunk.withUnsafeBufferPointer { driver.bus.writeRenderData($0) }
                        if onsetWritten == nil { onsetWritten = Date() }
                        framesWritten += written / channels
                        if let gapStart, gapUntil == nil, framesWritten >= gapStart { break }
                    }
                }
            }
            // Drain.
            let got = incoming.withUnsafeMutableBufferPointer { driver.bus.readCaptureData(into: $0) }
            if got > 0 {
                if result.roundTrip == nil, let onsetWritten {
                    if let index = incoming[0..<got].firstIndex(where: { abs($0) > Float(Self.amplitude) * 0.3 }) {
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
            usleep(1000)
        }
        return result
    }

    /// Checks frequency (within 1 Hz, per channel) and level (within 1 dB) of the captured tone
    /// from `skip` seconds after the onset on.
    /// Whether `captured` holds the tone whole (what `assertTone` checks), without failing.
    /// `gainDecibels` as in `assertTone`.
    static func isWholeTone(_ captured: [Float], format: AudioFormat, skip: Double = 0.1, gainDecibels: Double = 0) -> Bool {
        let frames = captured.count / format.channels
        let first = Int(skip * Double(format.sampleRate))
        guard frames > first + format.sampleRate / 4 else { return false }
        return (0..<format.channels).allSatisfy { channel in
            let samples = Array(ToneAnalysis.channel(channel, of: captured, channels: format.channels)[first...].dropLast(format.sampleRate / 20))
            guard let measured = ToneAnalysis.medianFrequency(of: samples, sampleRate: format.sampleRate, window: 0.05) else { return false }
            let level = ToneAnalysis.medianRMSDecibels(of: samples, sampleRate: format.sampleRate)
            return abs(measured - frequency) <= 1 && abs(level - ToneAnalysis.sineDecibels(amplitude: amplitude) - gainDecibels) <= 1
        }
    }

    /// `gainDecibels`: what the path adds to the tone's level (a server's channel mixing).
    static func assertTone(_ captured: [Float], format: AudioFormat, skip: Double = 0.1, label: String, gainDecibels: Double = 0,
                           file: StaticString = #filePath, line: UInt = #line) -> (frequency: Double, level: Double)? {
        let frames = captured.count / format.channels
        let first = Int(skip * Double(format.sampleRate))
        guard frames > first + format.sampleRate / 4 else {
            XCTFail("\(label): only \(frames) frames of tone captured", file: file, line: line)
            return nil
        }
        var worst: (Double, Double) = (.nan, .nan)
        for channel in 0..<format.channels {
            let samples = Array(ToneAnalysis.channel(channel, of: captured, channels: format.channels)[first...].dropLast(format.sampleRate / 20))
            // 50 ms windows: an xrun's phase jump spoils one window, the median ignores it.
            guard let measured = ToneAnalysis.medianFrequency(of: samples, sampleRate: format.sampleRate, window: 0.05) else {
                XCTFail("\(label) channel \(channel): no tone found", file: file, line: line)
                return nil
            }
            // The median of 50 ms windows too: the tone's level, not the dropouts' (counted apart).
            let level = ToneAnalysis.medianRMSDecibels(of: samples, sampleRate: format.sampleRate)
            let expected = ToneAnalysis.sineDecibels(amplitude: amplitude) + gainDecibels
            XCTAssertEqual(measured, frequency, accuracy: 1, "\(label) channel \(channel): frequency", file: file, line: line)
            XCTAssertEqual(level, expected, accuracy: 1, "\(label) channel \(channel): level in dBFS", file: file, line: line)
            if worst.0.isNaN || abs(measured - frequency) >= abs(worst.0 - frequency) { worst.0 = measured }
            if worst.1.isNaN || abs(level - expected) >= abs(worst.1 - expected) { worst.1 = level }
        }
        return worst
    }
}
