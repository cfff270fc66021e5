import Foundation
import Glibc
import MediaDevices
import XCTest

/// The storms of issue 16 beyond the camera's (SoakTests): the USB microphone unplugged at random
/// moments, start/stop cycles and server restarts on a real PulseAudio daemon, and screen grabs
/// while the display's mode changes. Sized by `MEDIADEVICES_SOAK_SCALE` like SoakTests (unset:
/// the CI short form); seeded and replayable the same way.
final class SoakStormTests: XCTestCase {
    override func setUpWithError() throws { try Rig.require() }
    override func tearDown() { Watchdog.step("") }

    // MARK: USB microphone unplug/replug storm

    private enum MicrophoneMoment: String, CaseIterable { case duringStart, midStream, duringStop }

    /// SCALE/10 unplugs (at least 5) during start, mid-stream or during stop: every run ends
    /// once, mid-stream unplugs end in `.disconnected` within a second, the microphone records
    /// again after each replug, and descriptors, mappings and threads come back.
    func testUSBMicrophoneUnplugStorm() throws {
        let microphone = try USBMicrophone.plug(serial: "MD-MIC-STORM")
        let format = USBMicrophoneTests.format
        let options = USBMicrophoneTests.options
        let count = Soak.count(ci: 5, divisor: 10)
        var rng = Soak.generator("microphone-unplugs")
        var first: ProcessFigures?
        var latencies: [Double] = []
        var moments: [String: Int] = [:], outcomes: [String: Int] = [:]
        for cycle in 0..<(count + 1) {
            // Cycle 0 only warms up (a first capture thread's arena), then the figures start.
            let device = try XCTUnwrap(AudioDevice.scan().inputs.first { $0.name == microphone.hwName }, "cycle \(cycle): the microphone is listed")
            if cycle == 1 { first = ProcessFigures.settled() }
            let driver = AudioDriver()
            let ended = USBMicrophoneTests.EndRecorder()
            driver.capture.onStop = { ended.record($0) }
            try driver.initializeCapture(device: device, format: format, options: options)
            let moment = cycle == 0 ? .midStream : MicrophoneMoment.allCases.randomElement(using: &rng)!
            let label = "microphone unplug \(cycle) (\(moment.rawValue))"
            Watchdog.step(label)
            moments[moment.rawValue, default: 0] += 1
            var thrown: MediaDevicesError?
            switch moment {
            case .duringStart:
                let unplugger = Soak.after(microseconds: UInt32.random(in: 0...50_000, using: &rng)) { microphone.unplug() }
                do { try driver.startCapture() } catch { thrown = error }  // typed: always a MediaDevicesError
                unplugger.wait()
            case .midStream:
                try driver.startCapture()
                XCTAssertTrue(Soak.waitUntil(seconds: 30) { driver.capture.statistics.periods >= 1 }, "\(label): a period before the unplug")
                usleep(UInt32.random(in: 0...200_000, using: &rng))
                microphone.unplug()
                let unplugged = microphone.unplugTimeNanoseconds
                XCTAssertTrue(Soak.waitUntil(seconds: 10) { !driver.isCapturing }, "\(label): capture ends by itself")
                ended.wait(seconds: 10)
                let (error, endedAt) = ended.value
                XCTAssertEqual(error?.code, .disconnected, "\(label): \(String(describing: error))")
                if endedAt > unplugged {
                    let latency = Double(endedAt - unplugged) / 1e9
                    XCTAssertLessThan(latency, 1.0, "\(label): unplug to .disconnected")
                    latencies.append(latency)
                }
            case .duringStop:
                try driver.startCapture()
                let unplugger = Soak.after(microseconds: UInt32.random(in: 0...30_000, using: &rng)) { microphone.unplug() }
                driver.stopCapture()
                unplugger.wait()
            }
            XCTAssertTrue(Soak.waitUntil(seconds: 10) { !driver.isCapturing }, "\(label): the run ended")
            if thrown == nil { ended.wait(seconds: 10) }
            outcomes[thrown.map { "thrown \($0.code.rawValue)" } ?? "stop \(ended.value.0?.code.rawValue ?? "nil")", default: 0] += 1
            driver.capture.terminate()
            XCTAssertFalse(microphone.isPlugged, label)
            Watchdog.step("\(label): replug")
            try microphone.replug()
            // Back in: it records again.
            let again = AudioDriver()
            let replugged = try XCTUnwrap(AudioDevice.scan().inputs.first { $0.name == microphone.hwName }, "\(label): listed again")
            try again.initializeCapture(device: replugged, format: format, options: options)
            try again.startCapture()
            XCTAssertTrue(Soak.waitUntil(seconds: 30) { again.capture.statistics.periods >= 1 }, "\(label): records after the replug")
            again.capture.terminate()
        }
        let last = ProcessFigures.settled()
        let sorted = latencies.sorted()
        print(String(format: "figure: soak USB microphone unplug storm: %d unplugs (%@), outcomes %@; unplug to .disconnected mid-stream (n=%d) median %.0f ms, max %.0f ms",
                     count + 1, moments.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "),
                     outcomes.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "),
                     sorted.count, (sorted.isEmpty ? 0 : sorted[sorted.count / 2]) * 1000, (sorted.last ?? 0) * 1000))
        // The emulator's USB/IP socket is replaced on every replug: one descriptor in both.
        ProcessFigures.assertFlat(first!, last, "USB microphone: \(count) unplug/replug cycles")
    }

    // MARK: PulseAudio: start/stop cycles and server restarts

    /// SCALE start/stop cycles (at least 20) of capture and render on a real PulseAudio daemon,
    /// and SCALE/100 server restarts mid-stream (at least 2): a killed server ends both sides
    /// with `.disconnected` within a second; against the new server the same driver
    /// initializes and runs again. Nothing is left behind.
    func testPulseStartStopCyclesAndServerRestarts() throws {
        var daemon: PulseDaemon? = try PulseDaemon(name: "soak")
        defer { daemon?.kill() }
        let format = AudioFormat(sampleRate: 48000, channels: 2, sampleFormat: .s16LE)
        let options = AudioStreamOptions.rig(periodFrames: 480, periods: 4)
        let driver = AudioDriver()
        let stops = StopCounter(driver)
        func initialize() throws {
            try StopCounter.initialize(driver, render: .pulse("mdsink", direction: .output),
                                       capture: .pulse("mdsink.monitor", direction: .input), format: format, options: options)
        }
        try initialize()
        let count = Soak.count(ci: 20)
        let restarts = Soak.count(ci: 2, divisor: 100)
        let restartAt = Set((1...restarts).map { $0 * count / (restarts + 1) })
        var rng = Soak.generator("pulse")
        var first: ProcessFigures?
        var starts = 0, disconnects = 0
        var latencies: [Double] = []
        for cycle in 0..<(count + 2) {
            let label = "pulse cycle \(cycle)"
            Watchdog.step(label)
            if cycle == 2 { first = ProcessFigures.settled() }
            try driver.startRendering()
            try driver.startCapture()
            starts += 1
            let periods = Int.random(in: 1...4, using: &rng)
            XCTAssertTrue(Soak.waitUntil(seconds: 20) { driver.capture.statistics.periods >= periods }, "\(label): \(periods) capture period(s)")
            if restartAt.contains(cycle) {
                Watchdog.step("\(label): server restart")
                let killed = Date()
                daemon?.kill()
                XCTAssertTrue(Soak.waitUntil(seconds: 10) { stops.capture == starts && stops.render == starts }, "\(label): both sides end")
                latencies.append(Date().timeIntervalSince(killed))
                XCTAssertLessThan(latencies.last!, 1.0, "\(label): server kill to both sides ended")
                XCTAssertEqual(driver.capture.endError?.code, .disconnected, "\(label): \(String(describing: driver.capture.endError))")
                XCTAssertEqual(driver.render.endError?.code, .disconnected, "\(label): \(String(describing: driver.render.endError))")
                disconnects += 1
                driver.capture.terminate()
                driver.render.terminate()
                daemon = try PulseDaemon(name: "soak")
                try initialize()
                continue
            }
            guard stops.stopBoth(driver, starts: starts, label: label, using: &rng) else { break }
        }
        XCTAssertEqual(stops.errors, 2 * disconnects, "only the restarts ended runs with an error")
        driver.capture.terminate()
        driver.render.terminate()
        try initialize()  // the first figures were taken with both sides open
        let last = ProcessFigures.settled()
        driver.capture.terminate()
        driver.render.terminate()
        print(String(format: "figure: soak PulseAudio: %d capture+render start/stop cycles, %d server restarts mid-stream (kill to both ended: max %.0f ms)",
                     starts, disconnects, (latencies.max() ?? 0) * 1000))
        ProcessFigures.assertFlat(first!, last, "PulseAudio: \(starts) start/stop cycles and \(disconnects) server restarts")
    }

    // MARK: Screens: grabbing while the mode changes

    /// SCALE/10 mode changes (at least 10) between 640x480 and 800x600 while a screen source runs
    /// (bochs): the run never ends, frames of each new size come, and what the source holds
    /// (descriptors, mappings) is the same after as before.
    func testScreenGrabWhileTheModeChanges() throws {
        let screen = try ScreenScenarios.loadDisplay("bochs")
        let display = try TestDisplay()
        let sizes = [Size(width: 640, height: 480), Size(width: 800, height: 600)]
        let buffers = try sizes.map { try display.makeBuffer(width: $0.width, height: $0.height) }
        try display.show(buffers[0])
        let source = ScreenSource(screen: try ScreenScenarios.current(screen), frameRate: FrameRate(15))
        defer { source.release() }
        let consumer = SoakConsumer()
        source.consumer = consumer
        try source.start()
        XCTAssertTrue(consumer.wait(seconds: 30) { $0.frames >= 2 }, "frames before the first mode change")
        let count = Soak.count(ci: 10, divisor: 10)
        var first: ProcessFigures?
        var changes = 0
        for change in 0..<(count + 2) {
            if change == 2 { first = ProcessFigures.settled() }
            let index = (change + 1) % 2
            Watchdog.step("mode change \(change) to \(sizes[index])")
            let before = consumer.frames(withSize: sizes[index])
            try display.show(buffers[index])
            changes += 1
            XCTAssertTrue(consumer.wait(seconds: 30) { $0.frames(withSize: sizes[index]) >= before + 2 },
                          "mode change \(change): frames at \(sizes[index])")
            XCTAssertEqual(consumer.stopCount, 0, "mode change \(change): the run goes on")
            if consumer.stopCount != 0 { break }
        }
        let last = ProcessFigures.settled()  // running at 640x480 or 800x600 again, as at first
        XCTAssertTrue(source.isCapturing)
        let stats = source.statistics
        source.stop()
        XCTAssertTrue(consumer.wait(seconds: 5) { $0.stopCount >= 1 })
        XCTAssertEqual(consumer.stopCount, 1)
        XCTAssertNil(consumer.stopError)
        print("figure: soak screen: \(changes) mode changes while grabbing at 15 fps: \(consumer.frames) frames (\(sizes.map { "\($0.width)x\($0.height) \(consumer.frames(withSize: $0))" }.joined(separator: ", "))), \(stats.droppedFrames) dropped")
        ProcessFigures.assertFlat(first!, last, "screen: \(changes) mode changes while grabbing")
    }
}

extension SoakConsumer {
    /// Frames of `size`, whatever their pixel format.
    func frames(withSize size: Size) -> Int {
        formats.filter { $0.key.size == size }.reduce(0) { $0 + $1.value }
    }
}
