import Foundation
import MediaDevices
import TestSupport
import XCTest

/// ALSA through snd-aloop: a tone rendered into hw:Loopback,0,0 comes back on hw:Loopback,1,0
/// at the right frequency and level; xruns are counted and recovered; enumeration agrees with
/// `aplay -l` / `arecord -l`; `record` and `play` work end to end.
final class AudioLoopbackTests: XCTestCase {
    override func setUpWithError() throws {
        try Rig.require()
        try Rig.run("modprobe snd-aloop")
        for _ in 0..<100 { guard !FileManager.default.fileExists(atPath: "/dev/snd/pcmC0D1c") else { break }; usleep(20_000) }
    }

    private func loopbackDriver(_ format: AudioFormat, options: AudioStreamOptions = AudioStreamOptions(periodFrames: 512, periods: 4)) throws -> AudioDriver {
        let driver = AudioDriver()
        try driver.initializeRendering(device: .alsa("hw:Loopback,0,0", direction: .output), format: format, options: options)
        try driver.initializeCapture(device: .alsa("hw:Loopback,1,0", direction: .input), format: format, options: options)
        XCTAssertEqual(driver.renderFormat, format, "hw:Loopback takes the format as asked")
        XCTAssertEqual(driver.captureFormat, format)
        return driver
    }

    func testToneRoundTripAtEveryRateChannelCountAndFormat() throws {
        for rate in [44100, 48000] {
            for channels in [1, 2] {
                for sampleFormat in [SampleFormat.s16LE, .floatLE] {
                    let format = AudioFormat(sampleRate: rate, channels: channels, sampleFormat: sampleFormat)
                    let label = "\(format)"
                    // Up to three tries: a try whose tone broke while the emulated guest stalled past
                    // the device's buffer (an xrun, reported and recovered) or starved the test's own
                    // feeding thread (a render bus shortfall: the application had nothing to give)
                    // says nothing about the library, and is tried again; one that broke without
                    // either, or the last, is judged (seen once with two busy loops beside the rig).
                    var tried: (driver: AudioDriver, result: AudioToneRun.Result)?
                    for attempt in 1...3 {
                        let driver = try loopbackDriver(format)
                        let result = try AudioToneRun(driver: driver, format: format).run(seconds: 0.8)
                        let render = driver.render.statistics, capture = driver.capture.statistics
                        let starved = render.xruns + capture.xruns > 0 || render.busShortfallSamples > 0
                        if attempt < 3 && starved && !AudioToneRun.isWholeTone(result.captured, format: format) {
                            print("figure: ALSA snd-aloop \(label), attempt \(attempt): the tone broke while the guest stalled (xruns \(render.xruns)/\(capture.xruns), render bus shortfall \(render.busShortfallSamples) samples); trying again")
                            driver.render.terminate()
                            driver.capture.terminate()
                            continue
                        }
                        tried = (driver, result)
                        break
                    }
                    guard let (driver, result) = tried else { continue }
                    defer { driver.render.terminate(); driver.capture.terminate() }
                    XCTAssertNotNil(result.roundTrip, "\(label): the tone came back")
                    guard let (frequency, level) = AudioToneRun.assertTone(result.captured, format: format, label: label) else { continue }
                    let render = driver.render.statistics, capture = driver.capture.statistics
                    XCTAssertGreaterThan(render.delayFrames + capture.delayFrames, 0, "delays are measured from the device")
                    XCTAssertLessThanOrEqual(render.maxDelay.inMicroseconds, Double(driver.render.bufferFrames!) / Double(rate) * 1e6 + 1)
                    // Loose: under emulation on a loaded host the guest stalls, and aloop's capture rate
                    // with it. A stall long enough to overrun or underrun a device (an xrun, which the
                    // side reports and recovers) makes the rate the emulator's, not ours: judged only
                    // on runs without one.
                    if render.xruns == 0 && capture.xruns == 0 {
                        XCTAssertEqual(capture.achievedSampleRate, Double(rate), accuracy: Double(rate) * 0.3, "\(label): capture rate")
                    }
                    print(String(format: "figure: ALSA snd-aloop %@: %.3f Hz, %.2f dBFS (expected %.2f), round trip %.1f ms (period %d, buffer %d), render delay mean %.1f ms, capture delay mean %.1f ms, capture rate %.0f Hz, xruns %d/%d",
                                 label, frequency, level, ToneAnalysis.sineDecibels(amplitude: AudioToneRun.amplitude),
                                 (result.roundTrip ?? 0) * 1000, driver.render.periodFrames!, driver.render.bufferFrames!,
                                 render.meanDelay.inMicroseconds / 1000, capture.meanDelay.inMicroseconds / 1000, capture.achievedSampleRate, render.xruns, capture.xruns))
                }
            }
        }
    }

    /// A capture thread that fell behind (its period observer takes two periods' time, as voice
    /// processing in a debug build beside busy loops did) stops within a few periods: `stop()`
    /// does not wait for it to drain what the device's buffer holds (two seconds here).
    func testStopIsPromptWhileTheCaptureThreadIsBehind() throws {
        let format = AudioFormat(sampleRate: 48000, channels: 1, sampleFormat: .s16LE)
        let driver = try loopbackDriver(format, options: AudioStreamOptions(periodFrames: 480, periods: 200))
        defer { driver.render.terminate(); driver.capture.terminate() }
        driver.capture.periodObserver = { _ in usleep(20_000) }  // 20 ms of work per 10 ms period
        try driver.startRendering()
        try driver.startCapture()
        Thread.sleep(forTimeInterval: 1.5)  // ~0.75 s behind; the device holds 2 s before an overrun
        let behind = driver.capture.statistics
        let started = Date()
        driver.stopCapture()
        let seconds = Date().timeIntervalSince(started)
        XCTAssertFalse(driver.isCapturing)
        XCTAssertLessThan(seconds, 0.5, "stop() returned within a few periods though the thread was behind (\(behind))")
        print(String(format: "figure: capture thread behind (20 ms of work per 10 ms period, 2 s device buffer): stop() returned in %.0f ms", seconds * 1000))
    }

    /// A render side starved by the application (a 500 ms gap in what it writes) recovers: told
    /// not to fill with silence it lets the device underrun and restarts it; filling with
    /// silence it counts the shortfall on the bus. After the gap the tone plays whole again. The
    /// test's own thread feeds the tone 100 ms ahead; an attempt in which that thread was kept
    /// off the CPU longer (`AudioToneRun.Result.feederStarved`: the machine's doing, a stalled
    /// emulator under load) and the tone broke is run again, up to three times; a broken tone
    /// with the feeder on time fails at once, and so does a feeder starved in all three.
    func testStarvedRenderSideUnderrunsAndRecovers() throws {
        let format = AudioFormat(sampleRate: 48000, channels: 1, sampleFormat: .s16LE)
        // Told not to fill with silence, the render side lets the device underrun.
        // 100 ms ahead and a 500 ms gap: the gap outlasts what the bus and the device hold
        // (143 ms) by far, so the device underruns; after it, 100 ms ahead keeps the tone whole
        // through the test's own feeding being late on a busy host (3 periods, 32 ms, did not:
        // its tail broke under two busy loops, an underrun of the test's making).
        let (xruns, endError) = try Self.untilFedOnTime("after the underrun", format: format) {
            let driver = try loopbackDriver(format, options: AudioStreamOptions(periodFrames: 512, periods: 4, fillsSilenceOnUnderrun: false))
            defer { driver.render.terminate(); driver.capture.terminate() }
            let result = try AudioToneRun(driver: driver, format: format).run(seconds: 1.5, gapAfter: 0.3, gap: 0.5, ahead: 0.1)
            return (result, (driver.render.statistics.xruns, driver.render.endError))
        }
        XCTAssertGreaterThanOrEqual(xruns, 1, "a 500 ms gap with 100 ms queued and a 43 ms buffer underruns the device")
        XCTAssertNil(endError, "the underrun was recovered, not fatal")

        // Filling with silence instead: no device xrun, the shortfall is counted on the bus.
        let stats = try Self.untilFedOnTime("after the gap", format: format) {
            let filling = try loopbackDriver(format)
            defer { filling.render.terminate(); filling.capture.terminate() }
            let result = try AudioToneRun(driver: filling, format: format).run(seconds: 1.5, gapAfter: 0.3, gap: 0.5, ahead: 0.1)
            return (result, filling.render.statistics)
        }
        XCTAssertGreaterThan(stats.busShortfallSamples, format.sampleRate / 10, "the gap is counted as missing samples")
        print("figure: starved render side: \(xruns) ALSA underrun(s) recovered; with silence fill \(stats.busShortfallSamples) missing samples counted, \(stats.xruns) xruns")
    }

    /// Runs `attempt` (a tone run and what else it measured) until the last 0.5 s captured is
    /// the tone whole, at most three times: a broken tone is judged (`AudioToneRun.assertTone`)
    /// at once when the test's feeding thread kept the bus ahead, and run again when it was kept
    /// off the CPU longer; starved in all three, the test fails. Returns the last attempt's extra.
    static func untilFedOnTime<T>(_ label: String, format: AudioFormat, attempts: Int = 3,
                                  _ attempt: () throws -> (AudioToneRun.Result, T), file: StaticString = #filePath, line: UInt = #line) throws -> T {
        var last: T?
        for number in 1...attempts {
            let (result, extra) = try attempt()
            last = extra
            let tail = Array(result.captured.suffix(format.sampleRate / 2))
            if AudioToneRun.isWholeTone(tail, format: format, skip: 0) { return extra }
            if !result.feederStarved {
                _ = AudioToneRun.assertTone(tail, format: format, skip: 0, label: label, file: file, line: line)
                return extra
            }
            print(String(format: "%@: attempt %d of %d broke while the test's feeding thread slept %.0f ms with the bus %.0f ms ahead (the machine's stall): again",
                         label, number, attempts, result.longestFeederSleep * 1000, result.feedAhead * 1000))
        }
        XCTFail("\(label): in all \(attempts) attempts the tone broke while the test's feeding thread was kept off the CPU longer than the bus was ahead: is a thread of the library taking the CPU?",
                file: file, line: line)
        return last!
    }

    func testAudioThreadsAllocateNothingPerPeriod() throws {
        try Rig.requireAllocationCounting()
        let format = AudioFormat(sampleRate: 48000, channels: 2, sampleFormat: .floatLE)
        // Steady state must not allocate. Recovering from an xrun (which a loaded, emulated
        // host causes now and then) is allowed a bounded cost, so an attempt with xruns is
        // repeated; if every attempt had xruns, allocations must stay within 2 per xrun.
        var last: (capture: UInt64, render: UInt64, xruns: Int) = (0, 0, 0)
        for attempt in 1...3 {
            let driver = try loopbackDriver(format, options: AudioStreamOptions(periodFrames: 256, periods: 4))
            let captureProbe = AudioAllocationProbe(warmUp: 10, measured: 60), renderProbe = AudioAllocationProbe(warmUp: 10, measured: 60)
            driver.capture.periodObserver = captureProbe.observer
            driver.render.periodObserver = renderProbe.observer
            // The render side plays silence (bus empty) then the tone; capture fills its bus unread.
            var sine = SineGenerator(frequency: 997, sampleRate: 48000)
            let tone = sine.samples(frames: 48000, channels: 2)
            try driver.startCapture()
            try driver.startRendering()
            _ = tone.withUnsafeBufferPointer { driver.bus.writeRenderData($0) }
            XCTAssertEqual(captureProbe.done.wait(timeout: .now() + 30), .success, "70 capture periods")
            XCTAssertEqual(renderProbe.done.wait(timeout: .now() + 30), .success, "70 render periods")
            driver.stopRendering()
            driver.stopCapture()
            let xruns = driver.render.statistics.xruns + driver.capture.statistics.xruns
            last = (captureProbe.allocations, renderProbe.allocations, xruns)
            print("figure: heap allocations over 60 periods of 256 frames (attempt \(attempt)): capture thread \(last.capture), render thread \(last.render), xruns \(xruns)")
            driver.render.terminate()
            driver.capture.terminate()
            if xruns == 0 {
                XCTAssertEqual(last.capture, 0, "heap allocations on the capture thread (first in period \(captureProbe.firstAllocatingPeriod))")
                XCTAssertEqual(last.render, 0, "heap allocations on the render thread (first in period \(renderProbe.firstAllocatingPeriod))")
                return
            }
        }
        XCTAssertLessThanOrEqual(last.capture + last.render, UInt64(2 * last.xruns), "only xrun recovery allocates")
    }

    func testEnumerationAgreesWithAplayAndArecord() throws {
        let devices = AudioDevice.scan().devices
        for (tool, direction) in [("aplay -l", AudioDevice.Direction.output), ("arecord -l", .input)] {
            let (expected, listing) = try Rig.alsaPCMs(tool)
            let ours = devices.filter { $0.direction == direction && $0.backend == .alsa && $0.name.hasPrefix("hw:") }
            XCTAssertEqual(Set(ours.map { "\($0.card!),\($0.deviceNumber!)" }), expected, "\(tool):\n\(listing)")
            XCTAssertEqual(ours.count, expected.count, "one hw: device per card and device")
            XCTAssertTrue(devices.contains { $0.name == "plughw:CARD=Loopback,DEV=1" && $0.direction == direction })
            XCTAssertTrue(ours.allSatisfy { $0.description.contains("Loopback") })
            print("figure: \(tool): \(expected.count) PCM devices, the same as AudioDevice.\(direction == .input ? "inputs" : "outputs")")
        }
        let formats = try AudioDevice.alsa("hw:Loopback,1,0", direction: .input).supportedFormats()
        XCTAssertEqual(Set(formats.sampleFormats), Set(SampleFormat.allCases))
        XCTAssertTrue(formats.sampleRates.contains(44100) && formats.sampleRates.contains(48000))
        XCTAssertTrue(formats.channels.contains(1) && formats.channels.contains(2))
        XCTAssertThrowsError(try AudioDevice.alsa("hw:7,0", direction: .input).supportedFormats()) { error in
            XCTAssertEqual((error as? MediaDevicesError)?.code, .notFound, "\(error)")
        }
    }

    /// ALSA's stock `default` (card 0 here: snd-aloop, no sound server's plugin over it) has no
    /// hint in Debian's configuration, so `aplay -L` leaves it out; it opens, so it is listed.
    func testTheDefaultPCMIsListedWhenItOpensThoughItHasNoHint() throws {
        let hinted = try Rig.run("aplay -L").split(separator: "\n").contains("default")
        let devices = AudioDevice.scan().devices
        for direction in [AudioDevice.Direction.input, .output] {
            let listed = devices.filter { $0.backend == .alsa && $0.name == "default" && $0.direction == direction }
            XCTAssertEqual(listed.count, 1, "\(direction): ALSA's default, once: \(devices.map(\.uniqueID))")
            guard let device = listed.first else { continue }
            XCTAssertTrue(device.isDefault)
            if !hinted { XCTAssertEqual(device.description, "Default ALSA device (the configuration's `default` PCM)") }
            XCTAssertNoThrow(try device.supportedFormats(), "\(direction): the listed default opens")
        }
        print("figure: ALSA's default \(hinted ? "has" : "has no") hint (aplay -L); listed as an input and an output")
    }

    func testListAndFormatsCommandsShowAudio() throws {
        // The four runs at once (each CLI start costs seconds in the rig).
        let runs = Rig.shells(["\(Rig.tool) list --json", "\(Rig.tool) formats hw:Loopback,0,0 --json", "\(Rig.tool) list",
                               "\(Rig.tool) record 99 --seconds 1 --output \(Rig.scratch)/x.wav --json"])
        for run in runs.prefix(3) { XCTAssertEqual(run.status, 0, run.errors) }
        let listed = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(runs[0].output.utf8)) as? [String: Any])
        XCTAssertNotNil(listed["cameras"], "the camera shape stays")
        let audio = try XCTUnwrap(listed["audio"] as? [String: Any])
        let inputs = try XCTUnwrap(audio["inputs"] as? [[String: Any]])
        XCTAssertTrue(inputs.contains { $0["uniqueID"] as? String == "alsa:hw:CARD=Loopback,DEV=1" && $0["backend"] as? String == "alsa" }, "\(inputs)")
        let index = try XCTUnwrap(inputs.firstIndex { $0["name"] as? String == "plughw:CARD=Loopback,DEV=1" })
        XCTAssertEqual(inputs[index]["index"] as? Int, index)
        let formats = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(runs[1].output.utf8)) as? [String: Any])
        let entries = try XCTUnwrap(formats["audioFormats"] as? [[String: Any]])
        XCTAssertEqual(Set(entries.compactMap { $0["direction"] as? String }), ["input", "output"])
        XCTAssertEqual(entries.first?["sampleFormats"] as? [String], ["S16_LE", "S32_LE", "FLOAT_LE"])
        let text = runs[2].output
        XCTAssertTrue(text.contains("Audio inputs") && text.contains("alsa:plughw:CARD=Loopback,DEV=0"), text)
        let missing = runs[3]
        XCTAssertEqual(missing.status, 1)
        XCTAssertTrue(missing.output.contains("\"code\" : \"notFound\""), missing.output)
    }

    func testNoCardAndNoServerGiveEmptyListsWithReasonsQuickly() async throws {
        try Rig.run("modprobe -r snd-aloop")
        defer { Rig.shell("modprobe snd-aloop") }
        let previous = ProcessInfo.processInfo.environment["PULSE_SERVER"]
        setenv("PULSE_SERVER", "unix:\(Rig.scratch)/no-such-server", 1)
        defer { if let previous { setenv("PULSE_SERVER", previous, 1) } else { unsetenv("PULSE_SERVER") } }
        let start = Date()
        let discovery = await AudioDevice.discover()
        let (devices, problems) = (discovery.devices, discovery.problems)
        let elapsed = Date().timeIntervalSince(start)
        XCTAssertTrue(devices.allSatisfy { $0.name == "default" }, "no card, no server: at most ALSA's configured default: \(devices)")
        XCTAssertTrue(problems.contains { $0.operation == "snd_card_next" && $0.detail.contains("snd-aloop") }, "\(problems)")
        XCTAssertTrue(problems.contains { $0.device == "pulse" && $0.code == .notFound }, "\(problems)")
        XCTAssertLessThan(elapsed, 3, "never a hang")
        do {
            try await AudioDriver().initializeCapture(device: .alsa("hw:Loopback,1,0", direction: .input), format: AudioFormat(sampleRate: 48000, channels: 2))
            XCTFail("no card: initializeCapture must fail")
        } catch {
            XCTAssertEqual(error.code, .notFound, "\(error)")
        }
        print(String(format: "figure: no card and no server: %d devices, %d reasons, in %.2f s", devices.count, problems.count, elapsed))
    }

    func testRecordAndPlayCommands() throws {
        let short = "\(Rig.scratch)/short.wav", tone = "\(Rig.scratch)/tone.wav", recording = "\(Rig.scratch)/recording.wav"
        let format = AudioFormat(sampleRate: 44100, channels: 2, sampleFormat: .floatLE)
        // One second of the tone holds 997 whole cycles, so the long file is that second over and
        // over without a seam (generating 30 s of samples costs seconds in the emulated guest).
        var sine = SineGenerator(frequency: AudioToneRun.frequency, amplitude: AudioToneRun.amplitude, sampleRate: 44100)
        let second = sine.samples(frames: 44100, channels: 2)
        for (path, seconds) in [(short, 1), (tone, 30)] {
            let writer = try WAVWriter(path: path, format: format)
            for _ in 0..<seconds { try writer.write(second) }
            try writer.close()
        }
        // `play` on its own: every frame of the file reaches the device.
        let played = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(Rig.run("\(Rig.tool) play hw:Loopback,0,0 \(short) --json").utf8)) as? [String: Any])
        XCTAssertEqual(played["frames"] as? Int, 44100)

        // `record` while `play` plays a long tone: recording starts only once the playback
        // stream runs (each CLI takes seconds to start under emulation, more on a busy host).
        let play = try Rig.spawn([Rig.tool, "play", "hw:Loopback,0,0", tone], output: "\(Rig.scratch)/play.out", errors: "\(Rig.scratch)/play.err")
        defer { if play.isRunning { play.terminate() }; play.waitUntilExit() }
        let running = Rig.shell("for i in $(seq 600); do grep -qs RUNNING /proc/asound/Loopback/pcm0p/sub0/status && exit 0; sleep 0.1; done; exit 1")
        XCTAssertEqual(running.status, 0, "the playback stream did not start in 60 s: \(Rig.shell("cat \(Rig.scratch)/play.err").output)")
        let printed = try Rig.run("\(Rig.tool) record hw:Loopback,1,0 --seconds 1 --rate 44100 --channels 2 --sample-format FLOAT_LE --output \(recording) --json")
        XCTAssertTrue(play.isRunning, "the tone played all through the recording")
        let result = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(printed.utf8)) as? [String: Any], printed)
        XCTAssertEqual(result["frames"] as? Int, 44100)
        let stats = try XCTUnwrap(result["statistics"] as? [String: Any])
        XCTAssertEqual(stats["achievedSampleRate"] as? Double ?? 0, 44100, accuracy: 44100 * 0.3)
        XCTAssertNotNil(stats["meanDelay"] as? Double, "durations are seconds in JSON")
        let wav = try WAVFile(path: recording)
        XCTAssertEqual(wav.format, AudioFormat(sampleRate: 44100, channels: 2, sampleFormat: .floatLE))
        XCTAssertEqual(wav.frames, 44100)
        let samples = wav.floatSamples()
        let onset = try XCTUnwrap(ToneAnalysis.onset(in: samples, threshold: 0.2), "the recording holds the tone")
        _ = AudioToneRun.assertTone(Array(samples[onset...]), format: wav.format, label: "record/play CLI")
        let probe = try Rig.run("ffprobe -v error -show_entries stream=sample_rate,channels,codec_name -of default=noprint_wrappers=1 \(recording)")
        XCTAssertTrue(probe.contains("sample_rate=44100") && probe.contains("channels=2") && probe.contains("codec_name=pcm_f32le"), probe)
    }
}
