import Foundation
import XCTest

/// The CLI's own hints beside the library's remedy: a missing camera node says which command lists
/// the devices, and the JSON keeps the library's remedy apart.
final class CLIErrorHintTests: XCTestCase {
    func testAMissingCameraNamesTheListCommandAndKeepsTheLibrarysRemedy() throws {
        let text = try ToolProcess.run(["formats", "/dev/video-none-here"])
        XCTAssertEqual(text.status, 1, text.errors)
        XCTAssertTrue(text.errors.contains("(from the command line: `mediadevices list` shows the devices there are)"), text.errors)
        XCTAssertTrue(text.errors.contains("CaptureDevice.discover() lists the cameras there are"), text.errors)

        let json = try ToolProcess.run(["formats", "/dev/video-none-here", "--json"])
        XCTAssertEqual(json.status, 1, json.errors)
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any], json.output)
        let error = try XCTUnwrap(object["error"] as? [String: Any], json.output)
        XCTAssertEqual(error["code"] as? String, "notFound")
        XCTAssertEqual(error["remedy"] as? String, "CaptureDevice.discover() lists the cameras there are")
        XCTAssertTrue((error["message"] as? String ?? "").hasSuffix("(from the command line: `mediadevices list` shows the devices there are)"), json.output)
    }
}
