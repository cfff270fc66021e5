import XCTest
import Foundation
@testable import MediaDevicesAudio
@testable import MediaDevicesVideo
@testable import MediaDevicesCommandLine
import MediaDevicesCore

/// The audio-and-video file of `capture --audio`: a short synthetic file written by libavformat
/// and read back by ffprobe (the reference), with both streams, their codecs, durations and
/// the capture's timestamps (a dropped frame a gap, not a shift).
final class AVFileMuxerTests: XCTestCase {
    private let start = MonotonicInstant(nanoseconds: 1_000_000_000_000)
    private let audioFormat = AudioFormat(sampleRate: 48000, channels: 2, sampleFormat: .floatLE)

    private func frame(_ format: VideoFormat, bytes: UnsafeRawBufferPointer, at milliseconds: Int64, sequence: UInt32) -> VideoFrame {
        VideoFrame(format: format, timestamp: start.advanced(by: .milliseconds(milliseconds)), sequence: sequence, orientation: .up,
                   captureDelay: .zero, planeCount: 1, bytesUsed: bytes.count,
                   plane0: FramePlane(bytes: bytes, bytesPerRow: format.width * 2))
    }

    private func chunk(at milliseconds: Int64, frames: Int, startFrame: Int) -> AudioChunk {
        let samples = (0..<(frames * 2)).map { Float($0 % 200) / 400 }
        return AudioChunk(format: audioFormat, samples: samples, startFrame: startFrame,
                          level: samples.withUnsafeBufferPointer { AudioLevel(samples: $0, channels: 2) },
                          timestamp: start.advanced(by: .milliseconds(milliseconds)))
    }

    private func ffprobe(_ arguments: [String]) throws -> String {
        let process = Process(), output = Pipe()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/ffprobe")
        process.arguments = ["-v", "error"] + arguments
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, "ffprobe \(arguments)")
        return String(decoding: data, as: UTF8.self)
    }

    private func writeFile(_ container: AVFileMuxer.Container, ext: String) throws -> String {
        let path = NSTemporaryDirectory() + "avfile-\(getpid())-\(ext).\(ext)"
        let format = VideoFormat(pixelFormat: .yuyv, width: 64, height: 48)
        let muxer = try AVFileMuxer(path: path, container: container, video: format, frameRate: FrameRate(25), audio: audioFormat, start: start)
        let pixels = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 48 * 2, alignment: 64)
        defer { pixels.deallocate() }
        pixels.initializeMemory(as: UInt8.self, repeating: 128)
        // Frames every 40 ms from 20 ms; the one at 140 ms was dropped.
        var sequence: UInt32 = 0
        for milliseconds in stride(from: Int64(20), through: 380, by: 40) where milliseconds != 140 {
            try muxer.write(frame(format, bytes: UnsafeRawBufferPointer(pixels), at: milliseconds, sequence: sequence))
            sequence += 1
        }
        // 120 chunks of 10 ms from 0 ms: 1.2 s of audio (the drift needs a second).
        for index in 0..<120 { try muxer.write(chunk(at: Int64(index) * 10, frames: 480, startFrame: index * 480)) }
        XCTAssertFalse(FileManager.default.fileExists(atPath: path), "the file appears when it is whole")
        try muxer.close()
        let figures = muxer.syncFigures
        XCTAssertEqual(figures.videoFrames, 9)
        XCTAssertEqual(figures.audioFrames, 120 * 480)
        XCTAssertEqual(figures.startOffsetMilliseconds ?? .nan, 20, accuracy: 1e-9, "first frame at 20 ms, first sample at 0")
        XCTAssertEqual(figures.driftMillisecondsPerMinute ?? .nan, 0, accuracy: 1e-6, "chunks stamped exactly at the sample rate")
        return path
    }

    func testMatroskaHoldsBothStreamsWithTheCaptureTimestamps() throws {
        try checkFile(writeFile(.matroska, ext: "mkv"))
    }

    func testNUTHoldsBothStreamsWithTheCaptureTimestamps() throws {
        try checkFile(writeFile(.nut, ext: "nut"))
    }

    private func checkFile(_ path: String) throws {
        defer { unlink(path) }
        let streams = try ffprobe(["-show_entries", "stream=codec_type,codec_name,pix_fmt,width,height,sample_rate,channels",
                                   "-of", "compact=p=0:nk=1", path])
        let lines = streams.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.count, 2, streams)
        XCTAssertTrue(lines.contains { $0.hasPrefix("rawvideo|video|64|48|yuyv422") }, streams)
        XCTAssertTrue(lines.contains { $0.hasPrefix("pcm_f32le|audio|48000|2") }, streams)
        func times(_ stream: String, _ entry: String) throws -> [Double] {
            try ffprobe(["-select_streams", stream, "-show_entries", "packet=\(entry)", "-of", "csv=p=0", path])
                .split(separator: "\n").compactMap { Double($0.trimmingCharacters(in: .whitespaces)) }
        }
        let video = try times("v", "pts_time")
        XCTAssertEqual(video.count, 9)
        let expected: [Double] = [0.02, 0.06, 0.10, 0.18, 0.22, 0.26, 0.30, 0.34, 0.38]
        for (got, wanted) in zip(video, expected) { XCTAssertEqual(got, wanted, accuracy: 0.0011, "video pts \(video)") }
        let audio = try times("a", "pts_time")
        XCTAssertEqual(audio.count, 120)
        XCTAssertEqual(audio.first ?? -1, 0, accuracy: 0.0011)
        XCTAssertEqual(audio.last ?? -1, 1.19, accuracy: 0.0011)
        let durations = try times("a", "duration_time")
        XCTAssertEqual(durations.reduce(0, +), 1.2, accuracy: 0.005, "1.2 s of audio")
        XCTAssertEqual(zip(audio, audio.dropFirst()).filter { $1 <= $0 }.count, 0, "audio pts increase")
    }
}
