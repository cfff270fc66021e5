import Foundation
import XCTest

/// `mediadevices --version` prints the newest released version of CHANGELOG.md (its newest
/// `## X.Y.Z` heading; an "Unreleased" section has no number yet), so the two cannot drift.
final class ToolVersionTests: XCTestCase {
    /// The newest `## X.Y.Z` heading of the checkout's CHANGELOG.md.
    private func newestChangelogVersion() throws -> String {
        let checkout = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let changelog = try String(contentsOf: checkout.appendingPathComponent("CHANGELOG.md"), encoding: .utf8)
        for line in changelog.split(separator: "\n") where line.hasPrefix("## ") {
            let word = line.dropFirst(3).split(separator: " ").first.map(String.init) ?? ""
            let parts = word.split(separator: ".")
            if parts.count == 3, parts.allSatisfy({ Int($0) != nil }) { return word }
        }
        throw ToolRunError("CHANGELOG.md has no `## X.Y.Z` heading")
    }

    func testVersionIsTheNewestInTheChangelog() throws {
        let run = try ToolProcess.run(["--version"])
        XCTAssertEqual(run.status, 0, run.errors)
        XCTAssertEqual(run.output, try newestChangelogVersion() + "\n")
    }
}
