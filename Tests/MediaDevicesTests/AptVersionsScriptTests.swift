import Foundation
import XCTest

/// `scripts/vimc.sh plan` and `scripts/apt-versions.sh`: the versions the rig's vimc build fetches are
/// the ones the archive serves, not the kernel's own where Debian has dropped them. An
/// `apt-cache` stand-in on `PATH` plays the archive (its `madison` answers from a list the test
/// writes), so these run without the network; the kernel versions are ones Debian never made,
/// so the real archive cannot answer in its place.
final class AptVersionsScriptTests: XCTestCase {
    /// The checkout (this file is in Tests/MediaDevicesTests/).
    private static let checkout = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    private static let kernel = "6.1.0-98-amd64"

    private struct Run {
        var status: Int32
        var output: String
        var errors: String
    }

    /// Runs `scripts/vimc.sh plan` for `kernel` against an archive that serves `served` ("PACKAGE
    /// VERSION" lines).
    private func plan(served: [String], kernel: String = AptVersionsScriptTests.kernel) throws -> Run {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("apt-standin-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let archive = folder.appendingPathComponent("archive.txt")
        try (served.joined(separator: "\n") + "\n").write(to: archive, atomically: true, encoding: .utf8)
        // apt-cache madison's lines: "name | version | origin suite/component arch Packages";
        // any other use of apt-cache fails, so the scripts cannot reach past the stand-in.
        let standin = folder.appendingPathComponent("apt-cache")
        try """
            #!/bin/sh
            [ "$1" = madison ] || { echo "apt-cache stand-in: only madison is served" >&2; exit 100; }
            shift
            for package in "$@"; do
                awk -v p="$package" '$1 == p { printf "%s | %s | http://archive.invalid/debian bookworm-security/main amd64 Packages\\n", $1, $2 }' "$STANDIN_ARCHIVE"
            done

            """.write(to: standin, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: standin.path)

        let process = Process(), output = Pipe(), errors = Pipe()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [Self.checkout.appendingPathComponent("scripts/vimc.sh").path, "plan", kernel]
        var environment = ProcessInfo.processInfo.environment
        environment["PATH"] = folder.path + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
        environment["STANDIN_ARCHIVE"] = archive.path
        environment["MEDIADEVICES_RIG"] = nil
        process.environment = environment
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let errorText = Thread.detachedRead(errors)
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return Run(status: process.terminationStatus, output: text, errors: errorText())
    }

    /// The archive as it was on 2026-11-28 for the rig's kernel, with this test's ABI: the
    /// kernel's headers at its version, kbuild only at a later revision and an older release.
    private let today = [
        "linux-image-6.1.0-98-amd64 6.1.300-2",
        "linux-headers-6.1.0-98-amd64 6.1.300-2",
        "linux-headers-6.1.0-98-common 6.1.300-2",
        "linux-kbuild-6.1 6.1.300-3",
        "linux-kbuild-6.1 6.1.276-1",
        "linux-source-6.1 6.1.300-3",
        "linux-source-6.1 6.1.300-2",
        "linux-source-6.1 6.1.276-1",
    ]

    func testTheKernelsOwnVersionsAreTakenWhereServed() throws {
        let served = today.map { $0 == "linux-kbuild-6.1 6.1.300-3" ? "linux-kbuild-6.1 6.1.300-2" : $0 }
        let run = try plan(served: served)
        XCTAssertEqual(run.status, 0, run.errors)
        XCTAssertEqual(run.output, """
            linux-headers-6.1.0-98-amd64=6.1.300-2
            linux-headers-6.1.0-98-common=6.1.300-2
            linux-kbuild-6.1=6.1.300-2
            linux-source-6.1=6.1.300-2

            """)
        XCTAssertFalse(run.errors.contains("no longer served"), run.errors)
    }

    func testAKbuildNoLongerServedIsTakenFromTheSameUpstreamVersionAndSaidSo() throws {
        let run = try plan(served: today)
        XCTAssertEqual(run.status, 0, run.errors)
        XCTAssertEqual(run.output, """
            linux-headers-6.1.0-98-amd64=6.1.300-2
            linux-headers-6.1.0-98-common=6.1.300-2
            linux-kbuild-6.1=6.1.300-3
            linux-source-6.1=6.1.300-2

            """)
        XCTAssertTrue(run.errors.contains("linux-kbuild-6.1 6.1.300-2 is no longer served; taking 6.1.300-3"), run.errors)
    }

    func testWithoutTheUpstreamVersionTheNearestOlderOfTheSeriesIsTaken() throws {
        let served = today.filter { !$0.hasPrefix("linux-source-6.1 6.1.300") } + [
            "linux-source-6.1 6.1.290-1", "linux-source-6.1 6.1.310-1", "linux-source-6.1 6.12.57-1",
        ]
        let run = try plan(served: served)
        XCTAssertEqual(run.status, 0, run.errors)
        XCTAssertTrue(run.output.contains("linux-source-6.1=6.1.290-1\n"), run.output)
        XCTAssertTrue(run.errors.contains("taking 6.1.290-1, the nearest older 6.1.x"), run.errors)

        // Only newer ones of the series: the nearest newer one.
        let newer = today.filter { !$0.hasPrefix("linux-source-6.1 ") } + ["linux-source-6.1 6.1.320-1", "linux-source-6.1 6.1.310-1"]
        let newerRun = try plan(served: newer)
        XCTAssertEqual(newerRun.status, 0, newerRun.errors)
        XCTAssertTrue(newerRun.output.contains("linux-source-6.1=6.1.310-1\n"), newerRun.output)
    }

    func testHeadersOfTheKernelsABIAtAnotherVersionAreTakenWithTheirOwnCommon() throws {
        // The kernel package is 6.1.300-2; the archive now has its ABI's headers at -4 only.
        let served = today.filter { !$0.hasPrefix("linux-headers-") } + [
            "linux-headers-6.1.0-98-amd64 6.1.300-4", "linux-headers-6.1.0-98-common 6.1.300-4",
        ]
        let run = try plan(served: served)
        XCTAssertEqual(run.status, 0, run.errors)
        XCTAssertEqual(run.output, """
            linux-headers-6.1.0-98-amd64=6.1.300-4
            linux-headers-6.1.0-98-common=6.1.300-4
            linux-kbuild-6.1=6.1.300-3
            linux-source-6.1=6.1.300-3

            """)
        XCTAssertTrue(run.errors.contains("linux-headers-6.1.0-98-amd64 6.1.300-2 is no longer served; taking 6.1.300-4"), run.errors)
    }

    func testNothingOfTheSeriesFailsSayingWhatToDo() throws {
        let served = today.filter { !$0.hasPrefix("linux-kbuild-6.1 ") } + ["linux-kbuild-6.1 6.12.57-1"]
        let run = try plan(served: served)
        XCTAssertEqual(run.status, 1)
        XCTAssertEqual(run.output, "")
        XCTAssertTrue(run.errors.contains("linux-kbuild-6.1 6.1.300-2 is no longer served, and nothing that may stand in for it is (a 6.1.x version; served: 6.12.57-1)"), run.errors)
        XCTAssertTrue(run.errors.contains("remedy: run 'apt-get update'"), run.errors)
    }

    func testACommonThatDoesNotMatchTheHeadersFails() throws {
        let served = today.filter { !$0.hasPrefix("linux-headers-6.1.0-98-common") } + ["linux-headers-6.1.0-98-common 6.1.300-3"]
        let run = try plan(served: served)
        XCTAssertEqual(run.status, 1)
        XCTAssertTrue(run.errors.contains("linux-headers-6.1.0-98-common 6.1.300-2 is no longer served, and nothing that may stand in for it is (6.1.300-2 exactly"), run.errors)
    }

    func testAKernelWhosePackagesAreAllGoneFailsSayingWhatToDo() throws {
        let run = try plan(served: today.filter { !$0.contains("6.1.0-98") })
        XCTAssertEqual(run.status, 1)
        XCTAssertTrue(run.errors.contains("the archive serves neither linux-image-6.1.0-98-amd64 nor its headers"), run.errors)
        XCTAssertTrue(run.errors.contains("rm -rf .rig/kernel .rig/kernel-version"), run.errors)
    }

    func testANameThatIsNoKernelVersionIsAUsageError() throws {
        let run = try plan(served: today, kernel: "latest")
        XCTAssertEqual(run.status, 2)
        XCTAssertTrue(run.errors.contains("'latest' is not a Debian amd64 kernel version"), run.errors)
    }
}

private final class ReadResult: @unchecked Sendable {
    var text = ""
}

extension Thread {
    /// Reads `pipe` to its end on a thread of its own (so a full pipe cannot stall the child);
    /// the returned closure waits for that and gives the text.
    fileprivate static func detachedRead(_ pipe: Pipe) -> () -> String {
        let result = ReadResult(), done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            result.text = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            done.signal()
        }
        return {
            done.wait()
            return result.text
        }
    }
}
