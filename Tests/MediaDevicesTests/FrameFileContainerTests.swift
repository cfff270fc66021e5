import XCTest
@testable import MediaDevices
@testable import MediaDevicesAudio
@testable import MediaDevicesVideo
@testable import MediaDevicesCore

/// The file name decides the container, as with FFmpeg; a character device takes raw frames.
final class FrameFileContainerTests: XCTestCase {
    func testNamesDecide() throws {
        XCTAssertEqual(try FrameFileWriter.container(for: "clip.y4m"), .y4m)
        XCTAssertEqual(try FrameFileWriter.container(for: "-"), .y4m)
        XCTAssertEqual(try FrameFileWriter.container(for: "camera.MJPEG"), .mjpeg)
        XCTAssertEqual(try FrameFileWriter.container(for: "/tmp/frames.nv12"), .raw)
    }

    func testACharacterDeviceTakesRawFrames() throws {
        XCTAssertEqual(try FrameFileWriter.container(for: "/dev/null"), .raw)
    }

    func testAnyOtherNameIsAnErrorThatExplains() {
        for path in ["clip.mp4", "/tmp", "frames"] {
            XCTAssertThrowsError(try FrameFileWriter.container(for: path), path) { error in
                XCTAssertEqual((error as? MediaDevicesError)?.code, .unsupportedFormat)
                XCTAssertTrue("\(error)".contains(".y4m"), "\(error)")
            }
        }
    }
}
