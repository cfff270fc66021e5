import Foundation
import Glibc
import MediaDevices
import XCTest
import TestSupport

/// A USB Audio Class 1 microphone (emulated in Tests/USBDevices, plugged into vhci-hcd) through
/// the real snd-usb-audio: listed by `AudioDevice` as `arecord -l` lists it, with 48 kHz mono
/// S16 as its only format; `AudioDriver` captures the device's tone at the right frequency and
/// level, sample for sample; unplugging it while recording (ALSA device loss) ends the capture
/// side with `.disconnected` and leaks nothing; `mediadevices record` writes the tone to a WAV.
final class USBMicrophoneTests: XCTestCase {
    override func setUpWithError() throws { try Rig.require() }

    /// The device's only format.
    static let format = AudioFormat(sampleRate: 48000, channels: 1, sampleFormat: .s16LE)

    /// 100 ms periods, 20 of them: a 2 s ALSA buffer. Under the rig's emulation the device
    /// delivers only ~270–800 of its 1 ms URBs per second, in bursts, so periods arrive late and
    /// unevenly: a reader that blocks in libasound (arecord) gets EIO once no period arrives
    /// within about 1.1 × the buffer time, and a short buffer overruns whenever a busy host
    /// stalls our audio thread (each overrun a jump in the tone). 2 s absorbs both; our thread
    /// polls and simply waits on.
    static let options = AudioStreamOptions(periodFrames: 4800, periods: 20)

    // MARK: Enumeration

    func testListedByAudioDeviceAsArecordListsIt() throws {
        let microphone = try USBMicrophone.plug()
        let devices = AudioDevice.scan().devices
        let (expected, listing) = try Rig.alsaPCMs("arecord -l")
        XCTAssertTrue(expected.contains("\(microphone.card),0"), "arecord -l lists the microphone:\n\(listing)")
        let ours = devices.filter { $0.direction == .input && $0.backend == .alsa && $0.name.hasPrefix("hw:") }
        XCTAssertEqual(Set(ours.map { "\($0.card!),\($0.deviceNumber!)" }), expected, "arecord -l:\n\(listing)")

        let input = try XCTUnwrap(devices.first { $0.name == microphone.hwName && $0.direction == .input }, "\(devices)")
        XCTAssertEqual(input.uniqueID, "alsa:hw:CARD=\(microphone.cardID),DEV=0")
        XCTAssertEqual(input.card, microphone.card)
        XCTAssertEqual(input.deviceNumber, 0)
        XCTAssertTrue(input.description.contains(USBMicrophone.product), input.description)
        XCTAssertTrue(AudioDevice.scan().inputs.contains { $0.name == "plughw:CARD=\(microphone.cardID),DEV=0" })
        XCTAssertFalse(devices.contains { $0.direction == .output && $0.card == microphone.card }, "a microphone only records")

        let formats = try input.supportedFormats()
        XCTAssertEqual(formats.sampleRates, 48000...48000)
        XCTAssertEqual(formats.standardSampleRates, [48000])
        XCTAssertEqual(formats.channels, 1...1)
        XCTAssertEqual(formats.sampleFormats, [.s16LE])
        print(String(format: "figure: USB microphone (snd-usb-audio) enumerated in %.2f s as %@ (card %d); formats %d…%d Hz, %d…%d ch, %@; arecord -l and AudioDevice.scan().inputs: %d hw: devices each",
                     microphone.enumerationSeconds, microphone.hwName, microphone.card, formats.sampleRates.lowerBound,
                     formats.sampleRates.upperBound, formats.channels.lowerBound, formats.channels.upperBound,
                     formats.sampleFormats.map(\.rawValue).joined(separator: ","), expected.count))
    }

    // MARK: Capture

    func testCaptureRecordsTheToneSampleForSample() throws {
        let microphone = try USBMicrophone.plug()
        let device = try XCTUnwrap(AudioDevice.scan().inputs.first { $0.name == microphone.hwName })
        let driver = AudioDriver()
        try driver.initializeCapture(device: device, format: Self.format, options: Self.options)
        XCTAssertEqual(driver.captureFormat, Self.format, "hw: takes the device's own format as asked")
        let sentBefore = microphone.samplesSent
        let started = Date()
        try driver.startCapture()
        let samples = Self.capture(driver, frames: 72_000)  // 1.5 s
        let elapsed = Date().timeIntervalSince(started)
        let stats = driver.capture.statistics
        let (period, buffer) = (driver.capture.periodFrames ?? 0, driver.capture.bufferFrames ?? 0)
        driver.capture.terminate()
        let sent = microphone.samplesSent - sentBefore

        XCTAssertNil(driver.capture.endError)
        XCTAssertEqual(samples.count, 72_000, "1.5 s captured")
        XCTAssertEqual(microphone.rateSetByHost, 48000, "snd-usb-audio set the endpoint's rate (SET_CUR)")
        XCTAssertLessThanOrEqual(UInt64(samples.count), sent, "never more samples than the device sent")
        let floats = samples.map { Float($0) / 32768 }
        let tone = AudioToneRun.assertTone(floats, format: Self.format, label: "USB microphone capture")
        // Without an overrun, the bus holds the device's samples exactly: none dropped, none repeated.
        var exact = "not checked (overrun)"
        if stats.xruns == 0 && stats.busShortfallSamples == 0 {
            let deviation = Self.firstDeviation(from: samples)
            XCTAssertNil(deviation.index, "sample \(deviation.index ?? 0) is off the device's sine by \(deviation.worst) LSB: a sample was dropped or repeated")
            exact = deviation.index == nil ? "all \(samples.count) samples exact (±\(deviation.worst) LSB)" : "mismatch"
        }
        print(String(format: "figure: USB microphone capture %@: %.3f Hz, %.2f dBFS (expected %.2f), %@; 1.5 s took %.2f s (device %.0f%% of real time), period %d, buffer %d, xruns %d, capture delay mean %.0f ms",
                     "\(Self.format)", tone?.frequency ?? .nan, tone?.level ?? .nan, ToneAnalysis.sineDecibels(amplitude: USBMicrophone.amplitude),
                     exact, elapsed, 150 / elapsed, period, buffer, stats.xruns, stats.meanDelay.inMicroseconds / 1000))
    }

    // MARK: Device loss

    func testUnplugWhileRecordingEndsWithDisconnectedAndLeaksNothing() throws {
        let microphone = try USBMicrophone.plug()
        let device = try XCTUnwrap(AudioDevice.scan().inputs.first { $0.name == microphone.hwName })
        XCTAssertFalse(Self.audioThreadRuns, "no audio thread before the test")
        let before = ProcessFigures.settled()
        let driver = AudioDriver()
        let ended = EndRecorder()
        driver.capture.onStop = { error in ended.record(error) }
        try driver.initializeCapture(device: device, format: Self.format, options: Self.options)
        try driver.startCapture()
        let recorded = Self.capture(driver, frames: 24_000)
        XCTAssertEqual(recorded.count, 24_000, "0.5 s recorded before the unplug")
        XCTAssertTrue(Self.audioThreadRuns)

        XCTAssertEqual(microphone.unplug(), 0)
        let unplugged = microphone.unplugTimeNanoseconds
        _ = Self.capture(driver, frames: .max, timeout: 10)  // drains until the side ends by itself
        XCTAssertFalse(driver.isCapturing, "the capture side ended by itself")
        ended.wait(seconds: 10)
        let (error, endedAt) = ended.value
        XCTAssertEqual(error?.code, .disconnected, "onStop: \(error.map { "\($0)" } ?? "nil")")
        XCTAssertEqual(driver.capture.endError?.code, .disconnected, "endError: \(driver.capture.endError.map { "\($0)" } ?? "nil")")
        let seconds = endedAt > unplugged ? Double(endedAt - unplugged) / 1e9 : .nan
        // The kernel's disconnect work plus our wake-up; a hang (a missed POLLERR, a 2 s poll
        // timeout going round) would not make it.
        XCTAssertLessThan(seconds, 3, "unplug to .disconnected")
        driver.capture.terminate()
        // Our PCM and wake-up eventfd are closed; the emulator's own USB/IP socket went with the unplug.
        let figuresAfter = ProcessFigures.assertDescriptorsBack(to: before, less: ["socket:"], "descriptors after the unplug")
        XCTAssertFalse(Self.audioThreadRuns, "the audio thread is gone")

        // The process goes on: the card leaves the list, and the microphone plugged in again records.
        USBMicrophone.waitUntilGone(card: microphone.card)
        XCTAssertFalse(AudioDevice.scan().inputs.contains { $0.name == microphone.hwName }, "the unplugged card is not listed")
        try microphone.replug()
        let again = AudioDriver()
        let replugged = try XCTUnwrap(AudioDevice.scan().inputs.first { $0.name == microphone.hwName })
        try again.initializeCapture(device: replugged, format: Self.format, options: Self.options)
        try again.startCapture()
        let after = Self.capture(again, frames: 24_000)
        again.capture.terminate()
        let tone = AudioToneRun.assertTone(after.map { Float($0) / 32768 }, format: Self.format, label: "after replug")
        print(String(format: "figure: USB microphone unplugged while recording: %@ %.0f ms after the unplug; fds %d before, %d after (-1: the emulator's socket); audio thread gone; replugged in %.2f s, records %.3f Hz again",
                     error.map { "\($0.code)" } ?? "nil", seconds * 1000, before.accountable.count, figuresAfter.accountable.count,
                     microphone.enumerationSeconds, tone?.frequency ?? .nan))
    }

    /// Issue 14: with `fallbackDevice` set to the default input, unplugging the microphone while
    /// recording moves the capture side there: `onFallback` says so, `onStop` hears nothing, and
    /// the same bus goes on with what the default input records (snd-aloop as card 0, a tone
    /// played into its other end).
    func testUnplugWhileRecordingFallsBackToTheDefaultInput() throws {
        try Rig.run("modprobe snd-aloop index=0")
        let cards = try String(contentsOfFile: "/proc/asound/cards", encoding: .utf8)
        XCTAssertTrue(cards.contains(" 0 [Loopback"), "the default input must be snd-aloop (card 0): \(cards)")
        // ALSA's `default` PCM (alsa-lib's built-in one: plughw:0 here; enumeration lists it only
        // when the configuration gives it a hint description, which the rig's does not).
        let fallback = AudioDevice.alsa("default", direction: .input)
        // The tone into the loopback's playback end whose capture end is card 0's device 0.
        let player = AudioDriver()
        try player.initializeRendering(device: .alsa("hw:Loopback,1,0", direction: .output), format: Self.format, options: Self.options)
        try player.startRendering()
        let tone = TonePump(driver: player, format: Self.format, keepSeconds: 0)
        tone.start()
        defer { tone.finish(); player.render.terminate() }

        let microphone = try USBMicrophone.plug()
        let device = try XCTUnwrap(AudioDevice.scan().inputs.first { $0.name == microphone.hwName })
        let driver = AudioDriver()
        let stops = StopCounter(driver)
        let fellBack = FallbackRecorder()
        driver.capture.fallbackDevice = fallback
        driver.capture.onFallback = { change, error in fellBack.record(change, error) }
        try driver.initializeCapture(device: device, format: Self.format, options: Self.options)
        try driver.startCapture()
        XCTAssertEqual(Self.capture(driver, frames: 24_000).count, 24_000, "0.5 s from the microphone")
        XCTAssertEqual(microphone.unplug(), 0)
        XCTAssertTrue(Soak.waitUntil(seconds: 10) { fellBack.count > 0 }, "onFallback after the unplug")
        let (change, error) = try XCTUnwrap(fellBack.first)
        XCTAssertEqual(error.code, .disconnected, String(describing: error))
        XCTAssertEqual(change.from?.name, microphone.hwName)
        XCTAssertEqual(change.to, fallback)
        XCTAssertTrue(driver.isCapturing, "the capture side runs on")
        XCTAssertEqual(driver.capture.device, fallback)
        // The bus goes on: what the default input records is the tone played into the loopback.
        _ = Self.capture(driver, frames: 48_000)  // whatever the two devices left in the bus
        let after = Self.capture(driver, frames: 48_000)
        XCTAssertEqual(after.count, 48_000, "a second from the default input")
        let measured = AudioToneRun.assertTone(after.map { Float($0) / 32768 }, format: Self.format, label: "after the fallback")
        XCTAssertEqual(stops.capture, 0, "onStop heard nothing: the side never ended")
        driver.stopCapture()
        XCTAssertEqual(stops.capture, 1)
        XCTAssertEqual(stops.errors, 0)
        driver.capture.terminate()
        print(String(format: "figure: USB microphone unplugged while recording, fallback: %@ → %@ (opened in %.1f ms), the bus went on with %.3f Hz from the default input",
                     change.from?.uniqueID ?? "?", change.to.uniqueID, change.open.inSeconds * 1000, measured?.frequency ?? .nan))
    }

    /// What `onFallback` reported, from the audio thread.
    final class FallbackRecorder: @unchecked Sendable {
        private let lock = NSLock()
        private var seen: [(AudioDeviceSwitch, MediaDevicesError)] = []
        func record(_ change: AudioDeviceSwitch, _ error: MediaDevicesError) { lock.withLock { seen.append((change, error)) } }
        var count: Int { lock.withLock { seen.count } }
        var first: (AudioDeviceSwitch, MediaDevicesError)? { lock.withLock { seen.first } }
    }

    // MARK: Command line

    func testRecordCommandWritesTheTone() throws {
        let microphone = try USBMicrophone.plug()
        // As a user would: the card's own format on hw:, and through plughw: with the CLI's
        // default 2 channels (the plug layer copies mono into both). The 2 s buffer as above.
        // The first run shows the level meter on standard error (not a terminal: one line per 100 ms).
        let runs = [(microphone.hwName, "--channels 1 --meter", AudioFormat(sampleRate: 48000, channels: 1, sampleFormat: .s16LE)),
                    ("plughw:CARD=\(microphone.cardID),DEV=0", "", AudioFormat(sampleRate: 48000, channels: 2, sampleFormat: .s16LE))]
        for (name, extra, format) in runs {
            let output = "\(Rig.scratch)/usb-microphone-\(format.channels).wav"
            let run = Rig.shell("\(Rig.tool) record \(name) --seconds 1 \(extra) --period 4800 --periods 20 --output \(output) --json")
            XCTAssertEqual(run.status, 0, run.errors + run.output)
            let printed = run.output
            let result = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(printed.utf8)) as? [String: Any], printed)
            if extra.contains("--meter") {
                // "ch1 [#########################    |  ] rms   -9.0 peak   -6.0 dBFS": the tone's RMS and peak.
                let lines = run.errors.split(separator: "\n").filter { $0.hasPrefix("ch1 [") }
                XCTAssertEqual(lines.count, 10, "one meter line per 100 ms of 1 s:\n\(run.errors)")
                for line in lines {
                    let words = line.split(separator: " ")
                    let rms = words.firstIndex(of: "rms").flatMap { Double(words[$0 + 1]) }
                    let peak = words.firstIndex(of: "peak").flatMap { Double(words[$0 + 1]) }
                    XCTAssertEqual(rms ?? .nan, ToneAnalysis.sineDecibels(amplitude: USBMicrophone.amplitude), accuracy: 0.2, String(line))
                    XCTAssertEqual(peak ?? .nan, 20 * log10(USBMicrophone.amplitude), accuracy: 0.2, String(line))
                }
                print("figure: mediadevices record --meter: \(lines.count) lines, e.g. \(lines.first ?? "none")")
            }
            XCTAssertEqual(result["device"] as? String, "alsa:\(name)")
            XCTAssertEqual(result["frames"] as? Int, 48000)
            let wav = try WAVFile(path: output)
            XCTAssertEqual(wav.format, format)
            XCTAssertEqual(wav.frames, 48000)
            let tone = AudioToneRun.assertTone(wav.floatSamples(), format: wav.format, label: "record \(name)")
            let stats = result["statistics"] as? [String: Any]
            print(String(format: "figure: mediadevices record %@ --seconds 1: %d frames of %@, %.3f Hz, %.2f dBFS, achieved rate %.0f Hz",
                         name, wav.frames, "\(wav.format)", tone?.frequency ?? .nan, tone?.level ?? .nan,
                         stats?["achievedSampleRate"] as? Double ?? .nan))
        }
    }

    /// The chunk sequence on a real microphone: 10 ms chunks, contiguous, each at the tone's
    /// level; it ends (nil) after `stopCapture()`, and throws `.disconnected` when the microphone
    /// is unplugged.
    func testCapturedChunksCarryTheToneAndEndWithTheRun() async throws {
        let microphone = try USBMicrophone.plug()
        let device = try XCTUnwrap(AudioDevice.scan().inputs.first { $0.name == microphone.hwName })
        let expected = ToneAnalysis.sineDecibels(amplitude: USBMicrophone.amplitude)
        for ending in ["stop", "unplug"] {
            let driver = AudioDriver()
            try await driver.initializeCapture(device: device, format: Self.format, options: Self.options)
            try driver.startCapture()
            var chunks = 0, nextFrame = 0, worst = 0.0
            var thrown: Error?
            do {
                for try await chunk in driver.capturedChunks() {
                    XCTAssertEqual(chunk.startFrame, nextFrame, "chunks are contiguous")
                    nextFrame += chunk.frames
                    chunks += 1
                    if chunks < 100 {
                        XCTAssertEqual(chunk.frames, 480, "10 ms at 48 kHz")
                        worst = max(worst, abs(chunk.level.rmsDecibels[0] - expected))
                    }
                    if chunks == 100 {
                        if ending == "stop" { driver.stopCapture() } else { microphone.unplug() }
                    }
                }
            } catch {
                thrown = error
            }
            XCTAssertGreaterThanOrEqual(chunks, 100)
            XCTAssertLessThanOrEqual(worst, 0.3, "every 10 ms chunk at the tone's RMS (\(expected) dBFS)")
            if ending == "stop" {
                XCTAssertNil(thrown, "after stopCapture the sequence ends")
            } else {
                XCTAssertEqual((thrown as? MediaDevicesError)?.code, .disconnected, "\(String(describing: thrown))")
            }
            driver.capture.terminate()
            print(String(format: "figure: USB microphone chunks (%@): %d chunks of 10 ms, RMS within %.2f dB of %.2f dBFS, then %@",
                         ending, chunks, worst, expected, thrown.map { "\($0)" } ?? "the end"))
        }
        try microphone.replug()
    }

    // MARK: Helpers

    /// Reads `frames` samples (mono) from the capture bus, until the side ends or `timeout` s.
    static func capture(_ driver: AudioDriver, frames: Int, timeout: Double = 60) -> [Int16] {
        var samples: [Int16] = []
        var chunk = [Int16](repeating: 0, count: 8192)
        let deadline = Date().addingTimeInterval(timeout)
        while samples.count < frames && Date() < deadline {
            let want = min(chunk.count, frames - samples.count)
            let got = chunk.withUnsafeMutableBufferPointer { driver.bus.readCaptureData(into: UnsafeMutableBufferPointer(rebasing: $0[0..<want])) }
            if got > 0 {
                samples.append(contentsOf: chunk[0..<got])
            } else {
                if !driver.isCapturing { break }
                usleep(5000)
            }
        }
        return samples
    }

    /// Compares `samples` with the device's sine: fits amplitude and phase (least squares over
    /// the first 100 ms), then checks every sample within 3 LSB (S16 rounding and the fit).
    /// Returns the first sample off by more, and the worst deviation seen.
    static func firstDeviation(from samples: [Int16]) -> (index: Int?, worst: Int) {
        let omega = 2 * Double.pi * USBMicrophone.frequency / Double(USBMicrophone.rate)
        let fit = min(samples.count, 4800)
        var ss = 0.0, sc = 0.0, cc = 0.0, xs = 0.0, xc = 0.0
        for n in 0..<fit {
            let s = sin(Double(n) * omega), c = cos(Double(n) * omega), x = Double(samples[n])
            ss += s * s; sc += s * c; cc += c * c; xs += x * s; xc += x * c
        }
        let determinant = ss * cc - sc * sc
        let a = (xs * cc - xc * sc) / determinant, b = (xc * ss - xs * sc) / determinant  // x ≈ a sin + b cos
        var worst = 0
        for n in 0..<samples.count {
            let predicted = a * sin(Double(n) * omega) + b * cos(Double(n) * omega)
            let deviation = Int((Double(samples[n]) - predicted).magnitude.rounded(.up))
            worst = max(worst, deviation)
            if deviation > 3 { return (n, deviation) }
        }
        return (nil, worst)
    }

    /// Whether a thread named `audio-capture` (the capture side's thread) runs in this process.
    static var audioThreadRuns: Bool {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.contains { task in
            (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8))?.hasPrefix("audio-capture") ?? false
        }
    }

    /// What `onStop` reported, and when (CLOCK_MONOTONIC ns), from the audio thread.
    final class EndRecorder: @unchecked Sendable {
        private let lock = NSLock()
        private var error: MediaDevicesError?
        private var time: UInt64 = 0

        func record(_ error: MediaDevicesError?) {
            let now = USBMicrophone.monotonicNanoseconds()
            lock.withLock { (self.error, self.time) = (error, now) }
        }

        var value: (MediaDevicesError?, UInt64) { lock.withLock { (error, time) } }

        /// Waits up to `seconds` for `onStop` to have been called (it runs on the audio thread
        /// just after `isCapturing` turns false; on a busy machine that can be a while later).
        func wait(seconds: Double) {
            let deadline = Date().addingTimeInterval(seconds)
            while value.1 == 0 && Date() < deadline { usleep(5_000) }
        }
    }
}
