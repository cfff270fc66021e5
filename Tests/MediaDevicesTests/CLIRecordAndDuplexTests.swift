import Foundation
import XCTest

/// `record` without `--seconds` runs until Ctrl-C and leaves a complete WAV file; `duplex
/// --json` prints the shape docs/cli.md gives. Both run against ALSA's `null` PCM (alsa-lib's
/// configuration has it on every host; it reads silence as fast as it is asked, unpaced), so no
/// sound card is needed.
final class CLIRecordAndDuplexTests: XCTestCase {
    private var folder = ""

    override func setUpWithError() throws {
        folder = try ToolRun.temporaryDirectory()
        let probe = try ToolProcess.run(["record", "alsa:null", "--seconds", "0.1", "--rate", "8000", "--channels", "1", "--output", "probe.wav"], in: folder)
        // alsa-lib defines the null PCM wherever libasound is installed (the build needs it): no
        // sound card is needed, so a failure here is ours to see, not a reason to skip.
        guard probe.status == 0 else {
            XCTFail("ALSA's null PCM did not record: \(probe.errors)")
            throw CancellationError()
        }
    }

    override func tearDown() {
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// The RIFF and data sizes of a WAV file's header, and the file's size.
    private func wavSizes(_ path: String) throws -> (riff: Int, data: Int, file: Int) {
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        XCTAssertGreaterThanOrEqual(bytes.count, 44)
        func u32(_ offset: Int) -> Int { Int(bytes[offset]) | Int(bytes[offset + 1]) << 8 | Int(bytes[offset + 2]) << 16 | Int(bytes[offset + 3]) << 24 }
        XCTAssertEqual(String(decoding: bytes[0..<4], as: UTF8.self), "RIFF")
        XCTAssertEqual(String(decoding: bytes[36..<40], as: UTF8.self), "data")
        return (u32(4), u32(40), bytes.count)
    }

    /// SIGINT ends a recording without `--seconds`: exit status 0 (a signal is how it ends, as
    /// with arecord), the report printed, and the WAV header's sizes match the samples written.
    func testRecordWithoutSecondsStopsAtCtrlCWithACompleteFile() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: ToolProcess.toolPath)
        process.arguments = ["record", "alsa:null", "--rate", "8000", "--channels", "1", "--output", "open.wav"]
        process.currentDirectoryURL = URL(fileURLWithPath: folder)
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        // The null PCM is unpaced: signal as soon as samples are in the temporary file.
        let deadline = Date().addingTimeInterval(60)
        func recording() -> Bool {
            ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).contains { name in
                name.hasPrefix(".open.wav.") && (((try? FileManager.default.attributesOfItem(atPath: folder + "/" + name))?[.size] as? Int) ?? 0) > 44
            }
        }
        while !recording(), Date() < deadline, process.isRunning { usleep(1_000) }
        XCTAssertTrue(recording(), "samples were being written before the signal")
        kill(process.processIdentifier, SIGINT)
        let printed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, printed)
        let sizes = try wavSizes(folder + "/open.wav")
        XCTAssertGreaterThan(sizes.data, 0)
        XCTAssertEqual(sizes.data + 44 + sizes.data % 2, sizes.file, "the data size is the samples written")
        XCTAssertEqual(sizes.riff, sizes.file - 8)
        XCTAssertTrue(printed.contains("recorded \(sizes.data / 2) frames"), printed)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder).sorted(), ["open.wav", "probe.wav"], "no temporary file left")
    }

    /// `duplex --json`: the capture and render runs (as `record --json` and `play --json`), the
    /// render delay and the voice processing.
    func testDuplexJSONShape() throws {
        let run = try ToolProcess.run(["duplex", "--play", "probe.wav", "--output", "near.wav", "--render", "alsa:null", "--capture", "alsa:null",
                                       "--rate", "16000", "--json"], in: folder)
        XCTAssertEqual(run.status, 0, run.errors)
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [String: Any], run.output)
        XCTAssertEqual(Set(object.keys), ["capture", "render", "renderDelay", "voiceProcessing"])
        let capture = try XCTUnwrap(object["capture"] as? [String: Any])
        let render = try XCTUnwrap(object["render"] as? [String: Any])
        XCTAssertEqual(capture["direction"] as? String, "input")
        XCTAssertEqual(capture["file"] as? String, "near.wav")
        XCTAssertEqual((capture["format"] as? [String: Any])?["sampleRate"] as? Int, 16000)
        XCTAssertEqual(render["direction"] as? String, "output")
        XCTAssertEqual(render["file"] as? String, "probe.wav")
        XCTAssertEqual(render["frames"] as? Int, 800, "the whole file went to the output")
        for side in [capture, render] {
            XCTAssertNotNil(side["statistics"] as? [String: Any])
            XCTAssertNotNil(side["periodFrames"] as? Int)
        }
        let voice = try XCTUnwrap(object["voiceProcessing"] as? [String: Any])
        XCTAssertEqual(voice["processing"] as? [String], ["echo", "noise", "gain"])
        XCTAssertEqual(voice["library"] as? String, "webrtc")
        XCTAssertNotNil(voice["latency"] as? Double)

        let off = try ToolProcess.run(["duplex", "--play", "probe.wav", "--output", "near.wav", "--render", "alsa:null", "--capture", "alsa:null",
                                       "--voice-processing", "none", "--json"], in: folder)
        XCTAssertEqual(off.status, 0, off.errors)
        XCTAssertTrue(off.output.contains("\"voiceProcessing\" : null") || !off.output.contains("voiceProcessing"), off.output)
    }

    /// A failing `duplex --json` prints the error object and exits 1.
    func testDuplexJSONError() throws {
        let run = try ToolProcess.run(["duplex", "--play", "missing.wav", "--output", "near.wav", "--json"], in: folder)
        XCTAssertEqual(run.status, 1)
        let error = try XCTUnwrap((try JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [String: Any])?["error"] as? [String: Any], run.output)
        XCTAssertEqual(error["code"] as? String, "notFound")
        XCTAssertEqual(error["operation"] as? String, "read missing.wav")
    }
}
