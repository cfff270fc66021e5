import Foundation
import MediaDevices
import XCTest

/// `capture`'s output files, named as FFmpeg names them: `.y4m` is always YUV4MPEG2 (4:2:0, 4:2:2
/// or 4:4:4 as the source has it, RGB as 4:4:4, `Cmono` for grey), `-` is Y4M on standard output for a pipe, `.mjpeg` keeps the
/// camera's JPEGs as they came, a raw extension writes raw frames, and any other name is an
/// error before the device is opened. Each file is read back by FFmpeg.
final class CaptureOutputTests: XCTestCase {
    override func setUpWithError() throws { try Rig.require() }

    /// ffprobe's `width,height,pix_fmt,nb_read_frames` for a file.
    private func probe(_ path: String, format: String? = nil) throws -> String {
        try Rig.run("ffprobe -v error \(format.map { "-f \($0)" } ?? "") -count_frames -select_streams v:0 -show_entries stream=width,height,pix_fmt,nb_read_frames -of csv=p=0 \(path)")
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func testY4MIsAlwaysPlayable() throws {
        try Rig.loadVivid("n_devs=1")
        let yuyv = "\(Rig.scratch)/yuyv.y4m", grey = "\(Rig.scratch)/grey.y4m"
        try Rig.run("\(Rig.tool) capture 0 --format YUYV --size 640x480 --fps 25 --frames 6 --output \(yuyv)")
        XCTAssertEqual(try probe(yuyv), "640,480,yuv422p,6", "YUYV as 4:2:2")
        try Rig.run("\(Rig.tool) capture 0 --format GREY --size 640x480 --fps 25 --frames 4 --output \(grey)")
        XCTAssertEqual(try probe(grey), "640,480,gray,4", "grey as Cmono")
        let header = try String(decoding: Data(contentsOf: URL(fileURLWithPath: yuyv)).prefix(80), as: UTF8.self)
        XCTAssertTrue(header.hasPrefix("YUV4MPEG2 W640 H480 F25:1 Ip A1:1 C422 XCOLORRANGE=LIMITED\n"), header)
    }

    /// Each chroma layout the source has, in the file: 4:2:0 stays 4:2:0, 4:2:2 (packed, planar
    /// or semi-planar) is 4:2:2, 4:4:4 and RGB are 4:4:4, 16-bit grey is mono. FFmpeg decodes
    /// each file to the vivid bars (the middle of each, within 6 of their colour; grey formats
    /// are not checked for colour).
    ///
    /// `capture` writes the files of the formats that take each of its paths to a Y4M file: NV12
    /// (through I420) and RGB3 (through ARGB; YUYV as it comes is `testY4MIsAlwaysPlayable`'s).
    /// The other formats are written in this process the way `capture` writes them
    /// (`FrameFileWriter`, after `y4mIntermediate(for:)`), since each start of the tool costs
    /// seconds in the rig; what is checked is the library's chroma handling, and FFmpeg reads
    /// every file back either way, all in one FFmpeg.
    func testY4MKeepsTheSourcesChromaAndTheBars() throws {
        let node = try Rig.loadVivid("n_devs=1")[0]
        try Rig.colourBars(node)
        let cases: [(format: String, pixFmt: String)] = [
            ("YU12", "yuv420p"), ("NV12", "yuv420p"), ("UYVY", "yuv422p"), ("NV16", "yuv422p"), ("422P", "yuv422p"),
            ("NV24", "yuv444p"), ("AYUV", "yuv444p"), ("Y444", "yuv444p"), ("RGB3", "yuv444p"), ("BA81", "yuv444p"),
            ("HSV3", "yuv444p"), ("Y16", "gray"),
        ]
        let throughTheTool: Set<String> = ["NV12", "RGB3"]
        let file = { (format: String) in "\(Rig.scratch)/\(format.trimmingCharacters(in: .whitespaces)).y4m" }
        for (format, _) in cases {
            if throughTheTool.contains(format) {
                try Rig.run("\(Rig.tool) capture 0 --format '\(format)' --size 320x180 --frames 3 --output \(file(format))")
            } else {
                try Self.writeY4M(node: node, fourCC: format, frames: 3, to: file(format))
            }
        }
        // One FFmpeg reads every file (each start of FFmpeg costs seconds in the rig): it names
        // each input's pixel format and size as ffprobe does, and decodes each whole file to RGB,
        // whose length counts the frames it read.
        let inputs = cases.map { "-i \(file($0.format))" }.joined(separator: " ")
        let outputs = cases.indices.map { "-map \($0):v -f rawvideo -pix_fmt rgb24 \(file(cases[$0].format)).rgb" }.joined(separator: " ")
        let described = try Self.inputStreams(Rig.run("ffmpeg -hide_banner -nostats -loglevel info -y \(inputs) \(outputs) 2>&1"))
        let frameBytes = 320 * 180 * 3
        for (index, (format, pixFmt)) in cases.enumerated() {
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: file(format) + ".rgb")))
            XCTAssertEqual(described[index].map { "\($0),\(bytes.count / frameBytes)" }, "320,180,\(pixFmt),3", format)
            XCTAssertEqual(bytes.count % frameBytes, 0, "\(format): whole frames")
            guard pixFmt != "gray", bytes.count >= frameBytes else { continue }
            // Packed 4-bit YUV keeps 4 bits of each sample (one step is 17 levels), HSV one hue step.
            let tolerance = format == "Y444" ? 20 : format == "HSV3" ? 9 : 6
            var worst = 0
            for (index, expected) in ConversionTests.bars.enumerated() {
                let i = (90 * 320 + 40 * index + 20) * 3
                worst = max(worst, abs(Int(bytes[i]) - expected.r), abs(Int(bytes[i + 1]) - expected.g), abs(Int(bytes[i + 2]) - expected.b))
            }
            XCTAssertLessThanOrEqual(worst, tolerance, "\(format) through Y4M (\(pixFmt)): bars off by \(worst)")
        }
        // The default test pattern (YUYV) gives a file FFmpeg reads.
        let pattern = "\(Rig.scratch)/pattern.y4m"
        try Rig.run("\(Rig.tool) capture testpattern --frames 2 --output \(pattern)")
        XCTAssertTrue(try probe(pattern).hasSuffix(",yuv422p,2"), "the test pattern as 4:2:2")
    }

    /// Each input's video stream as FFmpeg describes it before it starts ("Stream #3:0: Video:
    /// rawvideo (Y42B / 0x42323459), yuv422p(tv, progressive), 320x180, ..."): "320,180,yuv422p"
    /// (ffprobe's width, height and pix_fmt), by input number.
    private static func inputStreams(_ log: String) -> [Int: String] {
        var streams: [Int: String] = [:]
        for line in log.split(separator: "\n") {
            if line.hasPrefix("Output #") { break }
            guard let match = line.firstMatch(of: /Stream #(\d+):0[^:]*: Video: [^,]*\), ([a-z0-9_]+)(?:\([^)]*\))?, (\d+)x(\d+)/),
                  let input = Int(match.1) else { continue }
            streams[input] = "\(match.3),\(match.4),\(match.2)"
        }
        return streams
    }

    /// Captures `frames` frames of `fourCC` at 320x180 from `node` into a Y4M file at `path` as
    /// `capture` does: converted first to `FrameFileWriter.y4mIntermediate(for:)` where the file
    /// cannot take the format as it comes.
    private static func writeY4M(node: String, fourCC: String, frames: Int, to path: String) throws {
        let pixelFormat = try XCTUnwrap(PixelFormat(named: fourCC), fourCC)
        let source = CameraSource(device: try CaptureDevice(path: node),
                                  request: FormatRequest(pixelFormat: pixelFormat, size: Size(width: 320, height: 180)))
        defer { source.release() }
        let sink = Y4MSink(path: path, limit: frames)
        source.consumer = try FrameFileWriter.y4mIntermediate(for: pixelFormat).map { try ConvertingConsumer(output: OutputFormat($0), consumer: sink) } ?? sink
        try source.start()
        let finished = sink.done.wait(timeout: .now() + 20) == .success
        source.stop()
        XCTAssertTrue(finished, "\(fourCC): \(frames) frames written")
        XCTAssertEqual(source.negotiation?.format.pixelFormat, pixelFormat, fourCC)
        try sink.close()
    }

    /// Writes the first `limit` frames it is given to a Y4M file, opened at the first frame (in
    /// that frame's format, as `capture` opens its file in the format the frames have).
    private final class Y4MSink: VideoFrameConsumer, @unchecked Sendable {
        private let path: String, limit: Int
        private let lock = NSLock()
        private var writer: FrameFileWriter?
        private var failure: Error?
        let done = DispatchSemaphore(value: 0)

        init(path: String, limit: Int) { (self.path, self.limit) = (path, limit) }

        func consumeFrame(_ frame: VideoFrame) {
            lock.withLock {
                guard failure == nil, (writer?.framesWritten ?? 0) < limit else { return }
                do {
                    if writer == nil { writer = try FrameFileWriter(path: path, format: frame.format, frameRate: FrameRate(25), container: .y4m) }
                    try writer?.write(frame)
                    if writer?.framesWritten == limit { done.signal() }
                } catch {
                    failure = error
                    done.signal()
                }
            }
        }

        func close() throws {
            try lock.withLock {
                if let failure { throw failure }
                try writer?.close()
            }
        }
    }

    func testStandardOutputCarriesOnlyTheStream() throws {
        try Rig.loadVivid("n_devs=1")
        let decoded = "\(Rig.scratch)/piped.txt", errors = "\(Rig.scratch)/piped.err"
        // What the tool says goes to standard error; FFmpeg reads the stream from the pipe.
        try Rig.run("\(Rig.tool) capture 0 --format YUYV --size 640x480 --fps 25 --frames 8 --output - 2>\(errors) | ffmpeg -v error -f yuv4mpegpipe -i - -f framemd5 - > \(decoded)")
        let frames = try String(contentsOfFile: decoded, encoding: .utf8).split(separator: "\n").filter { !$0.hasPrefix("#") }
        XCTAssertEqual(frames.count, 8, "ffmpeg decoded every frame from the pipe")
        XCTAssertTrue(try String(contentsOfFile: errors, encoding: .utf8).contains("wrote 8 frames"), "the report went to standard error")
        let raw = try Rig.run("\(Rig.tool) capture 0 --format YUYV --size 640x480 --fps 25 --frames 2 --output - 2>/dev/null | head -c 9")
        XCTAssertEqual(raw, "YUV4MPEG2", "standard output starts with the stream")
    }

    func testMJPEGFileKeepsTheCamerasJPEGs() throws {
        let camera = try Rig.usbCamera()
        defer { camera.close() }
        let device = try camera.device()
        let file = "\(Rig.scratch)/camera.mjpeg"
        try Rig.run("\(Rig.tool) capture \(device.uniqueID) --format MJPG --size 1280x720 --frames 10 --output \(file)")
        XCTAssertEqual(try probe(file, format: "mjpeg"), "1280,720,yuvj422p,10")
        // The file is the camera's own JPEGs, one after another, byte for byte.
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: file)))
        var offset = 0, frames = 0
        while offset < bytes.count {
            let counter = try XCTUnwrap(bytes[offset...].withUnsafeBytes { USBCamera.counter(jpeg: $0) }, "a frame counter at \(offset)")
            let jpeg = camera.jpeg(Size(width: 1280, height: 720), counter: UInt32(counter))
            XCTAssertTrue(bytes[offset..<min(offset + jpeg.count, bytes.count)].withUnsafeBytes { sameBytes($0, jpeg) }, "frame \(frames) as the camera sent it")
            offset += jpeg.count
            frames += 1
        }
        XCTAssertEqual(frames, 10)
        let yuyv = Rig.shell("\(Rig.tool) capture \(device.uniqueID) --format YUYV --size 320x240 --frames 1 --output \(Rig.scratch)/no.mjpeg --json")
        XCTAssertNotEqual(yuyv.status, 0)
        XCTAssertTrue(yuyv.output.contains("\"code\" : \"unsupportedFormat\"") && yuyv.output.contains("MJPG"), yuyv.output)
    }

    func testANameTheToolCannotHonourFailsBeforeTheDeviceIsOpened() throws {
        // No such device: the file name is checked first, so the error is about the name: a
        // usage error (exit 64, EX_USAGE, said on standard error as every usage error is, even
        // with --json), not the device's.
        let result = Rig.shell("\(Rig.tool) capture /dev/video99 --frames 1 --output \(Rig.scratch)/clip.mp4 --json")
        XCTAssertEqual(result.status, 64, result.output + result.errors)
        XCTAssertTrue(result.errors.contains("--output \(Rig.scratch)/clip.mp4"), result.errors)
        XCTAssertTrue(result.errors.contains(".y4m") && result.errors.contains(".mjpeg"), "says what names mean: \(result.errors)")
        XCTAssertFalse(result.errors.contains("video99"), "the device was not looked at: \(result.errors)")
        XCTAssertFalse(FileManager.default.fileExists(atPath: "\(Rig.scratch)/clip.mp4"), "nothing written")
    }
}
