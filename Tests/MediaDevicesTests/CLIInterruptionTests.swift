import Foundation
import XCTest

/// Ctrl-C (SIGINT) or SIGTERM ends `mediadevices capture` early and cleanly: the file is
/// complete with the frames written so far (no temporary file left beside it), the report is
/// printed, and the exit status is 128 + the signal's number.
final class CLIInterruptionTests: XCTestCase {
    private func interruptedCapture(with signalNumber: Int32) throws -> (status: Int32, errors: String, file: Data, folder: [String]) {
        let tool = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("mediadevices").path
        let folder = try ToolRun.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/interrupted.y4m"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = ["capture", "testpattern", "--size", "160x120", "--fps", "30", "--frames", "100000", "--output", path]
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        // Wait until frames are being written (the temporary file beside the destination grows).
        let deadline = Date().addingTimeInterval(60)
        func written() -> Int {
            ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).reduce(0) { total, name in
                total + (((try? FileManager.default.attributesOfItem(atPath: folder + "/" + name))?[.size] as? Int) ?? 0)
            }
        }
        while written() < 100_000, Date() < deadline { usleep(20_000) }
        XCTAssertGreaterThanOrEqual(written(), 100_000, "frames were being written before the signal")
        kill(process.processIdentifier, signalNumber)
        process.waitUntilExit()
        let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let file = (try? Data(contentsOf: URL(fileURLWithPath: path))) ?? Data()
        return (process.terminationStatus, text, file, (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [])
    }

    private func assertCompleteFile(_ run: (status: Int32, errors: String, file: Data, folder: [String]), signalNumber: Int32, name: String) throws {
        XCTAssertEqual(run.status, 128 + signalNumber, "exit status after \(name): \(run.errors)")
        XCTAssertEqual(run.folder, ["interrupted.y4m"], "the file, and no temporary file beside it")
        XCTAssertTrue(run.file.starts(with: Data("YUV4MPEG2 ".utf8)), "a Y4M file")
        // Every frame is whole: the header line, then per frame "FRAME\n" and 160x120 YUYV as 4:2:2 planes.
        let header = try XCTUnwrap(run.file.firstIndex(of: UInt8(ascii: "\n")))
        let frameBytes = 6 + 160 * 120 * 2
        let frames = (run.file.count - header - 1) / frameBytes
        XCTAssertGreaterThan(frames, 0)
        XCTAssertEqual((run.file.count - header - 1) % frameBytes, 0, "whole frames only")
        XCTAssertTrue(run.errors.contains("stopped after \(frames) of 100000 frames"), run.errors)
        XCTAssertTrue(run.errors.contains("interrupted by \(name)"), run.errors)
    }

    func testSIGINTStopsTheCaptureKeepingEveryFrameWritten() throws {
        try assertCompleteFile(try interruptedCapture(with: SIGINT), signalNumber: SIGINT, name: "SIGINT")
    }

    func testSIGTERMStopsTheCaptureKeepingEveryFrameWritten() throws {
        try assertCompleteFile(try interruptedCapture(with: SIGTERM), signalNumber: SIGTERM, name: "SIGTERM")
    }
}
