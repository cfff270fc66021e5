import Foundation
import XCTest

/// docs/environment.md is the contract between the scripts and the tests: every `MEDIADEVICES_*`
/// variable the scripts, tests, emulated devices and tools use has its entry there, and every
/// entry names a variable something uses.
final class EnvironmentContractTests: XCTestCase {
    /// The checkout (this file is in Tests/MediaDevicesTests/).
    private static let checkout = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The `MEDIADEVICES_*` names in `text` (a trailing `*`, as in "MEDIADEVICES_*", is no name).
    static func names(in text: String) -> Set<String> {
        let pattern = try! NSRegularExpression(pattern: #"MEDIADEVICES_[A-Z0-9_]*[A-Z0-9]"#)
        return Set(pattern.matches(in: text, range: NSRange(text.startIndex..., in: text)).compactMap {
            Range($0.range, in: text).map { String(text[$0]) }
        })
    }

    /// Every file under the checkout's `folders` (recursively; build folders left out).
    static func used(in folders: [String]) -> Set<String> {
        var names: Set<String> = []
        for folder in folders {
            let root = checkout.appendingPathComponent(folder)
            guard let walker = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil) else { continue }
            for case let url as URL in walker {
                if url.lastPathComponent.hasPrefix(".build") { walker.skipDescendants(); continue }
                if url.lastPathComponent == "EnvironmentContractTests.swift" { continue }
                guard let text = try? String(contentsOf: url, encoding: .utf8) else { continue }
                names.formUnion(Self.names(in: text))
            }
        }
        return names
    }

    func testEveryVariableHasOneEntryAndEveryEntryIsUsed() throws {
        let contract = try String(contentsOf: Self.checkout.appendingPathComponent("docs/environment.md"), encoding: .utf8)
        let rows = contract.split(separator: "\n").filter { $0.hasPrefix("| `MEDIADEVICES_") }
        // The first cell of a row is its variable.
        let documented = rows.compactMap { row in row.split(separator: "|").first.flatMap { Self.names(in: String($0)).first } }
        let used = Self.used(in: ["scripts", "Tests", "Sources", ".ci"])
        XCTAssertGreaterThan(used.count, 5, "the variables were found")
        XCTAssertEqual(used.subtracting(documented).sorted(), [], "variables used with no entry in docs/environment.md")
        XCTAssertEqual(Set(documented).subtracting(used).sorted(), [], "entries in docs/environment.md that nothing uses")
        let doubled = Dictionary(grouping: documented, by: { $0 }).filter { $0.value.count > 1 }.keys.sorted()
        XCTAssertEqual(doubled, [], "variables with more than one entry")
    }

    func testNamesAreFoundAndAWildcardIsNone() {
        XCTAssertEqual(Self.names(in: "a MEDIADEVICES_RIG_OUT=x, MEDIADEVICES_* and $MEDIADEVICES_RIG."), ["MEDIADEVICES_RIG_OUT", "MEDIADEVICES_RIG"])
    }
}
