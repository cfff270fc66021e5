import Foundation
import MediaDevices
import TestSupport
import Synchronization
import XCTest

/// Soak and fault storms (issue 16): many lifecycle cycles, format changes and device switches,
/// USB unplugs at random moments, vivid's error injection at random times, and audio start/stop
/// cycles, with the process's descriptors, mappings, threads and RSS printed first vs last.
///
/// The size comes from `MEDIADEVICES_SOAK_SCALE` (scripts/rig.sh passes MEDIADEVICES_* into the
/// guest). Unset: the short form CI runs (about 2 minutes under emulation). Set to N (as
/// `scripts/soak.sh N` does): N lifecycle cycles on vivid and on the USB camera, N format changes /
/// device switches, N audio cycles, N/10 unplugs (at least 5) and N/20 injected faults (at least
/// 6: each fault once, in a seeded random order; more at random in a long run). Randomness is seeded; the seed is printed, and `MEDIADEVICES_SOAK_SEED` replays a run.
///
/// What is asserted is what the library controls (descriptors, mappings and threads back
/// exactly, one `captureDidStop` per run, typed errors, consistent statistics, `.disconnected`
/// within a second of an unplug); emulator timing only ever lengthens a wait.
final class SoakTests: XCTestCase {
    override func setUpWithError() throws { try Rig.require() }
    /// The watchdog names the step of a running soak only: later tests are not "stuck" in it.
    override func tearDown() { Watchdog.step("") }

    // MARK: 1. Lifecycle cycles, format changes and device switches

    func testVividLifecycleCyclesLeakNothing() throws {
        let node = try Rig.loadVivid("n_devs=1")[0]
        let device = try CaptureDevice(path: node)
        let request = FormatRequest(pixelFormat: .yuyv, size: Size(width: 320, height: 180), frameRate: FrameRate(25))
        try lifecycleCycles(label: "vivid YUYV 320x180", count: Soak.count(ci: 50), seedLabel: "vivid-cycles",
                            request: request, device: { device })
    }

    func testUSBCameraLifecycleCyclesLeakNothing() throws {
        let camera = try Rig.usbCamera()
        defer { camera.close() }
        let device = try camera.device()
        let request = FormatRequest(pixelFormat: .mjpeg, size: .vga, frameRate: FrameRate(30))
        try lifecycleCycles(label: "USB camera MJPEG 640x480", count: Soak.count(ci: 20), seedLabel: "usb-cycles",
                            request: request, device: { device })
    }

    /// initialize/start/stop/release, `count` times after two warm-up cycles, alternating at
    /// random between one long-lived source and a new source per cycle (which exercises `deinit`).
    private func lifecycleCycles(label: String, count: Int, seedLabel: String, request: FormatRequest,
                                 device: () -> CaptureDevice) throws {
        var rng = Soak.generator(seedLabel)
        let persistent = CameraSource(device: device(), request: request)
        var first: ProcessFigures?
        var frames = 0
        for cycle in 0..<(count + 2) {
            if cycle == 2 { first = ProcessFigures.settled() }
            let source = Bool.random(using: &rng) ? persistent : CameraSource(device: device(), request: request)
            let consumer = SoakConsumer()
            source.consumer = consumer
            Watchdog.step("\(label) cycle \(cycle): initialize")
            try source.initialize()
            Watchdog.step("\(label) cycle \(cycle): start")
            try source.start()
            let wanted = Int.random(in: 1...3, using: &rng)
            Watchdog.step("\(label) cycle \(cycle): wait for \(wanted) frame(s)")
            XCTAssertTrue(consumer.wait(seconds: 30) { $0.frames >= wanted }, "\(label) cycle \(cycle): \(wanted) frame(s) (got \(consumer.frames))")
            Watchdog.step("\(label) cycle \(cycle): stop")
            source.stop()
            Watchdog.step("\(label) cycle \(cycle): release")
            source.release()
            XCTAssertTrue(consumer.wait(seconds: 5) { $0.stopCount >= 1 }, "\(label) cycle \(cycle): captureDidStop")
            XCTAssertEqual(consumer.stopCount, 1, "\(label) cycle \(cycle): the consumer hears captureDidStop once")
            XCTAssertNil(consumer.stopError, "\(label) cycle \(cycle)")
            XCTAssertFalse(source.isCapturing)
            frames += consumer.frames
            if consumer.stopCount != 1 || consumer.frames == 0 { break }  // one failure is enough
        }
        persistent.release()
        ProcessFigures.assertFlat(first!, ProcessFigures.settled(), "\(label): \(count) initialize/start/stop/release cycles (\(frames) frames)")
    }

    func testFormatChangesAndDeviceSwitchesWhileRunning() throws {
        let nodes = try Rig.loadVivid("n_devs=2")
        let devices = try nodes.map { try CaptureDevice(path: $0) }
        let requests = [FormatRequest(pixelFormat: .yuyv, size: .vga, frameRate: FrameRate(25)),
                        FormatRequest(pixelFormat: .nv12, size: Size(width: 320, height: 180), frameRate: FrameRate(25)),
                        FormatRequest(pixelFormat: .yuyv, size: Size(width: 320, height: 180), frameRate: FrameRate(25)),
                        FormatRequest(pixelFormat: .nv12, size: .vga, frameRate: FrameRate(25))]
        let count = Soak.count(ci: 30)
        var rng = Soak.generator("switches")
        let source = CameraSource(device: devices[0], request: requests[0])
        let consumer = SoakConsumer()
        source.consumer = consumer
        try source.start()
        XCTAssertTrue(consumer.wait(seconds: 30) { $0.frames >= 2 })
        var first: ProcessFigures?
        var switches = 0, formatChanges = 0
        for step in 0..<(count + 2) {
            if step == 2 { first = ProcessFigures.settled() }
            let request = requests.randomElement(using: &rng)!
            Watchdog.step("switch step \(step)")
            let negotiation: FormatNegotiation
            if Bool.random(using: &rng) {
                let other = devices.first { $0.path != source.device.path }!
                negotiation = try source.selectCaptureDevice(other, format: request)
                XCTAssertEqual(source.device.path, other.path)
                switches += 1
            } else {
                negotiation = try source.setFormat(request)
                formatChanges += 1
            }
            XCTAssertEqual(negotiation.format.pixelFormat, request.pixelFormat)
            XCTAssertEqual(negotiation.format.size, request.size)
            XCTAssertTrue(source.isCapturing, "step \(step): still capturing")
            let format = negotiation.format
            // Two frames in the new format: the stream really restarted.
            let before = consumer.frames(in: format)
            XCTAssertTrue(consumer.wait(seconds: 30) { $0.frames(in: format) >= before + 2 }, "step \(step): frames in \(format)")
            if consumer.stopCount != 0 { break }
        }
        let last = ProcessFigures.settled()  // still running, as at the first figures
        ProcessFigures.assertFlat(first!, last, "vivid while running: \(formatChanges) format changes + \(switches) device switches")
        source.stop()
        XCTAssertTrue(consumer.wait(seconds: 5) { $0.stopCount >= 1 })
        XCTAssertEqual(consumer.stopCount, 1, "one captureDidStop for the whole run, none for the restarts")
        XCTAssertNil(consumer.stopError)
        let stats = source.statistics
        XCTAssertEqual(stats.deliveredFrames, consumer.frames, "every delivered frame reached the consumer")
        // A restart begins the sequence again and is not a drop; what remains are frames the
        // emulated vivid skipped under host load, which cannot be many more than delivered.
        XCTAssertLessThanOrEqual(stats.droppedFrames, stats.deliveredFrames, "restarts are not drops: \(stats)")
        source.release()
        print("figure: soak vivid while running: \(stats.deliveredFrames) frames, \(stats.droppedFrames) dropped over \(formatChanges + switches) restarts")
    }

    // MARK: 2. USB unplug/replug storm

    private enum UnplugMoment: String, CaseIterable { case duringStart, midStream, duringStop, duringFormatChange }

    func testUSBUnplugStormWithResumeAndMonitor() async throws {
        let camera = try Rig.usbCamera()
        defer { camera.close() }
        let device = try camera.device()
        let monitor = try DeviceMonitor(kinds: [.camera])
        let events = EventCounter(monitor)
        let requests = [FormatRequest(pixelFormat: .mjpeg, size: .vga, frameRate: FrameRate(30)),
                        FormatRequest(pixelFormat: .yuyv, size: Size(width: 320, height: 240), frameRate: FrameRate(30))]
        let source = CameraSource(device: device, request: requests[0])
        // Warm-up run, so the first figures include a capture thread's arena and stack cache.
        let warm = SoakConsumer()
        source.consumer = warm
        try source.start()
        let warmedUp = await warm.wait(seconds: 60) { $0.frames >= 2 }
        XCTAssertTrue(warmedUp)
        source.stop()
        let count = Soak.count(ci: 5, divisor: 10)
        var rng = Soak.generator("unplugs")
        let first = ProcessFigures.settled()
        var latencies: [Double] = []
        var codes: [String: Int] = [:]
        var moments: [String: Int] = [:]
        var resumed = 0
        let serial = camera.serial
        for cycle in 0..<count {
            if cycle > 0 && cycle % 10 == 0 {
                let now = ProcessFigures.now()
                print(String(format: "soak: unplug %d: anonymous %.1f MB, fds %d, threads %d", cycle,
                             Double(now.anonymousKilobytes) / 1024, now.descriptors, now.threads))
            }
            let moment = UnplugMoment.allCases.randomElement(using: &rng)!
            moments[moment.rawValue, default: 0] += 1
            let consumer = SoakConsumer()
            source.consumer = consumer
            var thrown: [Error] = []
            let label = "unplug \(cycle) (\(moment.rawValue))"
            Watchdog.step(label)
            switch moment {
            case .duringStart:
                let unplugger = Soak.after(microseconds: UInt32.random(in: 0...60_000, using: &rng)) { camera.unplug() }
                do { try source.start() } catch { thrown.append(error) }
                unplugger.wait()
            case .midStream:
                try source.start()
                let framesBeforeUnplug = await consumer.wait(seconds: 60) { $0.frames >= 2 }
                XCTAssertTrue(framesBeforeUnplug, "\(label): frames before the unplug")
                usleep(UInt32.random(in: 0...300_000, using: &rng))
                camera.unplug()
                let captureEnded = await consumer.wait(seconds: 10) { $0.stopCount >= 1 }
                XCTAssertTrue(captureEnded, "\(label): capture ended")
                XCTAssertEqual(consumer.stopError?.code, .disconnected, "\(label): \(String(describing: consumer.stopError))")
                let latency = Double(Int64(consumer.stoppedAt) - Int64(camera.unplugTime)) / 1e9
                XCTAssertLessThan(latency, 1.0, "\(label): unplug to .disconnected")
                latencies.append(latency)
            case .duringStop:
                try source.start()
                let framesBeforeStop = await consumer.wait(seconds: 60) { $0.frames >= 1 }
                XCTAssertTrue(framesBeforeStop, "\(label): frames before the stop")
                let unplugger = Soak.after(microseconds: UInt32.random(in: 0...30_000, using: &rng)) {
                    camera.unplug()
                    print("soak: \(label): camera.unplug() returned")
                }
                source.stop()
                Watchdog.step("\(label): source.stop() returned; waiting for camera.unplug()")
                // The unplug is the emulator's (USB/IP detach): a hang there fails this test by
                // name rather than holding the boot until its timeout.
                guard unplugger.wait(timeout: .now() + 60) == .success else {
                    XCTFail("\(label): camera.unplug() (the USB/IP emulator's detach) did not return within 60 s; source.stop() had returned")
                    FileHandle.standardError.write(Data(Watchdog.threadDump().utf8))
                    return
                }
            case .duringFormatChange:
                try source.start()
                let framesBeforeFormatChange = await consumer.wait(seconds: 60) { $0.frames >= 1 }
                XCTAssertTrue(framesBeforeFormatChange, "\(label): frames before the format change")
                let unplugger = Soak.after(microseconds: UInt32.random(in: 0...60_000, using: &rng)) { camera.unplug() }
                let other = source.negotiation?.format.pixelFormat == .mjpeg ? requests[1] : requests[0]
                do { try source.setFormat(other) } catch { thrown.append(error) }
                unplugger.wait()
            }
            // The run ends (or had ended), exactly once, and every error is typed.
            let captureEnded = await Soak.waitUntil(seconds: 10) { !source.isCapturing }
            XCTAssertTrue(captureEnded, "\(label): capture must end after the unplug")
            let stopHeard = await consumer.wait(seconds: 10) { $0.stopCount >= 1 }
            XCTAssertTrue(stopHeard, "\(label): captureDidStop")
            XCTAssertEqual(consumer.stopCount, 1, "\(label): the consumer hears captureDidStop once")
            for error in thrown {
                let typed = error as? MediaDevicesError
                XCTAssertNotNil(typed, "\(label): untyped error \(error)")
                if let typed { codes["thrown \(Self.outcome(typed))", default: 0] += 1 }
            }
            codes["stop \(consumer.stopError.map(Self.outcome) ?? "nil")", default: 0] += 1
            for error in thrown + [consumer.stopError].compactMap({ $0 }) {
                if let typed = error as? MediaDevicesError, typed.code != .disconnected { print("soak: \(label): \(typed)") }
            }
            XCTAssertFalse(camera.isPlugged)
            let cameraGone = await Soak.waitUntil(seconds: 20) { !CaptureDevice.scan().devices.contains { $0.uniqueID.contains(serial) } }
            XCTAssertTrue(cameraGone,
                          "\(label): the node goes away")

            // Back in: resumeWhenReconnected finds it and frames flow again.
            let again = SoakConsumer()
            source.consumer = again
            Watchdog.step("\(label): replug and resume")
            try camera.replug()
            let didResume: Bool
            do {
                didResume = try await source.resumeWhenReconnected(timeout: .seconds(90))
            } catch {
                XCTFail("\(label): resumeWhenReconnected threw \(error)")
                break
            }
            XCTAssertTrue(didResume, "\(label): resumed")
            let framesAfterReplug = await again.wait(seconds: 60) { $0.frames >= 2 }
            XCTAssertTrue(framesAfterReplug, "\(label): frames after the replug (got \(again.frames))")
            source.stop()
            let stopHeardAgain = await again.wait(seconds: 5) { $0.stopCount >= 1 }
            XCTAssertTrue(stopHeardAgain)
            XCTAssertEqual(again.stopCount, 1, "\(label): the resumed run's consumer hears captureDidStop once")
            XCTAssertNil(again.stopError)
            if didResume, again.frames >= 2 { resumed += 1 } else { break }
        }
        let last = ProcessFigures.settled()  // stopped with the device open and the monitor running, as at first
        source.release()
        let everyEventSeen = await events.wait(seconds: 30) { $0.removed >= count && $0.added >= count }
        XCTAssertTrue(everyEventSeen,
                      "the monitor saw every unplug and replug: \(events.removed) removed, \(events.added) added")
        monitor.stop()
        await events.finish()
        let sorted = latencies.sorted()
        print(String(format: "figure: soak USB unplug storm: %d unplugs (%@), %d resumed; monitor saw %d removed, %d added; outcomes %@; unplug to .disconnected mid-stream (n=%d) median %.0f ms, max %.0f ms",
                     count, moments.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "), resumed,
                     events.removed, events.added, codes.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "),
                     sorted.count, (sorted.isEmpty ? 0 : sorted[sorted.count / 2]) * 1000, (sorted.last ?? 0) * 1000))
        ProcessFigures.assertFlat(first, last, "USB camera: \(count) unplug/replug cycles with resumeWhenReconnected and a DeviceMonitor")
    }

    /// An error's code, and for anything but `.disconnected` the operation that failed.
    private static func outcome(_ error: MediaDevicesError) -> String {
        error.code == .disconnected ? error.code.rawValue : "\(error.code.rawValue) (\(error.operation))"
    }

    // MARK: 3. vivid error injection

    private enum Fault: String, CaseIterable {
        case fatalStreamingError, streamOnError, droppedBuffers, wrapSequenceNumber, wrapTimestamp, disconnect
    }

    func testVividErrorInjectionStormKeepsStatisticsConsistent() throws {
        var node = try Rig.loadVivid("n_devs=1")[0]
        let request = FormatRequest(pixelFormat: .yuyv, size: Size(width: 320, height: 180), frameRate: FrameRate(25))
        var source = CameraSource(device: try CaptureDevice(path: node), request: request)
        let count = Soak.count(ci: Fault.allCases.count, divisor: 20)
        var rng = Soak.generator("faults")
        // Every fault at least once, then at random.
        var schedule = Fault.allCases.shuffled(using: &rng)
        while schedule.count < count { schedule.append(Fault.allCases.randomElement(using: &rng)!) }
        let first = ProcessFigures.settled()
        var tally: [String: Int] = [:]
        var wraps = 0, timestampWraps = 0, droppedTotal = 0, deliveredTotal = 0
        for (index, fault) in schedule.enumerated() {
            let label = "fault \(index) (\(fault.rawValue))"
            Watchdog.step(label)
            let consumer = SoakConsumer()
            source.consumer = consumer
            let delay = UInt32.random(in: 0...400_000, using: &rng)
            switch fault {
            case .fatalStreamingError:
                try source.start()
                usleep(delay)
                try Rig.setControl(node, "inject_fatal_streaming_error=1")
                XCTAssertTrue(consumer.wait(seconds: 20) { $0.stopCount >= 1 }, "\(label): the stream must end")
                XCTAssertEqual(consumer.stopError?.code, .io, "\(label): \(String(describing: consumer.stopError))")
            case .streamOnError:
                try source.initialize()
                try Rig.setControl(node, "inject_vidioc_streamon_error=1")
                XCTAssertThrowsError(try source.start(), label) { error in
                    let error = error as? MediaDevicesError
                    XCTAssertEqual(error?.operation, "VIDIOC_STREAMON", "\(label): \(String(describing: error))")
                    XCTAssertEqual(error?.device, node)
                }
                XCTAssertEqual(consumer.stopCount, 1, "\(label): the consumer hears the failed start once")
            case .droppedBuffers:
                try source.start()
                usleep(delay)
                try Rig.setControl(node, "percentage_of_dropped_buffers=\(Int.random(in: 10...60, using: &rng))")
                let target = consumer.frames + 20
                XCTAssertTrue(consumer.wait(seconds: 60) { $0.frames >= target }, "\(label): frames while dropping")
                try Rig.setControl(node, "percentage_of_dropped_buffers=0")
            case .wrapSequenceNumber:
                // Takes effect at STREAMON: the sequence starts 128 before 2^32 and wraps ~5 s in.
                // Half the time with drops, so some drops straddle the wrap.
                try Rig.setControl(node, "wrap_sequence_number=1")
                let dropping = Bool.random(using: &rng)
                if dropping { try Rig.setControl(node, "percentage_of_dropped_buffers=30") }
                try source.start()
                XCTAssertTrue(consumer.wait(seconds: 120) { $0.wrapped && $0.frames >= 10 }, "\(label): the sequence wraps (last \(consumer.lastSequence))")
                if consumer.wrapped { wraps += 1 }
                try Rig.setControl(node, "wrap_sequence_number=0")
                if dropping { try Rig.setControl(node, "percentage_of_dropped_buffers=0") }
            case .wrapTimestamp:
                // Takes effect at STREAMON: timestamps start 16 s before they wrap.
                try Rig.setControl(node, "wrap_timestamp=1")
                try source.start()
                XCTAssertTrue(consumer.wait(seconds: 60) { $0.timestampWentBack && $0.frames >= 10 }, "\(label): the timestamp wraps")
                if consumer.timestampWentBack { timestampWraps += 1 }
                try Rig.setControl(node, "wrap_timestamp=0")
            case .disconnect:
                try source.start()
                usleep(delay)
                try Rig.setControl(node, "disconnect=1")
                XCTAssertTrue(consumer.wait(seconds: 20) { $0.stopCount >= 1 }, "\(label): the stream must end")
                XCTAssertEqual(consumer.stopError?.code, .disconnected, "\(label): \(String(describing: consumer.stopError))")
            }
            source.stop()
            XCTAssertTrue(Soak.waitUntil(seconds: 10) { !source.isCapturing }, label)
            XCTAssertTrue(consumer.wait(seconds: 5) { $0.stopCount >= 1 }, "\(label): captureDidStop")
            XCTAssertEqual(consumer.stopCount, 1, "\(label): captureDidStop once")
            tally["\(fault.rawValue) → \(consumer.stopError?.code.rawValue ?? "nil")", default: 0] += 1

            // Consistent statistics for the run (one stream, no restart): every sequence number
            // from the first to the last frame was either delivered or counted as dropped,
            // across a wrap too (modulo 2^32).
            let stats = source.statistics
            XCTAssertEqual(stats.deliveredFrames, consumer.frames, "\(label): delivered frames reached the consumer")
            if consumer.frames > 0 {
                let span = Int(consumer.lastSequence &- consumer.firstSequence) + 1
                XCTAssertEqual(stats.deliveredFrames + stats.droppedFrames, span,
                               "\(label): delivered + dropped = sequence span \(consumer.firstSequence)...\(consumer.lastSequence): \(stats)")
            }
            XCTAssertTrue(stats.measuredFrameRate.isFinite && stats.measuredFrameRate >= 0, "\(label): \(stats)")
            XCTAssertTrue(stats.meanCaptureDelay.inMicroseconds.isFinite && stats.meanCaptureDelay.inMicroseconds >= 0, "\(label): \(stats)")
            XCTAssertGreaterThanOrEqual(stats.maxCaptureDelay.inMicroseconds, stats.meanCaptureDelay.inMicroseconds, "\(label): \(stats)")
            droppedTotal += stats.droppedFrames
            deliveredTotal += stats.deliveredFrames

            if fault == .disconnect {
                source.release()
                node = try Rig.loadVivid("n_devs=1")[0]
                source = CameraSource(device: try CaptureDevice(path: node), request: request)
            }
        }
        source.release()
        print("figure: soak vivid faults: \(schedule.count) injected (\(tally.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))); sequence wraps \(wraps), timestamp wraps \(timestampWraps); \(deliveredTotal) delivered, \(droppedTotal) dropped")
        ProcessFigures.assertFlat(first, ProcessFigures.settled(), "vivid: \(schedule.count) injected faults")
    }

    // MARK: 4. Audio

    func testAudioStartStopCyclesOnSndAloop() throws {
        try Rig.run("modprobe snd-aloop")
        for _ in 0..<100 { guard !FileManager.default.fileExists(atPath: "/dev/snd/pcmC0D1c") else { break }; usleep(20_000) }
        let format = AudioFormat(sampleRate: 48000, channels: 2, sampleFormat: .s16LE)
        let options = AudioStreamOptions(periodFrames: 512, periods: 4)
        let driver = AudioDriver()
        let stops = StopCounter(driver)
        func initialize() throws {
            try StopCounter.initialize(driver, render: .alsa("hw:Loopback,0,0", direction: .output),
                                       capture: .alsa("hw:Loopback,1,0", direction: .input), format: format, options: options)
        }
        try initialize()
        let count = Soak.count(ci: 50)
        var rng = Soak.generator("audio")
        var first: ProcessFigures?
        var starts = 0, reinitialized = 0
        for cycle in 0..<(count + 2) {
            if cycle == 2 { first = ProcessFigures.settled() }
            try driver.startRendering()
            try driver.startCapture()
            starts += 1
            let periods = Int.random(in: 1...4, using: &rng)
            XCTAssertTrue(Soak.waitUntil(seconds: 10) { driver.capture.statistics.periods >= periods }, "cycle \(cycle): \(periods) capture period(s)")
            guard stops.stopBoth(driver, starts: starts, label: "cycle \(cycle)", using: &rng) else { break }
            // Now and then the full cycle: close and open the devices again.
            if Int.random(in: 0..<10, using: &rng) == 0 {
                driver.capture.terminate()
                driver.render.terminate()
                try initialize()
                reinitialized += 1
            }
        }
        XCTAssertEqual(stops.errors, 0, "no run ended with an error")
        driver.capture.terminate()
        driver.render.terminate()
        try initialize()  // the first figures were taken with both sides open
        let last = ProcessFigures.settled()
        driver.capture.terminate()
        driver.render.terminate()
        ProcessFigures.assertFlat(first!, last, "snd-aloop: \(count) capture+render start/stop cycles (\(reinitialized) with close/open)")
    }
}

// MARK: - Helpers

/// Says on standard error (unbuffered, unlike `print` into the rig's pipe) which step a soak
/// is stuck at, every 20 s while it does not move, so a hang names itself before the timeout.
enum Watchdog {
    private static let state = Mutex<(step: String, since: Date)>(("", Date()))
    private static let started: Bool = {
        let thread = Thread {
            while true {
                sleep(10)
                let (step, since) = state.withLock { ($0.step, $0.since) }
                let stuck = Date().timeIntervalSince(since)
                if !step.isEmpty, stuck > 20 {
                    FileHandle.standardError.write(Data("soak: still at \"\(step)\" after \(Int(stuck)) s\n".utf8))
                    if dumped.withLock({ let first = $0 != step; $0 = step; return first }) {
                        FileHandle.standardError.write(Data(threadDump().utf8))
                    }
                    // Every wait of a step is bounded well below this; a step this long is
                    // blocked in a call that cannot be interrupted (the dump above shows which),
                    // so the run ends by name rather than hold the boot until the rig's timeout.
                    if stuck > 300 {
                        FileHandle.standardError.write(Data("soak: FAILED: \"\(step)\" hung for \(Int(stuck)) s; ending the test process\n\(threadDump())".utf8))
                        guardExit()
                        exit(3)
                    }
                }
            }
        }
        thread.start()
        return true
    }()

    /// A process with a thread blocked in the kernel (state D: seen once in `usb_poison_urb`
    /// under uvcvideo's STREAMOFF after an unplug) cannot finish exiting, so the rig's command
    /// would wait for it until the boot's timeout (30 minutes and more). A shell started before
    /// `exit` checks 30 s later whether this process is still there, and if so says why and
    /// powers the guest off (`sysrq o`): the rig then reports the boot as crashed with this
    /// text in the console's last lines, and `scripts/test.sh` runs the boot's unfinished classes
    /// again in a new boot (once; a second time fails the run).
    private static func guardExit() {
        let pid = getpid()
        let guardian = Process()
        guardian.executableURL = URL(fileURLWithPath: "/bin/sh")
        guardian.arguments = ["-c", """
            sleep 30
            if kill -0 \(pid) 2>/dev/null; then
                echo "soak: FAILED: the test process \(pid) did not exit 30 s after the hang (a thread blocked in the kernel); powering the guest off" >&2
                sync
                echo o >/proc/sysrq-trigger
            fi
            """]
        try? guardian.run()
    }

    /// The step whose threads were last dumped: one dump per stuck step.
    private static let dumped = Mutex<String>("")

    /// Every thread of the process with its name, kernel wait channel and kernel stack (read
    /// from /proc/self/task; the stack needs root, which the rig's guest has), so a stuck step
    /// shows which call is blocked and where in the kernel.
    static func threadDump() -> String {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        var out = "soak: thread dump (\(tasks.count) threads)\n"
        for tid in tasks.sorted(by: { (Int($0) ?? 0) < (Int($1) ?? 0) }) {
            func read(_ file: String) -> String {
                ((try? String(contentsOfFile: "/proc/self/task/\(tid)/\(file)", encoding: .utf8)) ?? "?")
                    .trimmingCharacters(in: .whitespacesAndNewlines)
            }
            let state = read("stat").split(separator: ")").last.map { String($0.prefix(3)).trimmingCharacters(in: .whitespaces) } ?? "?"
            out += "soak:   tid \(tid) \"\(read("comm"))\" state \(state) wchan \(read("wchan"))\n"
            for frame in read("stack").split(separator: "\n") { out += "soak:     \(frame)\n" }
        }
        return out
    }

    static func step(_ step: String) {
        _ = started
        state.withLock { $0 = (step, Date()) }
    }
}

/// Scale, seed and small utilities of the soak.
enum Soak {
    /// `MEDIADEVICES_SOAK_SCALE`, nil when unset (the CI short form).
    static let scale: Int? = ProcessInfo.processInfo.environment["MEDIADEVICES_SOAK_SCALE"].flatMap { Int($0) }.map { max(1, $0) }

    /// The short-form count `ci`, or scale / `divisor` (never below `ci`) in a long run.
    static func count(ci: Int, divisor: Int = 1) -> Int {
        guard let scale else { return ci }
        return max(ci, scale / divisor)
    }

    static let seed: UInt64 = {
        let seed = ProcessInfo.processInfo.environment["MEDIADEVICES_SOAK_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 1...UInt64(UInt32.max))
        print("soak: seed \(seed) (replay with MEDIADEVICES_SOAK_SEED=\(seed)), scale \(scale.map(String.init) ?? "CI short form")")
        return seed
    }()

    /// A generator for one test, derived from the seed and the test's label.
    static func generator(_ label: String) -> SplitMix64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in label.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        print("soak: \(label): seed \(seed)")
        return SplitMix64(seed: seed ^ hash)
    }

    /// Polls `condition` every 5 ms for up to `seconds`.
    static func waitUntil(seconds: Double, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while !condition() {
            if Date() > deadline { return false }
            usleep(5_000)
        }
        return true
    }

    /// The same for async tests (the compiler picks it there): it sleeps with `Task.sleep`
    /// instead of blocking its thread. With one CPU the cooperative pool has one thread, and a
    /// test blocking it starves the tasks it waits for (a monitor's reader, a sequence's).
    static func waitUntil(seconds: Double, _ condition: () -> Bool) async -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while !condition() {
            // A cancelled task's sleep returns at once: give up rather than spin on the pool.
            if Date() > deadline || Task.isCancelled { return false }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return true
    }

    /// Waits up to `seconds` for `semaphore` without blocking the thread (see `waitUntil`).
    static func wait(_ semaphore: DispatchSemaphore, seconds: Double) async -> Bool {
        await waitUntil(seconds: seconds) { semaphore.wait(timeout: .now()) == .success }
    }

    /// Runs `body` on a thread of its own after `microseconds`.
    static func after(microseconds: UInt32, _ body: @escaping @Sendable () -> Void) -> DispatchSemaphore {
        let done = DispatchSemaphore(value: 0)
        Thread {
            Thread.current.name = "soak-after"  // named in the watchdog's thread dump
            usleep(microseconds)
            body()
            done.signal()
        }.start()
        return done
    }

    /// CLOCK_MONOTONIC in nanoseconds (the clock of `USBCamera.unplugTime`).
    static func monotonicNow() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }
}

/// A small seeded generator (SplitMix64), so a failing run can be replayed.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9e37_79b9_7f4a_7c15
        var z = state
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }
}

/// A consumer that counts frames (per format), remembers the first and last sequence number,
/// notices a sequence wrap and a timestamp going back, and records each captureDidStop with
/// its CLOCK_MONOTONIC time.
final class SoakConsumer: VideoFrameConsumer, @unchecked Sendable {
    private let lock = NSLock()
    private var state = State()
    private struct State {
        var frames = 0
        var byFormat: [VideoFormat: Int] = [:]
        var firstSequence: UInt32 = 0
        var lastSequence: UInt32 = 0
        var lastTimestamp: UInt64 = 0
        var wrapped = false
        var timestampWentBack = false
        var stopCount = 0
        var stopError: MediaDevicesError?
        var stoppedAt: UInt64 = 0
    }

    func consumeFrame(_ frame: VideoFrame) {
        lock.lock(); defer { lock.unlock() }
        if state.frames == 0 {
            state.firstSequence = frame.sequence
        } else {
            if frame.sequence < state.lastSequence { state.wrapped = true }
            if frame.timestamp.nanoseconds < state.lastTimestamp { state.timestampWentBack = true }
        }
        state.lastSequence = frame.sequence
        state.lastTimestamp = frame.timestamp.nanoseconds
        state.frames += 1
        state.byFormat[frame.format, default: 0] += 1
    }

    func captureDidStop(error: MediaDevicesError?) {
        let now = Soak.monotonicNow()
        lock.lock(); defer { lock.unlock() }
        state.stopCount += 1
        state.stopError = error
        if state.stopCount == 1 { state.stoppedAt = now }
    }

    private func read<T>(_ body: (State) -> T) -> T { lock.lock(); defer { lock.unlock() }; return body(state) }
    var frames: Int { read { $0.frames } }
    func frames(in format: VideoFormat) -> Int { read { $0.byFormat[format] ?? 0 } }
    /// Frames per format so far.
    var formats: [VideoFormat: Int] { read { $0.byFormat } }
    var firstSequence: UInt32 { read { $0.firstSequence } }
    var lastSequence: UInt32 { read { $0.lastSequence } }
    var wrapped: Bool { read { $0.wrapped } }
    var timestampWentBack: Bool { read { $0.timestampWentBack } }
    var stopCount: Int { read { $0.stopCount } }
    var stopError: MediaDevicesError? { read { $0.stopError } }
    var stoppedAt: UInt64 { read { $0.stoppedAt } }

    /// Polls until `condition` holds, for up to `seconds`.
    func wait(seconds: Double, _ condition: (SoakConsumer) -> Bool) -> Bool { Soak.waitUntil(seconds: seconds) { condition(self) } }
    func wait(seconds: Double, _ condition: (SoakConsumer) -> Bool) async -> Bool { await Soak.waitUntil(seconds: seconds) { condition(self) } }
}

/// Counts a monitor's removed and added events.
final class EventCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var counts = (removed: 0, added: 0)
    private var task: Task<Void, Never>?

    init(_ monitor: DeviceMonitor) {
        task = Task { [weak self] in
            for await event in monitor.events {
                guard let self else { return }
                self.lock.withLock {
                    if event.action == .removed { self.counts.removed += 1 }
                    if event.action == .added { self.counts.added += 1 }
                }
            }
        }
    }

    var removed: Int { lock.withLock { counts.removed } }
    var added: Int { lock.withLock { counts.added } }
    /// Waits until the counting task ended (after the monitor stopped), so the monitor's
    /// descriptors are closed before the next test counts its own.
    func finish() async { await task?.value }
    func wait(seconds: Double, _ condition: (EventCounter) -> Bool) -> Bool { Soak.waitUntil(seconds: seconds) { condition(self) } }
    func wait(seconds: Double, _ condition: (EventCounter) -> Bool) async -> Bool { await Soak.waitUntil(seconds: seconds) { condition(self) } }
}

/// Counts audio runs' ends (`onStop`) per side, and those that ended with an error.
final class StopCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var counts = (capture: 0, render: 0, errors: 0)

    /// Counts `driver`'s runs: installs itself as both sides' `onStop` (before they start).
    init(_ driver: AudioDriver) {
        driver.capture.onStop = { [self] in record(capture: true, $0) }
        driver.render.onStop = { [self] in record(capture: false, $0) }
    }

    /// Stops both sides of `driver` in a random order and checks that each of the `starts` runs
    /// so far was heard once per side; returns whether that holds.
    func stopBoth(_ driver: AudioDriver, starts: Int, label: String, using rng: inout SplitMix64,
                  file: StaticString = #filePath, line: UInt = #line) -> Bool {
        if Bool.random(using: &rng) { driver.stopCapture(); driver.stopRendering() } else { driver.stopRendering(); driver.stopCapture() }
        XCTAssertFalse(driver.isCapturing || driver.isRendering, "\(label): both sides stopped", file: file, line: line)
        XCTAssertEqual(capture, starts, "\(label): onStop once per capture run", file: file, line: line)
        XCTAssertEqual(render, starts, "\(label): onStop once per render run", file: file, line: line)
        return capture == starts && render == starts
    }

    /// Opens `driver`'s render side on `render` and its capture side on `capture` (a loopback:
    /// what is played comes back), both in `format` with `options`.
    static func initialize(_ driver: AudioDriver, render: AudioDevice, capture: AudioDevice,
                           format: AudioFormat, options: AudioStreamOptions) throws {
        try driver.initializeRendering(device: render, format: format, options: options)
        try driver.initializeCapture(device: capture, format: format, options: options)
    }

    func record(capture: Bool, _ error: MediaDevicesError?) {
        lock.withLock {
            if capture { counts.capture += 1 } else { counts.render += 1 }
            if error != nil { counts.errors += 1 }
        }
    }

    var capture: Int { lock.withLock { counts.capture } }
    var render: Int { lock.withLock { counts.render } }
    var errors: Int { lock.withLock { counts.errors } }
}
