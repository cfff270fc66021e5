import XCTest
@testable import MediaDevices
@testable import MediaDevicesVideo
@testable import MediaDevicesCore

/// MJPEG frames that lost their beginning or end on the bus (uvcvideo completes a short
/// compressed frame without an error flag) never reach a consumer, converting or not: in a
/// loaded rig run the console passed such a frame of the USB camera on as a part of its stream.
final class JPEGFramingTests: XCTestCase {
    /// `bytes` as an MJPEG frame numbered `sequence`, in a buffer `spare` bytes larger.
    private func withMJPEGFrame(_ bytes: [UInt8], sequence: UInt32, spare: Int = 512, _ body: (VideoFrame) -> Void) {
        let buffer = bytes + [UInt8](repeating: 0, count: spare)
        let format = VideoFormat(pixelFormat: .mjpeg, width: JPEGDecodeTests.w, height: JPEGDecodeTests.h, bytesPerRow: [0],
                                 bufferSizes: [buffer.count])
        buffer.withUnsafeBytes { raw in
            body(VideoFrame(format: format, timestamp: MonotonicInstant(nanoseconds: UInt64(sequence) * 40_000_000 + 1), sequence: sequence,
                            orientation: .up, captureDelay: .zero, planeCount: 1, bytesUsed: bytes.count,
                            plane0: FramePlane(bytes: raw, bytesPerRow: 0)))
        }
    }

    func testWholeJPEGsPassWithOrWithoutPaddingAfterTheirEnd() throws {
        let jpeg = try JPEGDecodeTests.jpeg("yuvj420p")
        XCTAssertNil(jpeg.withUnsafeBytes { JPEGFraming.defect(in: $0) })
        XCTAssertNil((jpeg + [UInt8](repeating: 0, count: 4096)).withUnsafeBytes { JPEGFraming.defect(in: $0) }, "zero padding after EOI")
        XCTAssertNil((jpeg + [0x12, 0x34, 0xFF, 0x00]).withUnsafeBytes { JPEGFraming.defect(in: $0) }, "bytes after EOI")
    }

    func testFramesCutAtEitherEndAreFound() throws {
        let jpeg = try JPEGDecodeTests.jpeg("yuvj420p")
        let cut = Array(jpeg.prefix(jpeg.count / 2)).withUnsafeBytes { JPEGFraming.defect(in: $0) }
        XCTAssertTrue(cut?.contains("without an end-of-image marker") == true, cut ?? "nil")
        XCTAssertNotNil(Array(jpeg.prefix(jpeg.count - 2)).withUnsafeBytes { JPEGFraming.defect(in: $0) }, "only the EOI missing")
        let headless = Array(jpeg.dropFirst(jpeg.count / 3)).withUnsafeBytes { JPEGFraming.defect(in: $0) }
        XCTAssertTrue(headless?.contains("without a start-of-image marker") == true, headless ?? "nil")
        XCTAssertNotNil([UInt8]().withUnsafeBytes { JPEGFraming.defect(in: $0) }, "an empty frame")
        let stub = [UInt8]([0xFF, 0xD8, 0xFF]).withUnsafeBytes { JPEGFraming.defect(in: $0) }
        XCTAssertTrue(stub?.contains("too short") == true, "a start marker and nothing after it: \(stub ?? "nil")")
        XCTAssertNil([UInt8]([0xFF, 0xD8, 0xFF, 0xD9]).withUnsafeBytes { JPEGFraming.defect(in: $0) }, "SOI then EOI is framed (a decode judges the rest)")
    }

    /// The consumer and a sequence without a converter (the camera's own JPEGs, as the console
    /// sends them on) get only the whole frames; the cut ones are counted corrupt, not dropped
    /// by the driver, and the sequence numbers after them show no gap.
    func testAPassThroughConsumerAndSequenceNeverSeeACutFrame() async throws {
        let jpeg = try JPEGDecodeTests.jpeg("yuvj420p")
        let delivery = FrameDelivery()
        delivery.deviceLabel = "/dev/video9"
        let consumer = RecordingConsumer()
        delivery.consumer = consumer
        let frames = delivery.makeFrames(bufferSize: 8)
        delivery.beginRun()
        withMJPEGFrame(jpeg, sequence: 0) { delivery.deliver($0) }
        withMJPEGFrame(Array(jpeg.prefix(jpeg.count * 2 / 3)), sequence: 1) { delivery.deliver($0) }
        withMJPEGFrame(Array(jpeg.dropFirst(700)), sequence: 2) { delivery.deliver($0) }
        withMJPEGFrame(jpeg, sequence: 3, spare: 0) { delivery.deliver($0) }
        let statistics = delivery.statistics
        XCTAssertEqual(consumer.record.withLock { $0.sequences }, [0, 3], "the consumer got the whole frames only")
        XCTAssertEqual(statistics.deliveredFrames, 2)
        XCTAssertEqual(statistics.corruptFrames, 2)
        XCTAssertEqual(statistics.droppedFrames, 0, "a frame dropped as cut is not also a driver drop")
        XCTAssertTrue(statistics.lastCorruptFrameReason?.contains("start-of-image") == true, statistics.lastCorruptFrameReason ?? "nil")
        XCTAssertTrue(statistics.lastCorruptFrameReason?.contains("/dev/video9") == true, "the reason names the device: \(statistics.lastCorruptFrameReason ?? "nil")")
        XCTAssertTrue(statistics.lastCorruptFrameReason?.contains("USB port of its own") == true, "and a remedy")
        delivery.finish(error: nil)
        var received: [(UInt32, [UInt8])] = []
        for try await frame in frames {
            received.append((frame.sequence, frame.withUnsafeBytes { Array($0.prefix(frame.bytesUsed)) }))
        }
        XCTAssertEqual(received.map(\.0), [0, 3], "the sequence got the whole frames only")
        XCTAssertTrue(received.allSatisfy { $0.1 == jpeg }, "each the camera's JPEG, byte for byte")
    }
}
