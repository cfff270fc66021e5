import Foundation
import XCTest
@testable import MediaDevicesCore
import Glibc

/// What an error keeps besides its sentence: the remedy on its own, in the library's terms, and the
/// foreign error that caused it.
final class MediaDevicesErrorCauseTests: XCTestCase {
    func testTheRemedyIsItsOwnFieldAndEndsTheDescription() throws {
        let error = MediaDevicesError.fromErrno(ENOENT, device: "/dev/video42", operation: "open")
        XCTAssertEqual(error.code, .notFound)
        let remedy = try XCTUnwrap(error.remedy)
        XCTAssertTrue(remedy.contains("CaptureDevice.discover()"), remedy)
        XCTAssertFalse(error.detail.contains(remedy), "the detail says what happened, not what to do: \(error.detail)")
        XCTAssertTrue(error.description.hasSuffix(remedy), error.description)
        XCTAssertEqual(error.description, "/dev/video42: open failed: No such file or directory (ENOENT). No such device node. \(remedy)")
    }

    func testAnErrorWithoutARemedyReadsAsBefore() {
        let error = MediaDevicesError(.timeout, device: "x", operation: "wait", detail: "Nothing came")
        XCTAssertNil(error.remedy)
        XCTAssertEqual(error.description, "x: wait failed. Nothing came")
    }

    func testConvertingKeepsTheUnderlyingErrorWhole() throws {
        let decoding = DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "not JSON"))
        let error = MediaDevicesError.converting(decoding, device: nil, operation: "read profile")
        XCTAssertEqual(error.code, .io)
        let kept = try XCTUnwrap(error.underlying as? DecodingError, "the cause, as its own type: \(String(describing: error.underlying))")
        guard case .dataCorrupted(let context) = kept else { return XCTFail("\(kept)") }
        XCTAssertEqual(context.debugDescription, "not JSON")
        // A MediaDevicesError passes through as it is.
        let own = MediaDevicesError(.busy, device: "d", operation: "o", detail: "", remedy: "wait")
        XCTAssertEqual(MediaDevicesError.converting(own, device: nil, operation: "other"), own)
        XCTAssertNotEqual(error, MediaDevicesError.converting(CocoaError(.fileNoSuchFile), device: nil, operation: "read profile"))
    }

    /// The library's messages name library calls: a command of the CLI means nothing to an
    /// application's user. The CLI adds its own hints (`commandHint(for:)`).
    func testLibraryMessagesNameNoCommandOfTheTool() throws {
        let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sources")
        var found: [String] = []
        for module in ["MediaDevicesCore", "MediaDevicesAudio", "MediaDevicesVideo", "MediaDevices"] {
            let folder = sources.appendingPathComponent(module)
            let files = try XCTUnwrap(FileManager.default.enumerator(atPath: folder.path)).compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") }
            XCTAssertFalse(files.isEmpty, "no sources in \(folder.path)")
            for file in files {
                let text = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
                for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
                where !line.trimmingCharacters(in: .whitespaces).hasPrefix("//") && line.contains("`mediadevices ") {
                    found.append("\(module)/\(file):\(index + 1)")
                }
            }
        }
        XCTAssertEqual(found, [], "library messages that send the user to the CLI")
    }
}
