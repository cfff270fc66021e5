import XCTest
@testable import MediaDevices
@testable import MediaDevicesAudio
@testable import MediaDevicesVideo
@testable import MediaDevicesCore

/// Drivers that list formats but no frame sizes (no VIDIOC_ENUM_FRAMESIZES).
final class FormatSelectionSilentDriverTests: XCTestCase {
    func testSizeAndRateAreAskedForDirectly() throws {
        let formats = [CaptureFormat(pixelFormat: .yuyv, description: "YUYV 4:2:2", isCompressed: false,
                                     isEmulated: false, frameSizes: [])]
        let choice = try FormatSelection.choose(FormatRequest(size: Size(width: 720, height: 576), frameRate: FrameRate(25)),
                                                from: formats, device: "/dev/video9")
        XCTAssertEqual(choice.pixelFormat, .yuyv)
        XCTAssertEqual(choice.size, Size(width: 720, height: 576))
        XCTAssertEqual(choice.frameRate, FrameRate(25))
    }
}
