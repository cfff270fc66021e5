import Foundation
import Glibc
import MediaDevices
import Synchronization
import USBDevices
import XCTest

/// Audio and video together (issue 55), on the composite webcam in A/V test mode: its camera and
/// microphone make a flash (a white frame after dark ones) and a click (a pulse after silence) at
/// one instant of its clock, on command. Each capture below takes both functions together while
/// the webcam flashes three times, finds the flash frames and the clicks, and prints its A/V
/// offset (the time it gave the flash frame − the time it gave the click's first sample; 0 is
/// perfect) as `figure:` lines: FFmpeg and GStreamer into one file each (the peers' reference
/// figures), then ours (`CameraSource` + `AudioDriver`), with our glass-to-callback latency
/// beside `v4l2-ctl --stream-mmap`'s and GStreamer's `v4l2src` in the same boot, and through the
/// webcam's PipeWire node (`PipeWireCameraSource`). The offsets and latencies are figures, not
/// assertions (the rig is emulated, and these figures are what the library will be judged
/// against); what is asserted is that each capture holds the flashes and clicks, and that the
/// webcam made each flash and its click at the same nanosecond.
final class AVSyncTests: XCTestCase {
    override func setUpWithError() throws { try Rig.require() }

    static let flashes = 3
    static let format = AudioFormat(sampleRate: 48000, channels: 1, sampleFormat: .s16LE)

    /// FFmpeg as users call it (`-f v4l2 … -f alsa …`, streams copied into NUT), and with both
    /// inputs on the wall clock (`-ts abs -copyts`): by default FFmpeg starts each input at 0.
    func testFFmpegsOffset() throws {
        let webcam = try plugInAVTestMode()
        defer { webcam.close() }
        let inputs = { (videoOptions: String) in
            "-f v4l2 -input_format yuyv422 -video_size 160x120 -framerate 30 \(videoOptions) -i \(webcam.camera.path) -f alsa -sample_rate 48000 -channels 1 -i \(webcam.hwName)"
        }
        for (name, videoOptions, outputOptions) in [("ffmpeg", "", ""), ("ffmpeg -ts abs -copyts", "-ts abs", "-copyts")] {
            let path = "/tmp/av-\(name.count).nut"
            let command = "ffmpeg -hide_banner -nostdin -y \(inputs(videoOptions)) \(outputOptions) -map 0:v -map 1:a -c copy \(path)"
            try captureAndReport(name, command: command, path: path, webcam: webcam)
        }
    }

    /// GStreamer: `v4l2src` and `alsasrc` into `matroskamux`, raw (`gst-launch-1.0 -e`).
    func testGStreamersOffset() throws {
        let webcam = try plugInAVTestMode()
        defer { webcam.close() }
        let path = "/tmp/av-gst.mkv"
        let command = "gst-launch-1.0 -e v4l2src device=\(webcam.camera.path) ! video/x-raw,format=YUY2,width=160,height=120,framerate=30/1 ! queue ! mux. "
            + "alsasrc device=\(webcam.hwName) ! audio/x-raw,format=S16LE,rate=48000,channels=1 ! queue ! mux. matroskamux name=mux ! filesink location=\(path)"
        try captureAndReport("gstreamer", command: command, path: path, webcam: webcam)
    }

    /// Ours, in one process: `CameraSource` (V4L2: the frame's timestamp is uvcvideo's, on
    /// CLOCK_MONOTONIC) and `AudioDriver` (ALSA, chunks from `capturedChunks`). Also each stream's
    /// own error against the webcam's log (timestamp − the instant the webcam made it), and the
    /// glass-to-callback latency (the frame log's creation instant → our consumer), beside
    /// v4l2-ctl's (creation → its `dqbuf` line read here) and GStreamer's (creation → identity's
    /// line for the buffer read here) in the same boot.
    func testOurOffsetAndGlassToCallbackLatency() throws {
        let frameLog = "/tmp/av-frames-\(getpid()).log"
        let webcam = try plugInAVTestMode(frameLog: frameLog)
        defer { webcam.close() }

        let frames = AVFrameTimes()
        let source = CameraSource(device: webcam.camera, request: FormatRequest(pixelFormat: .yuyv, size: AVFlashCapture.size, frameRate: FrameRate(30)))
        source.consumer = frames
        let microphone = try XCTUnwrap(AudioDevice.scan().devices.first { $0.name == webcam.hwName }, "the webcam's microphone \(webcam.hwName)")
        let driver = AudioDriver()
        // 20 ms periods, a 2 s buffer (the emulated microphone delivers in bursts).
        try driver.initializeCapture(device: microphone, format: Self.format, options: AudioStreamOptions(periodFrames: 960, periods: 100))
        let audio = AVChunkTimes()
        try source.start()
        defer { source.release() }
        try driver.startCapture()
        let chunks = driver.capturedChunks()
        let reading = Task.detached { await audio.read(chunks) }

        let events = try AVFlashCapture.flash(webcam, count: Self.flashes)
        Thread.sleep(forTimeInterval: 0.5)
        source.stop()
        driver.capture.stop()
        XCTAssertTrue(audio.finished.wait(timeout: .now() + 30) == .success, "the chunk sequence ended after the stop")
        _ = reading
        XCTAssertNil(driver.capture.endError)
        XCTAssertNil(frames.stopError)
        assertEveryFlashMade(events)

        let frameTimes = frames.flashTimes
        let clickTimes = audio.clickTimes()
        let found = AVFlashCapture.match(events, frameTimes: frameTimes.mapValues { Double($0) / 1e9 }, clickTimes: clickTimes.mapValues { Double($0) / 1e9 })
        print("figure: ours: \(frames.count) frames, \(audio.sampleCount) samples, \(driver.capture.statistics.xruns) xruns, period \(driver.capture.periodFrames.map(String.init) ?? "?") frames")
        AVFlashCapture.report("ours (CameraSource + AudioDriver, ALSA)", found, of: events.count)
        XCTAssertFalse(found.isEmpty, "our capture holds a flash frame and its click (flash frames \(frameTimes.keys.sorted()), clicks \(clickTimes.keys.sorted()))")
        // Each stream against the webcam's own log: how far its timestamp is from the instant made.
        let videoErrors = events.compactMap { event in frameTimes[event.frame].map { (Double($0) - Double(event.flash_ns)) / 1e6 } }
        let audioErrors = events.compactMap { event in clickTimes[event.number].map { (Double($0) - Double(event.click_ns)) / 1e6 } }
        print("figure: ours: video timestamp − flash instant \(Self.milliseconds(videoErrors)) ms; audio timestamp − click instant \(Self.milliseconds(audioErrors)) ms")
        // The click to the chunk that carries it, as the chunk sequence's reader gets it (goal:
        // one period + 2 ms over ALSA at the 99th percentile; here the most of the clicks).
        let readTimes = audio.clickChunkReadTimes()
        let clickToReader = events.compactMap { event in readTimes[event.number].map { (Double($0) - Double(event.click_ns)) / 1e6 } }
        XCTAssertFalse(clickToReader.isEmpty, "a click found in a chunk the reader got")
        let period = Double(driver.capture.periodFrames ?? 960) / Double(Self.format.sampleRate) * 1000
        let worst = clickToReader.max() ?? .infinity
        print("figure: click to the chunk that carries it (AudioDriver's capturedChunks over ALSA, \(String(format: "%.0f", period)) ms periods): "
              + "\(Self.milliseconds(clickToReader)) ms; most \(String(format: "%.1f", worst)) ms against the goal of one period + 2 ms "
              + "(\(String(format: "%.0f", period + 2)) ms): \(worst <= period + 2 ? "met" : "MISSED")")

        // Glass to callback, and the timestamp's lag behind the glass, for every frame in the log.
        let made = try Self.frameLog(frameLog)
        let ourLatency = frames.records.compactMap { record in made[record.counter].map { Double(Int64(record.callback) - Int64($0)) / 1e6 } }
        let ourStamp = frames.records.compactMap { record in made[record.counter].map { Double(Int64(record.timestamp) - Int64($0)) / 1e6 } }
        XCTAssertGreaterThan(ourLatency.count, 30, "our frames found in the frame log by their counters")
        print("figure: glass-to-callback ours (CameraSource consumer, YUYV 160x120 30 fps): \(Self.percentiles(ourLatency)); timestamp − creation \(Self.percentiles(ourStamp))")
        source.release()
        let peer = try V4L2CtlStream.run(device: webcam.camera.path, frames: 60)
        let madeSince = try Self.frameLog(frameLog)  // with v4l2-ctl's frames
        let peerLatency = peer.compactMap { frame in madeSince[frame.counter].map { Double(Int64(frame.lineRead) - Int64($0)) / 1e6 } }
        let peerStamp = peer.compactMap { frame in frame.timestamp.flatMap { stamp in madeSince[frame.counter].map { Double(Int64(stamp) - Int64($0)) / 1e6 } } }
        XCTAssertGreaterThan(peerLatency.count, 30, "v4l2-ctl's frames found in the frame log by their counters")
        print("figure: glass-to-callback v4l2-ctl --stream-mmap (dqbuf line read): \(Self.percentiles(peerLatency)); timestamp − creation \(Self.percentiles(peerStamp))")
        let gst = try GStreamerStream.run(device: webcam.camera.path, frames: 60)
        let madeByNow = try Self.frameLog(frameLog)  // with GStreamer's frames
        let gstLatency = gst.compactMap { frame in madeByNow[frame.counter].map { Double(Int64(frame.lineRead) - Int64($0)) / 1e6 } }
        XCTAssertGreaterThan(gstLatency.count, 30, "GStreamer's frames found in the frame log by their counters (\(gst.count) read)")
        print("figure: glass-to-callback gst-launch-1.0 v4l2src ! identity (its line read): \(Self.percentiles(gstLatency))")
    }

    /// Glass to callback through PipeWire: the composite webcam's frames read through its node
    /// (WirePlumber's V4L2 monitor in a camera session) by `PipeWireCameraSource`, from the frame
    /// log's creation instant to our consumer, and the buffer's time against it. The direct read
    /// of the same camera is the test above, in the same boot. Goal: p99 ≤ one frame period +
    /// 2 ms, printed; asserted that the frames are found and that no frame takes a second.
    func testGlassToCallbackThroughPipeWire() throws {
        let frameLog = "/tmp/av-pw-frames-\(getpid()).log"
        let webcam = try plugInAVTestMode(frameLog: frameLog)
        defer { webcam.close() }
        let session = try CameraSession(name: "av-webcam", devices: [webcam.camera.path])
        defer { session.stop() }
        let routed = try XCTUnwrap(CaptureDevice.scan(backends: [.pipewire]).devices.first { $0.path == webcam.camera.path },
                                   "the webcam's PipeWire node\n\(session.report)")
        let rate = FrameRate(30)
        let source = try PipeWireCameraSource(device: routed, request: FormatRequest(pixelFormat: .yuyv, size: AVFlashCapture.size, frameRate: rate))
        defer { source.release() }
        let frames = AVFrameTimes()
        source.consumer = frames
        try source.start()
        let deadline = Date().addingTimeInterval(60)
        while frames.count < 150 && Date() < deadline { usleep(100_000) }
        source.stop()
        XCTAssertNil(frames.stopError)
        XCTAssertEqual(source.negotiation?.format.pixelFormat, .yuyv, "\(session.report)")
        let made = try Self.frameLog(frameLog)
        let latency = frames.records.compactMap { record in made[record.counter].map { Double(Int64(record.callback) - Int64($0)) / 1e6 } }
        let stamp = frames.records.compactMap { record in made[record.counter].map { Double(Int64(record.timestamp) - Int64($0)) / 1e6 } }
        XCTAssertGreaterThan(latency.count, 100, "frames read through the node found in the frame log by their counters (\(frames.count) read)\n\(session.report)")
        XCTAssertLessThan(latency.max() ?? .infinity, 1000, "every frame through PipeWire within a second of being made")
        let goal = 1000 / rate.framesPerSecond.doubleValue + 2
        let p99 = latency.sorted()[min(latency.count - 1, Int(Double(latency.count - 1) * 0.99))]
        print("figure: glass-to-callback ours through PipeWire (PipeWireCameraSource consumer, YUYV 160x120 30 fps): \(Self.percentiles(latency)); "
              + "timestamp − creation \(Self.percentiles(stamp)); goal p99 ≤ \(String(format: "%.1f", goal)) ms: \(p99 <= goal ? "met" : "MISSED")")
    }

    /// `mediadevices capture CAMERA --audio MICROPHONE --output FILE.mkv`, ended with Ctrl-C as a
    /// user ends it: the file read back as the peers' are, with four flashes 8 s apart. Each
    /// flash's offset is printed against the goal (|offset| ≤ 5 ms, or half the CLI's 10 ms audio
    /// period where that is larger), and the drift is the offsets' change over the run (goal:
    /// ≤ 1 ms a minute; this 24 s span gives it to a few ms a minute, a 10-minute run to
    /// ~0.1: `MEDIADEVICES_AV_DRIFT_SECONDS=600`). Asserted, on a machine as loaded as it may
    /// be: every flash lands in the file with its click within 250 ms of it, beyond what the
    /// webcam itself was late in handing either to the host (its log says; a file whose streams
    /// started on different clocks, or stamped by counting frames, is off by seconds: FFmpeg's
    /// default is). Then ffplay plays it as a viewer would, keeping the picture within 100 ms
    /// of the sound (its A-V, p95).
    func testCaptureAudioWritesAnMKVWhoseFlashesAndClicksLineUp() throws {
        let webcam = try plugInAVTestMode()
        defer { webcam.close() }
        let span = ProcessInfo.processInfo.environment["MEDIADEVICES_AV_DRIFT_SECONDS"].flatMap(Double.init) ?? 24
        let flashes = 4
        // 160x120 YUYV at 30 fps is 69 MB a minute, and its frames are read back beside the file:
        // past a minute, on the run's share of the host's disk, not the guest's memory.
        let folder = span > 60 ? ProcessInfo.processInfo.environment["MEDIADEVICES_RIG_OUT"] ?? "/tmp" : "/tmp"
        let path = "\(folder)/av-ours.mkv"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let command = "\(Rig.tool) capture \(webcam.camera.path) --format YUYV --size 160x120 --fps 30 --frames 1000000 "
            + "--audio \(webcam.hwName) --audio-rate 48000 --audio-channels 1 --output \(path)"
        let peer = try BackgroundCommand(command, log: "\(path).log")
        let events: [usbdev_av_event]
        do {
            events = try AVFlashCapture.flash(webcam, count: flashes, spacing: span / Double(flashes - 1))
        } catch {
            peer.interrupt()
            print("mediadevices capture output: \(peer.output)")
            throw error
        }
        let status = peer.interrupt()
        XCTAssertEqual(status, 130, "mediadevices capture stopped early by Ctrl-C, its file complete (docs/cli.md): \(peer.output)")
        XCTAssertEqual(events.count, flashes, "every flash made")
        let file = try AVFlashFile(path: path)
        let found = AVFlashCapture.match(events, frameTimes: file.frameTimes, clickTimes: file.clickTimes)
        print("figure: mediadevices capture --audio: \(file.videoPackets) frames, \(file.audioSamples) samples in \(path)")
        AVFlashCapture.report("mediadevices capture --audio (.mkv: millisecond timestamps)", found, of: events.count)
        XCTAssertEqual(found.count, events.count, """
            every flash frame and its click in the file (flash frames \(file.frameTimes.keys.sorted()), clicks \(file.clickTimes.keys.sorted()), \
            made: \(events.map { "\($0.number): frame \($0.frame)" })); \(peer.output)
            """)
        let goal = max(5.0, 10.0 / 2)
        for flash in found {
            func ms(_ value: Double?) -> String { value.map { String(format: "%.1f ms", $0) } ?? "not logged" }
            print(String(format: "figure: flash %u: A/V offset %+.1f ms against the goal of ±%.0f ms: %@ (the webcam handed the frame to the host %@ and the click %@ after making them)",
                         flash.number, flash.offsetMilliseconds, goal, abs(flash.offsetMilliseconds) <= goal ? "met" : "MISSED",
                         ms(flash.videoLate), ms(flash.audioLate)))
            XCTAssertNotNil(flash.videoLate, "flash \(flash.number): the webcam logs when it sent the flash frame")
            XCTAssertNotNil(flash.audioLate, "flash \(flash.number): the webcam logs when it sent the click")
            // A gross error only (streams on two clocks, frames counted: seconds off), beside
            // whatever the emulator says it was late by. What the guest's kernel was late by is
            // not in its log: beside two busy loops, −53 ms with the webcam 24 ms late; on a CI
            // machine loaded far beyond that, −133 ms (2026-12-01, before the webcam logged its
            // lateness). The goal above is printed, met or MISSED, for every run.
            XCTAssertLessThan(abs(flash.offsetMilliseconds), 250 + flash.emulatorLateness,
                              "flash \(flash.number): its frame and its click on one clock (the emulator late by \(ms(flash.videoLate)) and \(ms(flash.audioLate)))")
        }
        if let first = found.first, let last = found.last, last.audioTime > first.audioTime {
            let minutes = (last.audioTime - first.audioTime) / 60
            let drift = (last.offsetMilliseconds - first.offsetMilliseconds) / minutes
            print(String(format: "figure: A/V drift over %.1f s (flash %u to flash %u): %+.2f ms a minute against the goal of ≤ 1 ms a minute: %@",
                         minutes * 60, first.number, last.number, drift, abs(drift) <= 1 ? "met" : "MISSED"))
        }
        // Frames the webcam made between the first flash and the last that are not in the file
        // (lost on the emulated USB bus under load, or dropped by the capture): a figure, as the
        // offsets are. A lost frame leaves a hole in the counters; the flashes after it keep
        // their offsets (above), which is what "a gap, not a shift" asks.
        if let firstFrame = events.first?.frame, let lastFrame = events.last?.frame, firstFrame <= lastFrame {
            let missing = (firstFrame...lastFrame).filter { !file.frameCounters.contains($0) }
            print("figure: mediadevices capture --audio: frames \(firstFrame)...\(lastFrame) of the webcam, \(missing.count) not in the file")
        }
        // Played as a viewer plays it: ffplay keeps the picture on the sound's clock, and its A-V
        // says how far apart the file's timestamps put them (FFplayPlayback).
        let playback = FFplayPlayback(path: path, seconds: 30)
        func ms(_ seconds: Double?) -> String { seconds.map { String(format: "%.1f ms", $0 * 1000) } ?? "none" }
        let (median, p95) = (playback.absoluteDifference(atFraction: 0.5), playback.absoluteDifference(atFraction: 0.95))
        print("figure: ffplay played \(path) (its first 30 s, SDL's dummy drivers): |A-V| p50 \(ms(median)), p95 \(ms(p95)), "
              + "max \(ms(playback.absoluteDifference(atFraction: 1))) over \(playback.differences.count) status lines; \(playback.dropped) frames dropped")
        XCTAssertEqual(playback.status, 0, "ffplay played the file to its end and quit: \(playback.output)")
        XCTAssertGreaterThan(playback.differences.count, 20, "ffplay's status lines while it played: \(playback.output)")
        XCTAssertLessThan(p95 ?? .infinity, 0.1, "ffplay kept the picture within 100 ms of the sound for 95 % of the time (A-V): \(playback.output)")
    }

    // MARK: - Helpers

    /// The webcam plugged in and in A/V test mode; with `frameLog`, its emulator logs each frame's
    /// creation there (`MEDIADEVICES_USB_FRAME_LOG`, read when it is plugged).
    private func plugInAVTestMode(frameLog: String? = nil) throws -> USBWebcam {
        if let frameLog { setenv("MEDIADEVICES_USB_FRAME_LOG", frameLog, 1) }
        let plugged = Result { try USBWebcam.plug() }
        if frameLog != nil { unsetenv("MEDIADEVICES_USB_FRAME_LOG") }
        let webcam = try plugged.get()
        webcam.setAVTest(true)
        return webcam
    }

    /// Runs a peer's capture while the webcam flashes, then reads its file and prints its offset.
    private func captureAndReport(_ name: String, command: String, path: String, webcam: USBWebcam) throws {
        let peer = try BackgroundCommand(command, log: "\(path).log")
        let events: [usbdev_av_event]
        do {
            events = try AVFlashCapture.flash(webcam, count: Self.flashes)
        } catch {
            peer.interrupt()
            print("\(name) output: \(peer.output)")
            throw error
        }
        Thread.sleep(forTimeInterval: 0.5)
        let status = peer.interrupt()
        XCTAssertTrue(FileManager.default.fileExists(atPath: path), "\(name) wrote \(path) (status \(status)): \(peer.output)")
        assertEveryFlashMade(events)
        let file = try AVFlashFile(path: path)
        let found = AVFlashCapture.match(events, frameTimes: file.frameTimes, clickTimes: file.clickTimes)
        print("figure: \(name): \(file.videoPackets) frames, \(file.audioSamples) samples in \(path)")
        AVFlashCapture.report(name, found, of: events.count)
        XCTAssertFalse(found.isEmpty, """
            \(name)'s file holds a flash frame and its click (flash frames \(file.frameTimes.keys.sorted()), clicks \(file.clickTimes.keys.sorted()), \
            made: \(events.map { "\($0.number): frame \($0.frame)" })); \(name): \(peer.output)
            """)
    }

    /// The webcam made every flash and recorded each one's click (`AVFlashCapture.flash` keeps
    /// only those whose click it recorded). By design both at the same
    /// nanosecond of its clock; where they are not (3 ms apart once, on a machine loaded far
    /// beyond two busy loops: the emulated microphone's clock is paced by the host), the offsets
    /// are taken less that difference (`AVFlashCapture.Found.madeApart`), and it is printed.
    private func assertEveryFlashMade(_ events: [usbdev_av_event], file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(events.count, Self.flashes, "every flash made", file: file, line: line)
        for event in events {
            if event.flash_ns != event.click_ns {
                print("figure: the webcam made flash \(event.number) (frame \(event.frame)) and its click (sample \(event.sample)) \(String(format: "%+.3f", (Double(event.flash_ns) - Double(event.click_ns)) / 1e6)) ms apart; the offsets are taken less that")
            }
        }
    }

    /// The frame log (uvc_camera.c): frame counter → the instant the webcam made it.
    private static func frameLog(_ path: String) throws -> [UInt32: UInt64] {
        var made: [UInt32: UInt64] = [:]
        for line in try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n") {
            let fields = line.split(separator: " ")
            if fields.count == 2, let counter = UInt32(fields[0]), let time = UInt64(fields[1]) { made[counter] = time }
        }
        return made
    }

    private static func milliseconds(_ values: [Double]) -> String { values.map { String(format: "%+.1f", $0) }.joined(separator: " ") }

    private static func percentiles(_ values: [Double]) -> String {
        guard !values.isEmpty else { return "none" }
        let sorted = values.sorted()
        let at = { (p: Double) in sorted[min(sorted.count - 1, Int(Double(sorted.count - 1) * p))] }
        return String(format: "p50 %.1f ms, p99 %.1f ms over %d frames", at(0.5), at(0.99), sorted.count)
    }
}

/// Our consumer: each frame's counter, timestamp and the time the callback got it (monotonic ns),
/// and the flash frames' timestamps by counter.
final class AVFrameTimes: VideoFrameConsumer, @unchecked Sendable {
    struct Record { let counter: UInt32; let timestamp: UInt64; let callback: UInt64 }
    private let lock = NSLock()
    private var kept: [Record] = []
    private var flashes: [UInt32: UInt64] = [:]
    private var error: MediaDevicesError?

    func consumeFrame(_ frame: VideoFrame) {
        let callback = MonotonicInstant.now.nanoseconds
        let plane = frame.plane(0)
        guard let counter = USBCamera.counter(yuyv: plane.bytes, bytesPerRow: plane.bytesPerRow, size: AVFlashCapture.size) else { return }
        let flash = AVFlashCapture.isFlash(yuyv: plane.bytes, bytesPerRow: plane.bytesPerRow)
        lock.withLock {
            kept.append(Record(counter: UInt32(counter), timestamp: frame.timestamp.nanoseconds, callback: callback))
            if flash { flashes[UInt32(counter)] = frame.timestamp.nanoseconds }
        }
    }

    func captureDidStop(error: MediaDevicesError?) { lock.withLock { self.error = error } }

    var records: [Record] { lock.withLock { kept } }
    var count: Int { lock.withLock { kept.count } }
    var flashTimes: [UInt32: UInt64] { lock.withLock { flashes } }
    var stopError: MediaDevicesError? { lock.withLock { error } }
}

/// Our audio: every chunk's samples, the capture instant of its first frame and when the
/// reader got it.
final class AVChunkTimes: @unchecked Sendable {
    private let lock = NSLock()
    private var samples: [Int16] = []
    private var starts: [(frame: Int, instant: UInt64?, read: UInt64)] = []
    let finished = DispatchSemaphore(value: 0)

    func read(_ chunks: some AsyncSequence<AudioChunk, MediaDevicesError>) async {
        defer { finished.signal() }
        do {
            for try await chunk in chunks {
                let read = MonotonicInstant.now.nanoseconds
                let instant: UInt64? = chunk.timestamp.nanoseconds
                lock.withLock {
                    starts.append((chunk.startFrame, instant, read))
                    for index in 0..<chunk.samples.count { samples.append(Int16((chunk.samples[index] * 32768).rounded())) }
                }
            }
        } catch {
            print("capturedChunks ended with \(error)")
        }
    }

    var sampleCount: Int { lock.withLock { samples.count } }

    /// Click number → the capture instant of its first sample (monotonic ns).
    func clickTimes() -> [UInt32: UInt64] {
        lock.withLock {
            let clicks = samples.withUnsafeBufferPointer { AVFlashCapture.clicks(in: $0) }
            var times: [UInt32: UInt64] = [:]
            for (number, index) in clicks {
                guard let chunk = starts.last(where: { $0.frame <= index }), let instant = chunk.instant else { continue }
                times[number] = instant + UInt64(index - chunk.frame) * 1_000_000_000 / UInt64(AVFlashCapture.rate)
            }
            return times
        }
    }

    /// Click number → when the reader got the chunk holding the click's first sample (monotonic ns).
    func clickChunkReadTimes() -> [UInt32: UInt64] {
        lock.withLock {
            let clicks = samples.withUnsafeBufferPointer { AVFlashCapture.clicks(in: $0) }
            var times: [UInt32: UInt64] = [:]
            for (number, index) in clicks {
                if let chunk = starts.last(where: { $0.frame <= index }) { times[number] = chunk.read }
            }
            return times
        }
    }
}

/// `v4l2-ctl --stream-mmap --verbose` on a camera: each frame's counter (from the frames it
/// writes), its buffer timestamp and when its `dqbuf` line (standard error, unbuffered) was read here.
enum V4L2CtlStream {
    /// A frame a peer read: the webcam's counter (from the frames it wrote to its file), its
    /// buffer timestamp where the peer prints one on the monotonic clock, and when the peer's
    /// line for it was read here (monotonic ns).
    struct Frame { let counter: UInt32; let timestamp: UInt64?; let lineRead: UInt64 }

    static func run(device: String, frames: Int) throws -> [Frame] {
        let out = "/tmp/av-v4l2ctl-\(getpid()).yuyv"
        defer { try? FileManager.default.removeItem(atPath: out) }
        // "cap dqbuf: 0 seq:      0 bytesused: 38400 ts: 123.456789 ..." on standard error.
        return try PeerStream.run("/usr/bin/v4l2-ctl", ["-d", device, "--set-fmt-video=width=160,height=120,pixelformat=YUYV", "--set-parm=30",
                                                        "--stream-mmap=4", "--stream-count=\(frames)", "--verbose", "--stream-to=\(out)"],
                                  lines: .standardError, file: out) { line in
            guard line.contains("dqbuf") else { return nil }
            guard let range = line.range(of: "ts: ") else { return .some(nil) }
            let value = line[range.upperBound...].prefix { $0.isNumber || $0 == "." }
            let parts = value.split(separator: ".")
            guard parts.count == 2, let seconds = UInt64(parts[0]), let micros = UInt64(parts[1]) else { return .some(nil) }
            return .some(seconds * 1_000_000_000 + micros * 1000)
        }
    }
}

/// `gst-launch-1.0 -v v4l2src ! identity silent=false ! filesink` on a camera: identity prints a
/// line as each buffer passes it (its `last-message`, line-buffered through `stdbuf`), and the
/// file holds the frames in the same order. GStreamer's pts is its pipeline's running time, not
/// the monotonic clock: no timestamp.
enum GStreamerStream {
    static func run(device: String, frames: Int) throws -> [V4L2CtlStream.Frame] {
        let out = "/tmp/av-gst-\(getpid()).yuyv"
        defer { try? FileManager.default.removeItem(atPath: out) }
        return try PeerStream.run("/usr/bin/stdbuf", ["-oL", "gst-launch-1.0", "-v", "v4l2src", "device=\(device)", "num-buffers=\(frames)", "!",
                                                      "video/x-raw,format=YUY2,width=160,height=120,framerate=30/1", "!",
                                                      "identity", "silent=false", "!", "filesink", "location=\(out)"],
                                  lines: .standardOutput, file: out) { line in
            line.contains("identity0") && line.contains("chain") ? .some(nil) : nil
        }
    }
}

/// A peer's capture of the composite webcam's YUYV 160x120 frames: `executable` writes each frame
/// to `file` and a line per frame to `lines`; `stamp` picks those lines (nil: not a frame's line;
/// `.some(nil)`: a frame's line with no timestamp). The nth frame line goes with the nth frame of
/// the file.
enum PeerStream {
    enum Lines { case standardOutput, standardError }

    static func run(_ executable: String, _ arguments: [String], lines: Lines, file: String,
                    stamp: (Substring) -> UInt64??) throws -> [V4L2CtlStream.Frame] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let pipe = Pipe()
        switch lines {
        case .standardOutput: (process.standardOutput, process.standardError) = (pipe, FileHandle.nullDevice)
        case .standardError: (process.standardError, process.standardOutput) = (pipe, FileHandle.nullDevice)
        }
        try process.run()
        var read: [(text: Substring, read: UInt64)] = []
        var pending = ""
        let handle = pipe.fileHandleForReading
        while true {
            let data = handle.availableData
            if data.isEmpty { break }
            let now = MonotonicInstant.now.nanoseconds
            pending += String(decoding: data, as: UTF8.self)
            while let newline = pending.firstIndex(where: { $0 == "\n" || $0 == "\r" }) {
                read.append((Substring(pending[..<newline]), now))
                pending = String(pending[pending.index(after: newline)...])
            }
        }
        process.waitUntilExit()
        let stamps = read.compactMap { line in stamp(line.text).map { (timestamp: $0, read: line.read) } }
        XCTAssertEqual(process.terminationStatus, 0, "\(arguments.prefix(3).joined(separator: " ")): \(read.suffix(5).map(\.text))")
        let bytes = try Data(contentsOf: URL(fileURLWithPath: file))
        return bytes.withUnsafeBytes { raw in
            (0..<min(stamps.count, raw.count / AVFlashCapture.frameBytes)).compactMap { index in
                let frame = UnsafeRawBufferPointer(rebasing: raw[index * AVFlashCapture.frameBytes..<(index + 1) * AVFlashCapture.frameBytes])
                guard let counter = USBCamera.counter(yuyv: frame, bytesPerRow: AVFlashCapture.size.width * 2, size: AVFlashCapture.size) else { return nil }
                return V4L2CtlStream.Frame(counter: UInt32(counter), timestamp: stamps[index].timestamp, lineRead: stamps[index].read)
            }
        }
    }
}
