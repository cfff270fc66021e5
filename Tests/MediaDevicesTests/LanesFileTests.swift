import Foundation
import XCTest

/// `scripts/lanes.txt`, which tells `scripts/test.sh` the rig boot of each device-test class: every
/// `XCTestCase` class declared in Tests/DeviceTests is there exactly once, in a boot that exists,
/// and every class it lists is declared (a class left out would never run in CI).
final class LanesFileTests: XCTestCase {
    /// The checkout (this file is in Tests/MediaDevicesTests/).
    private static let checkout = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    private static let boots: Set<String> = ["std", "virtio", "late", "storm"]

    /// The lanes file's entries: class name and boot, in file order.
    static func entries(_ text: String) -> [(name: String, boot: String)] {
        text.split(separator: "\n").compactMap { line in
            guard !line.hasPrefix("#") else { return nil }
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            return fields.count >= 2 ? (String(fields[0]), String(fields[1])) : nil
        }
    }

    /// The `XCTestCase` subclasses declared in the Swift files of `directory`.
    static func declaredTestClasses(in directory: URL) throws -> Set<String> {
        let pattern = try NSRegularExpression(pattern: #"^\s*(?:final\s+)?class\s+([A-Za-z0-9_]+)\s*:\s*XCTestCase\b"#, options: .anchorsMatchLines)
        var names: Set<String> = []
        for file in try FileManager.default.contentsOfDirectory(atPath: directory.path) where file.hasSuffix(".swift") {
            let text = try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8)
            for match in pattern.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                if let range = Range(match.range(at: 1), in: text) { names.insert(String(text[range])) }
            }
        }
        return names
    }

    func testEveryDeviceTestClassIsInExactlyOneBoot() throws {
        let text = try String(contentsOf: Self.checkout.appendingPathComponent("scripts/lanes.txt"), encoding: .utf8)
        let entries = Self.entries(text)
        let declared = try Self.declaredTestClasses(in: Self.checkout.appendingPathComponent("Tests/DeviceTests"))
        XCTAssertGreaterThan(declared.count, 40, "the device-test classes were found")
        let listed = entries.map(\.name)
        XCTAssertEqual(Set(declared).subtracting(listed).sorted(), [], "device-test classes in no boot of scripts/lanes.txt")
        XCTAssertEqual(Set(listed).subtracting(declared).sorted(), [], "classes in scripts/lanes.txt that Tests/DeviceTests does not declare")
        let doubled = Dictionary(grouping: listed, by: { $0 }).filter { $0.value.count > 1 }.keys.sorted()
        XCTAssertEqual(doubled, [], "classes listed more than once")
        let unknownBoots = entries.filter { !Self.boots.contains($0.boot) }.map { "\($0.name) \($0.boot)" }
        XCTAssertEqual(unknownBoots, [], "boots other than \(Self.boots.sorted())")
    }

    /// The parser takes comments, spacing and reasons as the file writes them, and a class
    /// missing from a lanes text is seen (so the check above can fail).
    func testTheParserAndTheCheckSeeAMissingClass() throws {
        let text = """
            # comment
            AClass          std
            BClass          late    the reason, in words
              CClass   virtio
            """
        let entries = Self.entries(text)
        XCTAssertEqual(entries.map(\.name), ["AClass", "BClass", "CClass"])
        XCTAssertEqual(entries.map(\.boot), ["std", "late", "virtio"])
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("lanes-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try "final class AClass: XCTestCase {}\nclass DClass: XCTestCase {}\nstruct NotATest {}\n"
            .write(to: directory.appendingPathComponent("A.swift"), atomically: true, encoding: .utf8)
        let declared = try Self.declaredTestClasses(in: directory)
        XCTAssertEqual(declared, ["AClass", "DClass"])
        XCTAssertEqual(declared.subtracting(entries.map(\.name)), ["DClass"])
    }
}
