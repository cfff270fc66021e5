import Foundation
import Glibc
import MediaDevices
import Synchronization
import XCTest

/// The long run of issue 16: a camera (vivid, through the leased `frames()` sequence), a screen
/// (bochs, through a callback) and audio (snd-aloop, a tone played and recorded back) all at
/// once in one process, for `MEDIADEVICES_SOAK_MINUTES` (an hour by hand with `scripts/soak.sh`;
/// 45 s in CI: long enough for every stream to pass its warm-up and the figures to settle, first
/// and last, with the hour kept for `scripts/soak.sh`). Figures are taken once everything runs and again at the end, still running:
/// descriptors, mappings and threads must be the same, the heap in use flat but for the camera
/// sequence's pool; every gap in the camera's sequence numbers counted as a drop; the tone still
/// right at the end.
final class SoakTogetherTests: XCTestCase {
    override func setUpWithError() throws { try Rig.require() }
    override func tearDown() { Watchdog.step("") }

    /// The camera sequence's queue length.
    static let bufferSize = 4

    /// Seconds to run: `MEDIADEVICES_SOAK_MINUTES` × 60, or 45 s (the CI short form).
    static let seconds: Double = ProcessInfo.processInfo.environment["MEDIADEVICES_SOAK_MINUTES"]
        .flatMap { Double($0) }.map { max(0.5, $0) * 60 } ?? 45

    /// Counts what the camera's frame sequence gives, on a task of its own: the frames, the
    /// gaps between their sequence numbers (the library's rule: a step of k > 1 is k - 1
    /// drops, a step back is none), and the steps back.
    private final class SequenceReader: @unchecked Sendable {
        private let lock = NSLock()
        private var counts = (frames: 0, first: UInt32(0), last: UInt32(0), leased: 0, gaps: 0, backSteps: 0)
        private(set) var error: Error?
        private var task: Task<Void, Never>?

        init(_ frames: VideoFrames) {
            task = Task { [self] in
                do {
                    for try await frame in frames {
                        let leased = frame.isLeased
                        let sequence = frame.sequence
                        lock.withLock {
                            if counts.frames == 0 {
                                counts.first = sequence
                            } else {
                                let step = sequence &- counts.last
                                if step > 1, step < 1 << 31 { counts.gaps += Int(step - 1) }
                                if step == 0 || step >= 1 << 31 { counts.backSteps += 1 }
                            }
                            counts.last = sequence
                            counts.frames += 1
                            if leased { counts.leased += 1 }
                        }
                    }
                } catch {
                    lock.withLock { self.error = error }
                }
            }
        }

        var frames: Int { lock.withLock { counts.frames } }
        var span: Int { lock.withLock { counts.frames == 0 ? 0 : Int(counts.last &- counts.first) + 1 } }
        var leased: Int { lock.withLock { counts.leased } }
        var gaps: Int { lock.withLock { counts.gaps } }
        var backSteps: Int { lock.withLock { counts.backSteps } }
        func finish() async { await task?.value }
    }

    func testCameraScreenAndAudioTogether() async throws {
        // Camera.
        let node = try Rig.loadVivid("n_devs=1")[0]
        let camera = CameraSource(device: try CaptureDevice(path: node),
                                  request: FormatRequest(pixelFormat: .yuyv, size: .vga, frameRate: FrameRate(25)))
        let reader = SequenceReader(camera.frameSequence(bufferSize: Self.bufferSize))
        // Screen.
        let screen = try ScreenScenarios.loadDisplay("bochs")
        let screenSource = ScreenSource(screen: try ScreenScenarios.current(screen), frameRate: FrameRate(10))
        let screenFrames = SoakConsumer()
        screenSource.consumer = screenFrames
        // Audio.
        try Rig.run("modprobe snd-aloop")
        for _ in 0..<100 { guard !FileManager.default.fileExists(atPath: "/dev/snd/pcmC0D1c") else { break }; usleep(20_000) }
        let format = AudioFormat(sampleRate: 48000, channels: 2, sampleFormat: .s16LE)
        let driver = AudioDriver()
        let audioStops = StopCounter(driver)
        try StopCounter.initialize(driver, render: .alsa("hw:Loopback,0,0", direction: .output), capture: .alsa("hw:Loopback,1,0", direction: .input),
                                   format: format, options: AudioStreamOptions(periodFrames: 1024, periods: 8))
        let pump = TonePump(driver: driver, format: format, keepSeconds: 1)

        try camera.start()
        try screenSource.start()
        try driver.startRendering()
        try driver.startCapture()
        pump.start()
        let started = Date()
        Watchdog.step("together: warming up")
        let everythingDelivers = await Soak.waitUntil(seconds: 60) { reader.frames >= 10 && screenFrames.frames >= 5 && pump.samplesCaptured >= format.sampleRate * format.channels }
        XCTAssertTrue(everythingDelivers,
                      "everything delivers (camera \(reader.frames), screen \(screenFrames.frames), audio \(pump.samplesCaptured) samples)")
        let first = ProcessFigures.settled()
        var lastMinute = 0
        while Date().timeIntervalSince(started) < Self.seconds {
            Watchdog.step("together: \(Int(Date().timeIntervalSince(started))) s")
            XCTAssertTrue(camera.isCapturing && screenSource.isCapturing && driver.isCapturing && driver.isRendering,
                          "everything still runs after \(Int(Date().timeIntervalSince(started))) s")
            guard camera.isCapturing && screenSource.isCapturing && driver.isCapturing && driver.isRendering else { break }
            let minute = Int(Date().timeIntervalSince(started) / 60)
            if minute > lastMinute {
                lastMinute = minute
                let now = ProcessFigures.now()
                // The heap in use each minute: a leak grows with time, a warm-up does not.
                print(String(format: "soak together: %d min: camera %d frames (%d dropped, %d steps back), screen %d, audio %.0f s captured; fds %d, RSS %.1f MB, heap in use %@ MB",
                             minute, reader.frames, reader.gaps, reader.backSteps, screenFrames.frames,
                             Double(pump.samplesCaptured) / Double(format.sampleRate * format.channels),
                             now.descriptors, Double(now.rssKilobytes) / 1024,
                             now.heapKilobytes.map { String(format: "%.2f", Double($0) / 1024) } ?? "n/a"))
            }
            usleep(500_000)
        }
        let last = ProcessFigures.settled()  // still running, as at first
        let elapsed = Date().timeIntervalSince(started)
        let tone = pump.kept

        Watchdog.step("together: stopping")
        pump.finish()
        camera.stop()
        await reader.finish()
        screenSource.stop()
        driver.stopCapture()
        driver.stopRendering()
        // The last runs' statistics, read once nothing delivers any more.
        let cameraStats = camera.statistics, screenStats = screenSource.statistics
        let captureStats = driver.capture.statistics, renderStats = driver.render.statistics

        XCTAssertNil(reader.error, "the camera sequence ended without an error")
        // Every delivered frame reached the sequence or was counted as dropped in its buffer (the
        // reader task starved for more than `bufferSize` frames on a busy host: the library's
        // drop-oldest rule, counted, not a loss; it once failed CI's run as "none dropped").
        XCTAssertEqual(cameraStats.deliveredFrames, reader.frames + cameraStats.queueDroppedFrames,
                       "every delivered frame reached the sequence or was counted as dropped in its buffer: \(cameraStats)")
        // Every gap in the sequence numbers the reader saw is counted as a drop, the driver's or the
        // buffer's, no more. (Not "delivered + dropped = last - first + 1": in an hour under heavy
        // host load vivid's numbers once stepped back, which that identity cannot survive; the
        // steps back are printed.)
        XCTAssertEqual(cameraStats.droppedFrames + cameraStats.queueDroppedFrames, reader.gaps,
                       "camera: every sequence gap counted as a drop: \(cameraStats)")
        if reader.backSteps == 0 {
            XCTAssertEqual(cameraStats.deliveredFrames + cameraStats.droppedFrames, reader.span, "camera: delivered + dropped = the sequence span: \(cameraStats)")
        }
        let screenStopped = await screenFrames.wait(seconds: 5) { $0.stopCount >= 1 }
        XCTAssertTrue(screenStopped)
        XCTAssertEqual(screenFrames.stopCount, 1)
        XCTAssertNil(screenFrames.stopError)
        XCTAssertEqual(screenStats.deliveredFrames, screenFrames.frames, "screen: every delivered frame reached the consumer")
        XCTAssertEqual(audioStops.errors, 0, "no audio run ended with an error")
        let measured = AudioToneRun.assertTone(tone, format: format, skip: 0, label: "the tone after \(Int(elapsed)) s")
        print(String(format: "figure: soak camera + screen + audio together for %.0f s: camera %d frames (%d leased, %d dropped by the driver, %d in the sequence's buffer, %d sequence steps back, %.2f fps); screen %d frames (%.2f fps, %d dropped); audio %.1f s captured, %d capture and %d render xruns, render bus shortfall %d samples, tone %.3f Hz at the end",
                     elapsed, reader.frames, reader.leased, cameraStats.droppedFrames, cameraStats.queueDroppedFrames, reader.backSteps, cameraStats.measuredFrameRate,
                     screenFrames.frames, screenStats.measuredFrameRate, screenStats.droppedFrames,
                     Double(pump.samplesCaptured) / Double(format.sampleRate * format.channels), captureStats.xruns, renderStats.xruns, renderStats.busShortfallSamples,
                     measured?.frequency ?? .nan))
        // The camera's sequence copies a frame when a lease would starve the driver (a reader
        // that lags: a busy host), into a pool of at most bufferSize + 2 buffers whose pixels are
        // allocated at their first copy, so the heap may grow by up to that many frames at any
        // time in the run. Measured in the rig (a 90 s probe, not kept in the suite): a reader holding 3 frames grew the
        // heap by one frame (600 KB) in one step, then was flat; a fast reader grew 131 KB in 40 s
        // (libdispatch's per-thread continuation caches, at most 1024 each) and was flat after.
        let poolKilobytes = (Self.bufferSize + 2) * (640 * 480 * 2) / 1024
        ProcessFigures.assertFlat(first, last, "camera + screen + audio together for \(Int(elapsed)) s", poolKilobytes: poolKilobytes, screenMayRemap: true)
        camera.release()
        screenSource.release()
        driver.capture.terminate()
        driver.render.terminate()
    }
}
