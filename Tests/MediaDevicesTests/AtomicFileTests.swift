import Foundation
@testable import MediaDevices
@testable import MediaDevicesAudio
@testable import MediaDevicesVideo
@testable import MediaDevicesCore
import XCTest

/// `AtomicFile`, through which the library and the CLI write every file (restore tokens,
/// control profiles, WAV, Y4M, PNG, JPEG): the mode, whole replacement, no temporary file left,
/// and clear errors for a missing or read-only folder.
final class AtomicFileTests: XCTestCase {
    private var directory = ""

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("atomic-file-\(getpid())-\(UInt32.random(in: 0...UInt32.max))").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(atPath: directory)
    }

    private func entries(_ folder: String) throws -> [String] { try FileManager.default.contentsOfDirectory(atPath: folder).sorted() }

    private func mode(_ path: String) -> mode_t {
        var status = stat()
        XCTAssertEqual(stat(path, &status), 0, path)
        return status.st_mode & 0o777
    }

    /// The process's umask, from /proc/self/status (reading it with umask(2) would change it).
    private func umask() throws -> mode_t {
        let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        let line = try XCTUnwrap(status.split(separator: "\n").first { $0.hasPrefix("Umask:") })
        return try XCTUnwrap(mode_t(line.dropFirst("Umask:".count).trimmingCharacters(in: .whitespaces), radix: 8))
    }

    func testTheRestoreTokenFileIsTheUsersAloneAndReplacedWhole() throws {
        let path = directory + "/token"
        try Data("an old, longer token that is not cut\n".utf8).write(to: URL(fileURLWithPath: path))
        XCTAssertEqual(chmod(path, 0o644), 0)
        try PortalScreens.keep("new-token", for: PortalScreens.screen(card: "unix:path=/nowhere", type: 1, name: "monitor"),
                               options: PortalOptions(restoreTokenFile: path))
        XCTAssertEqual(try String(contentsOfFile: path, encoding: .utf8), "new-token\n", "replaced whole")
        XCTAssertEqual(mode(path), 0o600 & ~(try umask()), "readable by the user alone")
        XCTAssertEqual(try entries(directory), ["token"], "no temporary file left")
    }

    func testAWrittenFileHasTheModeLessTheUmaskAndNoTemporaryFileIsLeft() throws {
        let path = directory + "/profiles.json"
        try ControlProfiles().write(to: path)
        XCTAssertEqual(mode(path), 0o644 & ~(try umask()))
        XCTAssertEqual(try entries(directory), ["profiles.json"])
        XCTAssertNoThrow(try JSONDecoder().decode(ControlProfiles.self, from: Data(contentsOf: URL(fileURLWithPath: path))))
    }

    func testAMissingFolderIsNotFoundAndLeavesNothing() throws {
        let path = directory + "/missing/token"
        XCTAssertThrowsError(try PortalScreens.checkTokenFile(PortalOptions(restoreTokenFile: path))) { error in
            let error = error as? MediaDevicesError
            XCTAssertEqual(error?.code, .notFound, "\(String(describing: error))")
            XCTAssertTrue(error?.detail.contains("does not exist") ?? false, "\(String(describing: error))")
        }
        XCTAssertThrowsError(try AtomicFile.write([1, 2, 3], to: path, operation: "write WAV")) { error in
            XCTAssertEqual((error as? MediaDevicesError)?.code, .notFound, "\(error)")
        }
        XCTAssertEqual(try entries(directory), [])
    }

    func testAReadOnlyFolderIsPermissionDeniedAndTheOldFileStays() throws {
        let path = directory + "/token"
        try Data("old\n".utf8).write(to: URL(fileURLWithPath: path))
        // A read-only filesystem: root (which runs the unit tests) writes into any folder whatever its mode.
        let mount = Process()
        mount.executableURL = URL(fileURLWithPath: "/bin/mount")
        mount.arguments = ["-o", "bind,ro", directory, directory]
        try mount.run()
        mount.waitUntilExit()
        XCTAssertEqual(mount.terminationStatus, 0, "mount -o bind,ro (the test needs root and mount(2))")
        defer {
            let unmount = Process()
            unmount.executableURL = URL(fileURLWithPath: "/bin/umount")
            unmount.arguments = [directory]
            try? unmount.run()
            unmount.waitUntilExit()
        }
        guard mount.terminationStatus == 0 else { return }
        for write in [{ try PortalScreens.keep("new", for: PortalScreens.screen(card: "", type: 1, name: "monitor"), options: PortalOptions(restoreTokenFile: path)) },
                      { try ControlProfiles().write(to: path) }] {
            XCTAssertThrowsError(try write()) { error in
                let error = error as? MediaDevicesError
                XCTAssertEqual(error?.code, .permissionDenied, "\(String(describing: error))")
                XCTAssertTrue(error?.detail.contains(path) ?? false, "names the file: \(String(describing: error))")
            }
        }
        XCTAssertEqual(try String(contentsOfFile: path, encoding: .utf8), "old\n", "the old file stays")
        XCTAssertEqual(try entries(directory), ["token"])
    }

    func testAFailedWriterLeavesNothingAndACommittedOneReplacesWhole() throws {
        let path = directory + "/capture.y4m"
        try Data("old".utf8).write(to: URL(fileURLWithPath: path))
        do {
            let file = try AtomicFile(path: path, operation: "write \(path)")
            try [UInt8](repeating: 7, count: 100).withUnsafeBytes { try file.write($0) }
            XCTAssertEqual(try String(contentsOfFile: path, encoding: .utf8), "old", "the old file until commit")
            XCTAssertEqual(try entries(directory).count, 2, "the temporary file beside it")
        }  // dropped without commit
        XCTAssertEqual(try entries(directory), ["capture.y4m"])
        XCTAssertEqual(try String(contentsOfFile: path, encoding: .utf8), "old")
        try AtomicFile.write([UInt8](repeating: 7, count: 100), to: path, operation: "write")
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), Data(repeating: 7, count: 100))
        XCTAssertEqual(try entries(directory), ["capture.y4m"])
    }

    func testACharacterDeviceIsWrittenInPlaceNotReplaced() throws {
        try AtomicFile.write([1, 2, 3], to: "/dev/null", operation: "write")
        var status = stat()
        XCTAssertEqual(stat("/dev/null", &status), 0)
        XCTAssertEqual(status.st_mode & S_IFMT, S_IFCHR, "/dev/null is still the device")
    }
}
