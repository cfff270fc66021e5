import Foundation
import XCTest

/// `scripts/xctest-counts.sh`, which `scripts/test.sh` closes with ("tests: N passed, N failed"): it
/// counts failed tests, not XCTest's failed assertions, and nothing of a class that did not finish.
final class TestCountsScriptTests: XCTestCase {
    /// The checkout's `scripts/xctest-counts.sh` (this file is in Tests/MediaDevicesTests/).
    private static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("scripts/xctest-counts.sh").path

    private func counts(_ log: String) throws -> String {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("xctest-counts-\(getpid()).txt")
        try log.write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let process = Process(), output = Pipe()
        process.executableURL = URL(fileURLWithPath: Self.script)
        process.arguments = [file.path]
        process.standardOutput = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0)
        return text.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func testATestWithThreeFailedAssertionsIsOneFailedTest() throws {
        let log = """
            Test Suite 'Selected tests' started at 2026-11-26 01:00:00.000
            Test Suite 'AClass' started at 2026-11-26 01:00:00.000
            Test Case 'AClass.testOne' started at 2026-11-26 01:00:00.000
            /x.swift:3: error: AClass.testOne : XCTAssertEqual failed: ("1") is not equal to ("2") - 
            /x.swift:4: error: AClass.testOne : XCTAssertEqual failed: ("1") is not equal to ("2") - 
            /x.swift:5: error: AClass.testOne : XCTAssertTrue failed - 
            Test Case 'AClass.testOne' failed (0.001 seconds)
            Test Case 'AClass.testTwo' started at 2026-11-26 01:00:00.000
            Test Case 'AClass.testTwo' passed (0.001 seconds)
            Test Suite 'AClass' failed at 2026-11-26 01:00:00.002
            \t Executed 2 tests, with 3 failures (0 unexpected) in 0.002 (0.002) seconds
            Test Suite 'BClass' started at 2026-11-26 01:00:00.002
            Test Case 'BClass.testThree' started at 2026-11-26 01:00:00.002
            Test Case 'BClass.testThree' passed (0.001 seconds)
            Test Suite 'BClass' passed at 2026-11-26 01:00:00.003
            \t Executed 1 test, with 0 failures (0 unexpected) in 0.001 (0.001) seconds
            Test Suite 'Selected tests' failed at 2026-11-26 01:00:00.003
            \t Executed 3 tests, with 3 failures (0 unexpected) in 0.003 (0.003) seconds

            """
        XCTAssertEqual(try counts(log), "3 1", "3 tests run, 1 failed (with 3 failed assertions)")
    }

    func testAClassThatDidNotFinishCountsNothing() throws {
        let log = """
            Test Suite 'AClass' started at 2026-11-26 01:00:00.000
            Test Case 'AClass.testOne' started at 2026-11-26 01:00:00.000
            Test Case 'AClass.testOne' passed (0.001 seconds)
            Test Suite 'AClass' passed at 2026-11-26 01:00:00.002
            \t Executed 1 test, with 0 failures (0 unexpected) in 0.002 (0.002) seconds
            Test Suite 'BClass' started at 2026-11-26 01:00:00.002
            Test Case 'BClass.testTwo' started at 2026-11-26 01:00:00.002
            /x.swift:3: error: BClass.testTwo : XCTAssertTrue failed - 
            Test Case 'BClass.testTwo' failed (0.001 seconds)
            Test Case 'BClass.testThree' started at 2026-11-26 01:00:00.003
            rig: the guest crashed

            """
        XCTAssertEqual(try counts(log), "1 0", "BClass did not finish: scripts/test.sh runs it again")
    }
}
