import MediaDevices
import TestSupport
import XCTest

/// Steady-state capture, conversion and delivery allocate nothing per frame: a test-pattern
/// source at 640x480 YUYV feeds a converting callback consumer (NV12 480x480, the Twilio
/// square) and two converting sequences nobody reads (ARGB turned and mirrored, I420 scaled
/// down), and the heap allocations on the capture thread are counted over 300 frames.
final class PipelineAllocationTests: XCTestCase {
    func testConversionAndDeliveryAllocateNothingPerFrame() throws {
        if let why = AllocationProbe.unavailableReason { print("skip: \(why)"); throw XCTSkip(why) }
        XCTAssertTrue(AllocationProbe.isActive, "malloc is interposed in the test binary")
        let source = TestPatternSource(pattern: .colorBars,
                                       request: FormatRequest(pixelFormat: .yuyv, size: .vga, frameRate: FrameRate(120)))
        let probe = AllocationProbe(warmUp: 20, measured: 300)
        let square = try ConvertingConsumer(output: OutputFormat(.nv12, size: Size(width: 480, height: 480)), consumer: probe)
        source.consumer = square
        let turned = try source.frameSequence(bufferSize: 2, output: OutputFormat(.argb, rotation: .clockwise90, mirrored: true))
        let small = try source.frameSequence(bufferSize: 2, output: OutputFormat(.yu12, size: Size(width: 320, height: 240)))
        try source.start()
        XCTAssertEqual(probe.done.wait(timeout: .now() + 60), .success, "320 frames arrived")
        source.stop()
        print("figure: heap allocations on the capture thread over 300 converted frames (3 outputs each): \(probe.allocations)")
        XCTAssertEqual(probe.allocations, 0, "heap allocations on the capture thread over 300 frames")
        XCTAssertEqual(square.corruptFrames, 0)
        XCTAssertGreaterThan(turned.droppedFrames, 250, "the unread sequences were fed (and dropped their oldest)")
        XCTAssertGreaterThan(small.droppedFrames, 250)
    }
}
