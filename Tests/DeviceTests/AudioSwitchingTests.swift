import Foundation
import MediaDevices
import XCTest
import TestSupport

/// Issue 14's device switch while running: snd-aloop (ALSA) ↔ a real PulseAudio null sink, on
/// the capture side and on the render side, with a tone playing. The application's bus reader
/// (a `TonePump`) never re-subscribes; `onStop` hears nothing until the real stop.
final class AudioSwitchingTests: XCTestCase {
    override func setUpWithError() throws { try Rig.require() }

    static let format = AudioFormat(sampleRate: 48000, channels: 2, sampleFormat: .s16LE)
    /// 21 ms periods, 8 of them, as the other tone tests under emulation.
    static let options = AudioStreamOptions.rig(periodFrames: 1024, periods: 8)
    static let aloopOut = AudioDevice.alsa("hw:Loopback,0,0", direction: .output)
    static let aloopIn = AudioDevice.alsa("hw:Loopback,1,0", direction: .input)
    static let pulseOut = AudioDevice.pulse("mdsink", direction: .output)
    static let pulseIn = AudioDevice.pulse("mdsink.monitor", direction: .input)
    /// Seconds on each device. The first second on the null sink can be its idle 2 s block
    /// (`AudioPulseLatencyTests.settle`); the tone is judged in each segment's last second.
    static let segment = 4.0

    private func loadLoopback() throws {
        try Rig.run("modprobe snd-aloop")
        for _ in 0..<100 { guard !FileManager.default.fileExists(atPath: "/dev/snd/pcmC0D1c") else { break }; usleep(20_000) }
    }

    /// A driver of its own on `device` (playing the tone into an output, recording an input),
    /// running, with its pump started.
    private func pump(on device: AudioDevice, keepSeconds: Double) throws -> TonePump {
        let driver = AudioDriver()
        if device.direction == .output {
            try driver.initializeRendering(device: device, format: Self.format, options: Self.options)
            try driver.startRendering()
        } else {
            try driver.initializeCapture(device: device, format: Self.format, options: Self.options)
            try driver.startCapture()
        }
        let pump = TonePump(driver: driver, format: Self.format, keepSeconds: keepSeconds)
        pump.start()
        return pump
    }

    /// The capture side moves ALSA → Pulse → ALSA while a tone plays into both. Tried twice when
    /// the tone came back broken in a segment: the players are drivers of ours too, so a guest
    /// starved for whole seconds breaks every side at once (a loaded CI run: 0 of 12 windows whole
    /// on ALSA and on Pulse, the run stretched from ~15 s to 60 s); the second try is judged.
    func testCaptureSwitchesBetweenALSAAndPulseWhileRunning() throws {
        for attempt in 1...2 {
            let broken = try captureSwitchRun(judged: attempt == 2)
            if broken.isEmpty { return }
            print("figure: capture switch, attempt \(attempt): the tone came back broken from \(broken.joined(separator: ", ")); trying again")
        }
    }

    /// One run of the capture switch; the segments whose tone came back broken (asserted when
    /// `judged`).
    private func captureSwitchRun(judged: Bool) throws -> [String] {
        try loadLoopback()
        let daemon = try PulseDaemon(name: "switch-capture")
        defer { daemon.kill() }
        // The two tone sources, played throughout.
        let players = try [Self.aloopOut, Self.pulseOut].map { try pump(on: $0, keepSeconds: 0) }
        defer { for player in players { player.finish(); player.driver.render.terminate() } }

        let driver = AudioDriver()
        let stops = StopCounter(driver)
        try driver.initializeCapture(device: Self.aloopIn, format: Self.format, options: Self.options)
        try driver.startCapture()
        let reader = TonePump(driver: driver, format: Self.format, keepSeconds: 4 * Self.segment)
        reader.start()
        defer { reader.finish(); driver.capture.terminate() }

        var boundaries: [Int] = []  // interleaved sample counts: [switch called, switch returned] per switch
        var switches: [AudioDeviceSwitch] = []
        for device in [Self.pulseIn, Self.aloopIn] {
            usleep(UInt32(Self.segment * 1e6))
            boundaries.append(reader.samplesCaptured)
            switches.append(try driver.switchCaptureDevice(to: device))
            boundaries.append(reader.samplesCaptured)
            XCTAssertTrue(driver.isCapturing, "capture runs on \(device.name)")
            XCTAssertEqual(driver.capture.device, device)
        }
        usleep(UInt32(Self.segment * 1e6))
        XCTAssertEqual(stops.capture, 0, "a switch is not an end: onStop heard nothing")
        driver.stopCapture()
        XCTAssertEqual(stops.capture, 1, "onStop once, for the real stop")
        XCTAssertEqual(stops.errors, 0)

        // A busy host stretches the run: the sample counts index what the reader kept from `first` on.
        let (captured, first) = reader.keptSince
        let ends = [0] + boundaries.map { $0 - first } + [captured.count]
        let channels = Self.format.channels, second = Self.format.sampleRate * channels
        var broken: [String] = []
        for (index, name) in ["ALSA", "Pulse", "ALSA again"].enumerated() {
            // The last second of each segment: the tone, at its frequency and level.
            let end = ends[2 * index + 1] / channels * channels
            XCTAssertGreaterThanOrEqual(end - second - second / 4, 0, "\(name): the segment's last second is still kept (run stretched past \(4 * Self.segment) s?)")
            let slice = Array(captured[max(0, end - second - second / 4)..<max(0, end)])
            if judged {
                AudioToneRun.assertTone(slice, format: Self.format, skip: 0, label: "captured from \(name)")
            } else if !AudioToneRun.isWholeTone(slice, format: Self.format, skip: 0) {
                broken.append(name)
            }
        }
        report(switches, side: "capture", period: driver.capture.periodFrames ?? Self.options.periodFrames,
               latency: driver.capture.statistics.maxDelay.inMicroseconds / 1e6)
        return broken
    }

    /// The capture side moves from the Pulse null sink's monitor (which takes the bus's format)
    /// to snd-aloop held at 44.1 kHz mono float by its player: the new device gets a converter
    /// of its own, the bus keeps its format, and the tone goes on.
    func testCaptureSwitchesToADeviceOfAnotherFormat() throws {
        try loadLoopback()
        let daemon = try PulseDaemon(name: "switch-convert")
        defer { daemon.kill() }
        let other = AudioFormat(sampleRate: 44100, channels: 1, sampleFormat: .floatLE)
        let aloopPlayer = AudioDriver()
        try aloopPlayer.initializeRendering(device: Self.aloopOut, format: other, options: Self.options)
        try aloopPlayer.startRendering()
        let players = [TonePump(driver: aloopPlayer, format: other, keepSeconds: 0), try pump(on: Self.pulseOut, keepSeconds: 0)]
        players[0].start()
        defer { for player in players { player.finish(); player.driver.render.terminate() } }

        let driver = AudioDriver()
        try driver.initializeCapture(device: Self.pulseIn, format: Self.format, options: Self.options)
        XCTAssertFalse(driver.capture.isConverting, "PulseAudio takes the bus's format")
        try driver.startCapture()
        let reader = TonePump(driver: driver, format: Self.format, keepSeconds: Self.segment)
        reader.start()
        defer { reader.finish(); driver.capture.terminate() }
        usleep(UInt32(Self.segment * 1e6))
        let change = try driver.switchCaptureDevice(to: Self.aloopIn)
        XCTAssertTrue(driver.isCapturing)
        XCTAssertEqual(driver.capture.deviceFormat, other, "snd-aloop runs at its player's format")
        XCTAssertEqual(driver.capture.format, Self.format, "the bus keeps the application's format")
        XCTAssertEqual(driver.bus.captureFormat, Self.format)
        XCTAssertTrue(driver.capture.isConverting)
        usleep(UInt32(Self.segment * 1e6))
        let captured = reader.kept
        let second = Self.format.sampleRate * Self.format.channels
        AudioToneRun.assertTone(Array(captured.suffix(second + second / 4)), format: Self.format, skip: 0,
                                label: "captured from snd-aloop at 44.1 kHz mono float, converted to 48 kHz stereo S16")
        print(String(format: "figure: capture switch Pulse → snd-aloop of another format (44.1 kHz mono float, converted): open %.1f ms, pause %.1f ms, gap %@",
                     change.open.inSeconds * 1000, change.pause.inSeconds * 1000, change.gap.map { String(format: "%.1f ms", $0.inMilliseconds) } ?? "not measured"))
    }

    /// The render side moves ALSA → Pulse → ALSA while it plays a tone; both devices' other
    /// ends are recorded: the tone is where the side plays, silence where it left.
    func testRenderSwitchesBetweenALSAAndPulseWhileRunning() throws {
        try loadLoopback()
        let daemon = try PulseDaemon(name: "switch-render")
        defer { daemon.kill() }
        // Each recorder keeps 10 segments (the run is 3 and two switches): with two busy loops and a
        // second emulator beside the rig, the switches stretched the run past the 4 once kept,
        // losing the first segment's last second from the Pulse monitor's recording.
        let recorders = try [Self.aloopIn, Self.pulseIn].map { try pump(on: $0, keepSeconds: 10 * Self.segment) }
        defer { for recorder in recorders { recorder.finish(); recorder.driver.capture.terminate() } }

        let driver = AudioDriver()
        let stops = StopCounter(driver)
        try driver.initializeRendering(device: Self.aloopOut, format: Self.format, options: Self.options)
        try driver.startRendering()
        let player = TonePump(driver: driver, format: Self.format, keepSeconds: 0)
        player.start()
        defer { player.finish(); driver.render.terminate() }

        // Per recorder, its sample count at each switch's return.
        var marks: [[Int]] = [[0], [0]]
        var switches: [AudioDeviceSwitch] = []
        for device in [Self.pulseOut, Self.aloopOut] {
            usleep(UInt32(Self.segment * 1e6))
            switches.append(try driver.switchRenderDevice(to: device))
            for (index, recorder) in recorders.enumerated() { marks[index].append(recorder.samplesCaptured) }
            XCTAssertTrue(driver.isRendering, "rendering runs on \(device.name)")
        }
        usleep(UInt32(Self.segment * 1e6))
        for (index, recorder) in recorders.enumerated() { marks[index].append(recorder.samplesCaptured) }
        XCTAssertEqual(stops.render, 0, "a switch is not an end: onStop heard nothing")
        driver.stopRendering()
        XCTAssertEqual(stops.render, 1)
        XCTAssertEqual(stops.errors, 0)

        let channels = Self.format.channels, second = Self.format.sampleRate * channels
        for (index, name) in ["snd-aloop", "the null sink's monitor"].enumerated() {
            // A busy host stretches the run: the marks index what the recorder kept from `first` on.
            let (captured, first) = recorders[index].keptSince
            for segment in 0..<3 {
                // The last second of the segment, less a quarter second for the way back.
                let end = min(marks[index][segment + 1] - first, captured.count) / channels * channels
                XCTAssertGreaterThanOrEqual(end - second - second / 4, 0, "\(name), segment \(segment + 1): its last second is still kept")
                let slice = Array(captured[max(0, end - second - second / 4)..<max(0, end - second / 4)])
                let playing = (segment == 1) == (index == 1)  // Pulse in the middle segment, ALSA around it
                let label = "\(name), segment \(segment + 1) (the side \(playing ? "plays" : "left") here)"
                if playing {
                    // The tone whole in the segment's last second; where it is not, in the whole
                    // segment from the switch that began it: with two busy loops beside the rig the
                    // null sink has begun to play the new stream only ~3.5 s after the switch
                    // returned (the tone in the last 2 of its 8 windows, silence before; the
                    // library's own gap 87.5 ms), which is the emulated server's time, not the switch's.
                    let start = max(0, min(marks[index][segment] - first, end) / channels * channels)
                    if AudioToneRun.channelTones(slice, format: Self.format, skip: 0)?.allSatisfy({ $0.measured != nil }) == true {
                        AudioToneRun.assertTone(slice, format: Self.format, skip: 0, label: label)
                    } else {
                        print("figure: \(label): the tone not whole in the segment's last second; judged on the whole segment (\(Double(end - start) / Double(second)) s)")
                        AudioToneRun.assertTone(Array(captured[start..<end]), format: Self.format, skip: 0, label: label + ", the whole segment")
                    }
                } else {
                    XCTAssertLessThan(ToneAnalysis.rmsDecibels(of: slice), -60, "\(label): silence")
                }
            }
        }
        report(switches, side: "render", period: driver.render.periodFrames ?? Self.options.periodFrames,
               latency: driver.render.statistics.maxDelay.inMicroseconds / 1e6)
    }

    /// What cannot be switched says why and loses nothing: the running side stays on its device.
    func testFailedSwitchKeepsTheRunningDeviceAndAStoppedSideSwitchesQuietly() throws {
        try loadLoopback()
        let driver = AudioDriver()
        XCTAssertThrowsError(try driver.switchCaptureDevice(to: Self.aloopIn)) { error in
            XCTAssertEqual((error as? MediaDevicesError)?.code, .invalidState, "before initialize: \(error)")
        }
        let stops = StopCounter(driver)
        try driver.initializeCapture(device: Self.aloopIn, format: Self.format, options: Self.options)
        XCTAssertThrowsError(try driver.capture.switchDevice(to: Self.aloopOut)) { error in
            XCTAssertEqual((error as? MediaDevicesError)?.code, .invalidState, "an output for the capture side: \(error)")
        }
        // A stopped side switches without starting, and starts on the new device.
        let stopped = try driver.switchCaptureDevice(to: .alsa("hw:Loopback,1,1", direction: .input))
        XCTAssertNil(stopped.gap)
        XCTAssertFalse(driver.isCapturing)
        XCTAssertEqual(driver.capture.device?.name, "hw:Loopback,1,1")
        try driver.startCapture()
        XCTAssertTrue(Soak.waitUntil(seconds: 10) { driver.capture.statistics.periods > 5 }, "capture runs on the new device")

        // A device that is not there: the error names it, and the run goes on where it was.
        let periodsBefore = driver.capture.statistics.periods
        XCTAssertThrowsError(try driver.switchCaptureDevice(to: .alsa("hw:Loopback,1,9", direction: .input))) { error in
            let error = error as? MediaDevicesError
            XCTAssertEqual(error?.device, "hw:Loopback,1,9", String(describing: error))
            XCTAssertNotEqual(error?.code, .invalidState, String(describing: error))
        }
        XCTAssertTrue(driver.isCapturing)
        XCTAssertEqual(driver.capture.device?.name, "hw:Loopback,1,1")
        XCTAssertTrue(Soak.waitUntil(seconds: 10) { driver.capture.statistics.periods > periodsBefore + 5 }, "the old device still delivers")
        XCTAssertEqual(stops.capture, 0)
        driver.stopCapture()
        XCTAssertEqual(stops.capture, 1)
        driver.capture.terminate()
    }

    /// Asserts each switch's gap and prints them. The gap the issue allows is one period plus the
    /// device latency; under emulation on a busy host a thread can wait its turn far longer, so
    /// the assertion adds 250 ms for the host and the figure shows what it was.
    private func report(_ switches: [AudioDeviceSwitch], side: String, period: Int, latency: Double,
                        file: StaticString = #filePath, line: UInt = #line) {
        let periodSeconds = Double(period) / Double(Self.format.sampleRate)
        for change in switches {
            let gap = change.gap?.inSeconds
            XCTAssertNotNil(gap, "\(side) \(change.from?.name ?? "?") → \(change.to.name): the new device moved a period", file: file, line: line)
            XCTAssertLessThanOrEqual(gap ?? .infinity, periodSeconds + latency + 0.25,
                                     "\(side) \(change.from?.name ?? "?") → \(change.to.name): gap", file: file, line: line)
        }
        print("figure: \(side) device switch while running (period \(String(format: "%.1f", periodSeconds * 1000)) ms, device latency max \(String(format: "%.1f", latency * 1000)) ms): "
              + switches.map { String(format: "%@ → %@: open %.1f ms (old still running), pause %.1f ms, gap %.1f ms",
                                      $0.from?.uniqueID ?? "?", $0.to.uniqueID, $0.open.inSeconds * 1000, $0.pause.inSeconds * 1000, ($0.gap?.inSeconds ?? .nan) * 1000) }
                .joined(separator: "; "))
    }
}
