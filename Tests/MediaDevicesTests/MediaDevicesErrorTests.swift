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
