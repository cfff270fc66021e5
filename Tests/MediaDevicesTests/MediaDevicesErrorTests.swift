import Foundation
import XCTest
@testable import MediaDevices
@testable import MediaDevicesAudio
@testable import MediaDevicesVideo
@testable import MediaDevicesCore
import Glibc

final class MediaDevicesErrorTests: XCTestCase {
    private func map(_ errno: Int32, _ operation: String = "VIDIOC_STREAMON") -> MediaDevicesError {
        MediaDevicesError.fromErrno(errno, device: "/dev/video7", operation: operation)
    }

    /// Codes are named in JSON as the CLI always wrote them, read back by name, and an unknown
    /// name is an error rather than a crash or a silent default.
    func testCodesAreEncodedAndDecodedByTheirStableNames() throws {
        XCTAssertEqual(MediaDevicesError.Code.all.count, Set(MediaDevicesError.Code.all.map(\.rawValue)).count, "names are unique")
        for code in MediaDevicesError.Code.all {
            let json = try JSONEncoder().encode([code])
            XCTAssertEqual(String(decoding: json, as: UTF8.self), "[\"\(code.rawValue)\"]")
            XCTAssertEqual(try JSONDecoder().decode([MediaDevicesError.Code].self, from: json), [code])
            XCTAssertEqual(MediaDevicesError.Code(rawValue: code.rawValue), code)
        }
        XCTAssertEqual(MediaDevicesError.Code.permissionDenied.rawValue, "permissionDenied")
        XCTAssertNil(MediaDevicesError.Code(rawValue: "exploded"))
        XCTAssertThrowsError(try JSONDecoder().decode([MediaDevicesError.Code].self, from: Data("[\"exploded\"]".utf8)))
    }

    func testDisconnected() {
        XCTAssertEqual(map(ENODEV).code, .disconnected)
        XCTAssertEqual(map(ENXIO).code, .disconnected)
        XCTAssertEqual(map(ENODEV, "open").code, .disconnected)
        XCTAssertEqual(map(ENOENT, "VIDIOC_DQBUF").code, .disconnected)
    }

    /// No descriptor left is its own code, whose remedy says how to raise the limit.
    func testTooManyOpenFiles() {
        let process = map(EMFILE, "open")
        XCTAssertEqual(process.code, .tooManyOpenFiles)
        XCTAssertTrue(process.description.contains("(EMFILE)"), process.description)
        XCTAssertTrue(process.remedy?.contains("RLIMIT_NOFILE") ?? false, process.description)
        let system = map(ENFILE, "eventfd")
        XCTAssertEqual(system.code, .tooManyOpenFiles)
        XCTAssertTrue(system.remedy?.contains("fs.file-max") ?? false, system.description)
        XCTAssertEqual(MediaDevicesError.fromFileErrno(EMFILE, path: "/tmp/clip.y4m", operation: "open").code, .tooManyOpenFiles)
        // libasound says ENOENT when it could not read its configuration: with descriptors to
        // spare that is a missing PCM, and stays one.
        XCTAssertEqual(MediaDevicesError.fromAudio(-ENOENT, device: "hw:9", operation: "snd_pcm_open").code, .notFound)
    }

    /// The spare descriptors are the soft limit less what is open; under a few, a library's
    /// failed open is put down to exhaustion.
    func testDescriptorHeadroomCountsWhatTheLimitLeaves() throws {
        let first = try XCTUnwrap(DescriptorHeadroom.spare())
        XCTAssertGreaterThan(first, DescriptorHeadroom.libraryOpenNeeds, "the test process has room")
        XCTAssertNil(DescriptorHeadroom.likelyExhausted())
        let opened = (0..<3).map { _ in open("/dev/null", O_RDONLY | O_CLOEXEC) }
        defer { opened.forEach { close($0) } }
        XCTAssertEqual(DescriptorHeadroom.spare(), first - 3)
        var saved = rlimit()
        XCTAssertEqual(getrlimit(Int32(RLIMIT_NOFILE.rawValue), &saved), 0)
        defer { _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &saved) }
        var lowered = saved
        lowered.rlim_cur = saved.rlim_cur - rlim_t(first - 3) + 2  // two spare
        XCTAssertEqual(setrlimit(Int32(RLIMIT_NOFILE.rawValue), &lowered), 0)
        XCTAssertEqual(DescriptorHeadroom.spare(), 2)
        XCTAssertEqual(DescriptorHeadroom.likelyExhausted(), EMFILE)
    }

    func testBusy() {
        let error = map(EBUSY)
        XCTAssertEqual(error.code, .busy)
        XCTAssertEqual(error.errno, .resourceBusy)
    }

    func testPermissionDenied() {
        for value in [EACCES, EPERM] {
            let error = map(value, "open")
            XCTAssertEqual(error.code, .permissionDenied)
            XCTAssertTrue(error.description.contains("video"), error.description)
            XCTAssertTrue(error.description.contains("udev"), error.description)
        }
    }

    func testNotFoundOnOpen() {
        XCTAssertEqual(map(ENOENT, "open").code, .notFound)
    }

    func testEINVAL() {
        XCTAssertEqual(map(EINVAL, "VIDIOC_S_FMT").code, .unsupportedFormat)
        XCTAssertEqual(map(EINVAL, "VIDIOC_REQBUFS").code, .unsupportedFormat)
        XCTAssertEqual(map(EINVAL, "VIDIOC_QBUF").code, .io)
    }

    func testOthers() {
        XCTAssertEqual(map(EIO).code, .io)
        XCTAssertEqual(map(ENOMEM).code, .io)
        XCTAssertEqual(map(ETIMEDOUT).code, .timeout)
    }

    func testDescriptionNamesDeviceOperationAndErrno() {
        let text = map(EBUSY).description
        XCTAssertTrue(text.hasPrefix("/dev/video7: "), text)
        XCTAssertTrue(text.contains("VIDIOC_STREAMON"), text)
        XCTAssertTrue(text.contains("(EBUSY)"), text)
        XCTAssertTrue(text.contains("busy"), text)  // strerror(EBUSY): "Device or resource busy"
        XCTAssertTrue(map(ENOTTY).description.contains("ENOTTY"))
        XCTAssertTrue(map(1234).description.contains("errno 1234"))
    }

    func testDescriptionWithoutDevice() {
        let error = MediaDevicesError(.invalidState, device: nil, operation: "start", detail: "Call initialize() first")
        XCTAssertEqual(error.description, "start failed. Call initialize() first")
    }
}
