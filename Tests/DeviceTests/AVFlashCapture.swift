import Foundation
import Glibc
import MediaDevices
import USBDevices
import XCTest

/// What the A/V tests need around the composite webcam in A/V test mode (usb_devices.h,
/// `usbdev_webcam_flash`): the capture size, the flashes made while a capture runs, and the
/// flash frames and clicks found in a capture (a file a peer wrote, or our own frames and chunks),
/// each with the time the capture gave it.
enum AVFlashCapture {
    /// YUYV 160x120 at 30 fps: raw frames (no decoding to find a flash), cheap under emulation.
    static let size = Size(width: 160, height: 120)
    static let frameBytes = 160 * 120 * 2
    static let rate = 48000

    /// A flash frame's mean luma on row 60 is 235 (dark frames: 16).
    static func isFlash(yuyv: UnsafeRawBufferPointer, bytesPerRow: Int) -> Bool {
        var sum = 0
        let row = 60 * bytesPerRow
        for x in stride(from: 0, to: size.width * 2, by: 2) { sum += Int(yuyv[row + x]) }
        return sum / size.width > 126
    }

    /// The clicks in `samples` (silence is exact zeros; click N is 8 × N non-zero samples):
    /// number → index of its first sample.
    static func clicks(in samples: UnsafeBufferPointer<Int16>) -> [UInt32: Int] {
        var found: [UInt32: Int] = [:]
        var index = 0
        while index < samples.count {
            guard samples[index] != 0 else { index += 1; continue }
            var end = index
            while end < samples.count && samples[end] != 0 { end += 1 }
            let length = end - index
            if length % Int(USBDEV_AV_CLICK_SAMPLES) == 0 { found[UInt32(length / Int(USBDEV_AV_CLICK_SAMPLES))] = index }
            index = end
        }
        return found
    }

    /// Waits until both functions stream (the camera's frames and the microphone's samples go
    /// up), then makes `count` flashes `spacing` s apart; the events with their clicks. Fails the
    /// test when nothing streams within `timeout` s.
    static func flash(_ webcam: USBWebcam, count: Int, spacing: Double = 1.0, timeout: Double = 60,
                      file: StaticString = #filePath, line: UInt = #line) throws -> [usbdev_av_event] {
        let deadline = Date().addingTimeInterval(timeout)
        var frames = webcam.framesSent, samples = webcam.samplesSent
        var streaming = 0
        while streaming < 3 {  // three looks in a row with both moving
            guard Date() < deadline else {
                XCTFail("the webcam's camera and microphone did not both stream within \(timeout) s (frames \(webcam.framesSent), samples \(webcam.samplesSent))",
                        file: file, line: line)
                throw RigError.commandFailed("A/V capture start")
            }
            usleep(300_000)
            let (f, s) = (webcam.framesSent, webcam.samplesSent)
            streaming = f > frames && s > samples ? streaming + 1 : 0
            (frames, samples) = (f, s)
        }
        var events: [usbdev_av_event] = []
        for _ in 0..<count {
            let number = webcam.flash()
            XCTAssertGreaterThan(number, 0, "the webcam is in A/V test mode", file: file, line: line)
            if let event = webcam.flashAndClick(number) { events.append(event) } else {
                XCTFail("flash \(number) or its click was not made within 5 s", file: file, line: line)
            }
            usleep(useconds_t(spacing * 1e6))
        }
        return events
    }

    /// One flash as a capture saw it: the time it gave the flash frame and the click's first sample (s).
    struct Found {
        let number: UInt32
        let videoTime: Double
        let audioTime: Double
        /// The webcam's flash instant − its click's (ms), from its own log: 0 by design (the
        /// click is placed on the flash's instant), 3 ms once in a run on a machine loaded far
        /// beyond two busy loops.
        let madeApart: Double
        /// How late the webcam handed the flash frame and the click to the host (ms) after it
        /// made them, from its own log (`flash_sent_ns`, `click_sent_ns`): a few ms idle (the
        /// click waits for the rest of its URB), more where the machine starves the emulator; nil
        /// when it did not log one.
        let videoLate: Double?
        let audioLate: Double?
        /// Video time − audio time (ms), less what the webcam made them apart: 0 when the capture
        /// stamps both as the webcam made them.
        var offsetMilliseconds: Double { (videoTime - audioTime) * 1000 - madeApart }
        /// What the emulator's own lateness can put between the two as they reach the kernel
        /// (ms): a capture that stamps arrivals sees up to this much offset that is not its own.
        var emulatorLateness: Double { abs(videoLate ?? 0) + abs(audioLate ?? 0) }
    }

    /// The flashes of `events` found in both of a capture's streams: `frameTimes` (frame counter →
    /// time) and `clickTimes` (click number → time).
    static func match(_ events: [usbdev_av_event], frameTimes: [UInt32: Double], clickTimes: [UInt32: Double]) -> [Found] {
        events.compactMap { event in
            guard let video = frameTimes[event.frame], let audio = clickTimes[event.number] else { return nil }
            func late(_ sent: UInt64, _ made: UInt64) -> Double? { sent == 0 ? nil : (Double(sent) - Double(made)) / 1e6 }
            return Found(number: event.number, videoTime: video, audioTime: audio,
                         madeApart: (Double(event.flash_ns) - Double(event.click_ns)) / 1e6,
                         videoLate: late(event.flash_sent_ns, event.flash_ns), audioLate: late(event.click_sent_ns, event.click_ns))
        }
    }

    /// Prints the offsets as `figure:` lines and returns their mean (ms).
    @discardableResult
    static func report(_ name: String, _ found: [Found], of events: Int) -> Double {
        let offsets = found.map(\.offsetMilliseconds)
        let mean = offsets.isEmpty ? .nan : offsets.reduce(0, +) / Double(offsets.count)
        let spread = (offsets.max() ?? .nan) - (offsets.min() ?? .nan)
        print(String(format: "figure: A/V offset %@: mean %+.1f ms, spread %.1f ms over %d of %d flashes (video − audio: %@ ms; the webcam's own lateness, frame + click: %@ ms)",
                     name, mean, spread, found.count, events, offsets.map { String(format: "%+.1f", $0) }.joined(separator: " "),
                     found.map { String(format: "%.1f", $0.emulatorLateness) }.joined(separator: " ")))
        return mean
    }
}

/// A capture file (FFmpeg's, GStreamer's, `mediadevices capture --audio`'s): its flash frames and
/// clicks with the timestamps the file gives them, read with ffprobe (each packet's pts) and
/// ffmpeg (the video packets' bytes as they are, `-c copy`: raw YUYV frames; the samples as
/// S16LE, which is the S16LE peers' bytes as they are and our 32-bit floats converted exactly:
/// silence stays zeros, a click's samples stay non-zero).
struct AVFlashFile {
    /// Flash frame counter → its packet's pts (s).
    let frameTimes: [UInt32: Double]
    /// Click number → the pts of its first sample (its packet's pts + its place in the packet).
    let clickTimes: [UInt32: Double]
    let videoPackets: Int
    let audioSamples: Int
    /// The counters of every frame in the file (uvc_camera.c stamps each frame with one).
    let frameCounters: Set<UInt32>

    init(path: String, file: StaticString = #filePath, line: UInt = #line) throws {
        // The four tool runs at once: each costs seconds to start under emulation.
        let raw = (video: "\(path).v.raw", audio: "\(path).a.raw")
        defer { for file in [raw.video, raw.audio] { try? FileManager.default.removeItem(atPath: file) } }
        let results = Rig.shells([Self.probe(path, stream: "v:0"), Self.probe(path, stream: "a:0"),
                                  "ffmpeg -v error -y -i '\(path)' -map 0:v:0 -c copy -f rawvideo '\(raw.video)'",
                                  "ffmpeg -v error -y -i '\(path)' -map 0:a:0 -c:a pcm_s16le -f s16le '\(raw.audio)'"])
        for result in results where result.status != 0 {
            XCTFail("reading \(path): \(result.errors)", file: file, line: line)
            throw RigError.commandFailed("ffprobe/ffmpeg \(path)")
        }
        let video = Self.packets(results[0].output)
        let audio = Self.packets(results[1].output)
        let frames = try Data(contentsOf: URL(fileURLWithPath: raw.video))
        let samples = try Data(contentsOf: URL(fileURLWithPath: raw.audio))
        XCTAssertEqual(frames.count, video.reduce(0) { $0 + $1.size }, "the video packets' bytes", file: file, line: line)
        // Bytes a sample in the file's packets: 2 (S16LE) or 4 (our 32-bit floats).
        let packetBytes = audio.reduce(0) { $0 + $1.size }
        let sampleBytes = samples.isEmpty ? 2 : packetBytes / (samples.count / 2)
        XCTAssertTrue([2, 4].contains(sampleBytes) && packetBytes == samples.count / 2 * sampleBytes,
                      "the audio packets' bytes (\(packetBytes)) are the samples' (\(samples.count / 2)) at 2 or 4 bytes each", file: file, line: line)
        var frameTimes: [UInt32: Double] = [:]
        var counters: Set<UInt32> = []
        frames.withUnsafeBytes { raw in
            var offset = 0
            for packet in video {
                defer { offset += packet.size }
                guard packet.size == AVFlashCapture.frameBytes, offset + packet.size <= raw.count else { continue }
                let frame = UnsafeRawBufferPointer(rebasing: raw[offset..<offset + packet.size])
                guard let counter = USBCamera.counter(yuyv: frame, bytesPerRow: AVFlashCapture.size.width * 2, size: AVFlashCapture.size) else { continue }
                counters.insert(UInt32(counter))
                guard AVFlashCapture.isFlash(yuyv: frame, bytesPerRow: AVFlashCapture.size.width * 2) else { continue }
                frameTimes[UInt32(counter)] = packet.time
            }
        }
        var clickTimes: [UInt32: Double] = [:]
        let clicks = samples.withUnsafeBytes { AVFlashCapture.clicks(in: $0.bindMemory(to: Int16.self)) }
        for (number, index) in clicks {
            var start = 0
            for packet in audio {
                let count = packet.size / sampleBytes
                if index < start + count {
                    clickTimes[number] = packet.time + Double(index - start) / Double(AVFlashCapture.rate)
                    break
                }
                start += count
            }
        }
        self.frameTimes = frameTimes
        self.clickTimes = clickTimes
        videoPackets = video.count
        audioSamples = samples.count / 2
        frameCounters = counters
    }

    /// The ffprobe command that lists a stream's packets: pts (s) and size (bytes), one a line.
    private static func probe(_ path: String, stream: String) -> String {
        "ffprobe -v error -select_streams \(stream) -show_entries packet=pts_time,size -of csv=p=0 '\(path)'"
    }

    /// The packets in file order, from `probe`'s output.
    private static func packets(_ csv: String) -> [(time: Double, size: Int)] {
        csv.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: ",")
            guard fields.count >= 2, let time = Double(fields[0]), let size = Int(fields[1]) else { return nil }
            return (time, size)
        }
    }
}

/// A command run in the background (a peer's capture), ended with SIGINT (FFmpeg and
/// `gst-launch-1.0 -e` finish their file on it); its output goes to `log`.
final class BackgroundCommand {
    let log: String
    private let process = Process()

    init(_ command: String, log: String) throws {
        self.log = log
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", "exec \(command) </dev/null >'\(log)' 2>&1"]
        try process.run()
    }

    var isRunning: Bool { process.isRunning }

    /// Sends it `signal`.
    func send(_ signal: Int32) { kill(process.processIdentifier, signal) }

    /// Sends SIGINT and waits (up to `timeout` s, then SIGKILL); its exit status.
    @discardableResult
    func interrupt(timeout: Double = 30) -> Int32 {
        if process.isRunning { kill(process.processIdentifier, SIGINT) }
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(50_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// The tail of its output.
    var output: String { (try? String(contentsOfFile: log, encoding: .utf8)).map { String($0.suffix(2000)) } ?? "" }
}
