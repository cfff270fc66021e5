import Foundation
import XCTest
import MediaDevices

/// Audio and video on one clock: chunk timestamps from snd-aloop against the read time and the
/// sample rate, and `capture --audio` writing vivid and snd-aloop into one .mkv that ffprobe
/// (the reference, in the same boot) reads with both streams.
final class AVFileTests: XCTestCase {
    override func setUpWithError() throws {
        try Rig.require()
        try Rig.run("modprobe snd-aloop")
        for _ in 0..<100 { guard !FileManager.default.fileExists(atPath: "/dev/snd/pcmC0D1c") else { break }; usleep(20_000) }
    }

    override func tearDown() {
        Rig.shell("modprobe -r vivid")
    }

    /// Chunks of snd-aloop's capture (silence at the cable's pace): each was recorded before it
    /// was read (never from the future) and, in the median, within a period plus the buffer of
    /// it; chunk to chunk the timestamps advance at the sample rate.
    func testChunkTimestampsAdvanceAtTheSampleRateAndPrecedeTheirReading() async throws {
        let driver = AudioDriver()
        let period = 480, periods = 8
        try await driver.initializeCapture(device: .alsa("hw:Loopback,1,0", direction: .input),
                                     format: AudioFormat(sampleRate: 48000, channels: 2, sampleFormat: .floatLE),
                                     options: AudioStreamOptions(periodFrames: period, periods: periods))
        defer { driver.capture.terminate() }
        let rate = Double(driver.captureFormat!.sampleRate)
        let chunks = driver.capturedChunks()
        try driver.startCapture()
        var stamps: [(timestamp: UInt64, read: UInt64, frames: Int, startFrame: Int)] = []
        for try await chunk in chunks {
            stamps.append((chunk.timestamp.nanoseconds, MonotonicInstant.now.nanoseconds, chunk.frames, chunk.startFrame))
            if chunk.startFrame + chunk.frames >= Int(rate * 3) { break }
        }
        driver.stopCapture()
        XCTAssertGreaterThan(stamps.count, 100, "3 s of 10 ms chunks")
        guard let first = stamps.first, let last = stamps.last else { return }
        let periodNanoseconds = Double(driver.capture.periodFrames ?? period) / rate * 1e9
        let bufferNanoseconds = Double(driver.capture.bufferFrames ?? period * periods) / rate * 1e9
        // Never from the future: a chunk's last sample was recorded before the chunk was read.
        let early = stamps.filter { Double($0.timestamp) + Double($0.frames) / rate * 1e9 > Double($0.read) + 1e6 }
        XCTAssertEqual(early.count, 0, "chunks stamped after they were read: \(early.prefix(3))")
        // In the median, read within a period plus the device's buffer (plus half a chunk of polling).
        let ages = stamps.map { Double($0.read) - (Double($0.timestamp) + Double($0.frames) / rate * 1e9) }.sorted()
        let median = ages[ages.count / 2]
        XCTAssertLessThanOrEqual(median, periodNanoseconds + bufferNanoseconds + 5e6, "median age \(median / 1e6) ms")
        // Over the run the timestamps follow the samples: elapsed time against frames counted.
        let elapsed = Double(last.timestamp - first.timestamp)
        let counted = Double(last.startFrame - first.startFrame) / rate * 1e9
        XCTAssertEqual(elapsed, counted, accuracy: periodNanoseconds + counted * 0.01,
                       "chunk timestamps advance at the sample rate (elapsed \(elapsed / 1e6) ms, counted \(counted / 1e6) ms)")
        // Chunk to chunk they move by the chunk's length, give or take the device's timestamp
        // jitter where a new period's time takes over: up to a period where snd-aloop's timer
        // fires late in a busy guest (10.2 ms once, with 10 ms periods, beside other rig boots);
        // two periods or more would be a period lost or counted twice (the elapsed time against
        // the frames counted, above, bounds the drift over the run).
        let steps = zip(stamps, stamps.dropFirst()).map { Double($1.timestamp) - Double($0.timestamp) - Double($0.frames) / rate * 1e9 }
        let worst = steps.map(abs).max() ?? 0
        XCTAssertLessThan(worst, 2 * periodNanoseconds, "chunk-to-chunk steps off the sample rate by up to \(worst / 1e6) ms")
        print(String(format: "figure: snd-aloop chunks %d, median age %.2f ms, elapsed %.1f ms against %.1f ms of samples, worst step off the rate %.2f ms, steps back %d",
                     stamps.count, median / 1e6, elapsed / 1e6, counted / 1e6, worst / 1e6, steps.filter { $0 < -10e6 }.count))
    }

    /// `capture 0 --audio hw:Loopback,1,0 --output FILE.mkv`: vivid's frames (YUYV, 25 fps) and
    /// snd-aloop's samples in one Matroska file; ffprobe sees rawvideo and pcm_f32le, every
    /// frame, increasing pts, and audio covering the video to within a period and a frame.
    func testCaptureWithAudioWritesAnMKVThatFFprobeReadsWithBothStreams() throws {
        try Rig.loadVivid("n_devs=1")
        let output = "\(Rig.scratch)/av.mkv"
        let frames = 75  // 3 s at 25 fps
        let printed = try Rig.run("\(Rig.tool) capture 0 --format YUYV --size 640x480 --fps 25 --frames \(frames) --audio hw:Loopback,1,0 --output \(output) --json")
        let report = try JSONSerialization.jsonObject(with: Data(printed.utf8)) as? [String: Any]
        let sync = report?["sync"] as? [String: Any]
        XCTAssertNotNil(sync?["startOffsetMilliseconds"] as? Double, printed)
        XCTAssertNotNil(sync?["driftMillisecondsPerMinute"] as? Double, printed)
        XCTAssertEqual(sync?["videoFrames"] as? Int, frames)
        let streams = try Rig.run("ffprobe -v error -show_entries stream=codec_type,codec_name,pix_fmt,sample_rate,channels -of compact=p=0:nk=1 \(output)")
        XCTAssertTrue(streams.contains("rawvideo|video|yuyv422"), streams)
        XCTAssertTrue(streams.contains("pcm_f32le|audio|48000|2"), streams)
        func packets(_ stream: String) throws -> [(pts: Double, duration: Double)] {
            try Rig.run("ffprobe -v error -select_streams \(stream) -show_entries packet=pts_time,duration_time -of csv=p=0 \(output)")
                .split(separator: "\n").compactMap { line in
                    let fields = line.split(separator: ",").compactMap { Double($0) }
                    return fields.count == 2 ? (fields[0], fields[1]) : nil
                }
        }
        let video = try packets("v"), audio = try packets("a")
        XCTAssertEqual(video.count, frames, "every frame written")
        XCTAssertEqual(zip(video, video.dropFirst()).filter { $1.pts <= $0.pts }.count, 0, "video pts increase")
        XCTAssertEqual(zip(audio, audio.dropFirst()).filter { $1.pts <= $0.pts }.count, 0, "audio pts increase")
        guard let firstVideo = video.first, let lastVideo = video.last, let firstAudio = audio.first, let lastAudio = audio.last else {
            return XCTFail("no packets: \(video.count) video, \(audio.count) audio")
        }
        // A dropped frame leaves a gap: the video spans at least its frames' periods less one.
        let videoSpan = lastVideo.pts - firstVideo.pts
        XCTAssertGreaterThanOrEqual(videoSpan, Double(frames - 2) * 0.04, "video spans its frames")
        // Audio is started before the camera and stopped after it: it covers the video, to within
        // a period (10 ms chunks, the device's period at most 512 frames) and a frame.
        let slack = 0.04 + 512.0 / 48000
        XCTAssertLessThanOrEqual(firstAudio.pts, firstVideo.pts + slack, "audio from the start")
        XCTAssertGreaterThanOrEqual(lastAudio.pts + lastAudio.duration, lastVideo.pts - slack, "audio to the end")
        // The audio's samples fill the time its timestamps span (no time invented or lost),
        // unless the device overran: then the samples it lost are a gap, never a shift.
        let sampled = audio.reduce(0) { $0 + $1.duration }
        let spanned = lastAudio.pts + lastAudio.duration - firstAudio.pts
        let overruns = report?["audioOverruns"] as? Int ?? -1
        if overruns == 0 {
            XCTAssertEqual(sampled, spanned, accuracy: slack + spanned * 0.01, "audio duration against its pts span")
        } else {
            XCTAssertLessThanOrEqual(sampled, spanned + slack, "\(overruns) overruns: the lost samples leave gaps")
        }
        print("figure: av.mkv video \(video.count) frames over \(videoSpan) s, audio \(audio.count) packets, \(sampled) s over \(spanned) s; \(sync ?? [:])")
    }
}
