import XCTest
@testable import MediaDevices
@testable import MediaDevicesAudio
@testable import MediaDevicesVideo
@testable import MediaDevicesCore

final class VideoOrientationTests: XCTestCase {
    func testClockwiseDegrees() {
        XCTAssertEqual(VideoOrientation(rotationDegrees: 0), .up)
        XCTAssertEqual(VideoOrientation(rotationDegrees: 90), .left)
        XCTAssertEqual(VideoOrientation(rotationDegrees: -90), .right)
        XCTAssertEqual(VideoOrientation(rotationDegrees: 540), .down)
        XCTAssertNil(VideoOrientation(rotationDegrees: 45))
        XCTAssertEqual(VideoOrientation.allCases.map(\.rotationDegrees), [0, 90, 180, 270])
    }

    /// The kernel documents V4L2_CID_CAMERA_SENSOR_ROTATION as the counter-clockwise correction:
    /// a sensor mounted 90° needs the image turned 90° counter-clockwise, i.e. 270° clockwise.
    func testSensorRotationIsCounterClockwise() {
        XCTAssertEqual(VideoOrientation(sensorRotation: 0), .up)
        XCTAssertEqual(VideoOrientation(sensorRotation: 90), .right)
        XCTAssertEqual(VideoOrientation(sensorRotation: 180), .down)
        XCTAssertEqual(VideoOrientation(sensorRotation: 270), .left)
    }
}
