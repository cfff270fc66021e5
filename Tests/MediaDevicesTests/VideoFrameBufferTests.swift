import XCTest
@testable import MediaDevices
@testable import MediaDevicesAudio
@testable import MediaDevicesVideo
@testable import MediaDevicesCore

final class VideoFrameBufferTests: XCTestCase {
    /// An NV12 4x2 frame: 8 bytes of Y (rows of 4), 4 bytes of CbCr (one row of 4).
    func testTwoPlaneCopy() throws {
        let format = VideoFormat(pixelFormat: .nv12, width: 4, height: 2)
        XCTAssertEqual(format.bytesPerRow, [4, 4])
        let luma: [UInt8] = [10, 11, 12, 13, 20, 21, 22, 23]
        let chroma: [UInt8] = [128, 129, 130, 131]
        let buffer = VideoFrameBuffer(format: format)
        luma.withUnsafeBytes { y in
            chroma.withUnsafeBytes { uv in
                let frame = VideoFrame(format: format, timestamp: MonotonicInstant(nanoseconds: 99), sequence: 3, orientation: .left,
                                       captureDelay: .microseconds(5), planeCount: 2, bytesUsed: 12,
                                       plane0: FramePlane(bytes: y, bytesPerRow: 4),
                                       plane1: FramePlane(bytes: uv, bytesPerRow: 4))
                buffer.fill(from: frame)
            }
        }
        XCTAssertEqual(buffer.withUnsafeBytes { Array($0) }, luma + chroma)
        XCTAssertEqual(buffer.sequence, 3)
        XCTAssertEqual(buffer.timestamp, MonotonicInstant(nanoseconds: 99))
        XCTAssertEqual(buffer.orientation, .left)
        buffer.withFrame { frame in
            XCTAssertEqual(frame.planeCount, 2)
            XCTAssertEqual(Array(frame.plane(0).bytes), luma)
            XCTAssertEqual(Array(frame.plane(1).bytes), chroma)
            XCTAssertEqual(frame.plane(0).bytesPerRow, 4)
            XCTAssertEqual(frame.plane(1).bytesPerRow, 4)
            XCTAssertEqual(frame.plane(2).bytes.count, 0)
            XCTAssertEqual(frame.width, 4)
            XCTAssertEqual(frame.height, 2)
        }
    }

    func testRefillWithLargerFrameGrows() {
        let small = VideoFormat(pixelFormat: .grey, width: 2, height: 1)
        let buffer = VideoFrameBuffer(format: small)
        let big: [UInt8] = Array(0..<64)
        withGreyFrame(sequence: 1, bytes: big) { buffer.fill(from: $0) }
        XCTAssertEqual(buffer.withUnsafeBytes { Array($0) }, big)
        let shorter: [UInt8] = [7, 7, 7]
        withGreyFrame(sequence: 2, bytes: shorter) { buffer.fill(from: $0) }
        XCTAssertEqual(buffer.withUnsafeBytes { Array($0) }, shorter)
        XCTAssertEqual(buffer.format.width, 3)
    }

    func testThreePlaneCopy() {
        let format = VideoFormat(pixelFormat: .yu12, width: 2, height: 2)
        let y: [UInt8] = [1, 2, 3, 4], u: [UInt8] = [5], v: [UInt8] = [6]
        let buffer = VideoFrameBuffer(format: format)
        y.withUnsafeBytes { yb in u.withUnsafeBytes { ub in v.withUnsafeBytes { vb in
            buffer.fill(from: VideoFrame(format: format, timestamp: MonotonicInstant(nanoseconds: 0), sequence: 0, orientation: .up, captureDelay: .zero,
                                         planeCount: 3, bytesUsed: 6,
                                         plane0: FramePlane(bytes: yb, bytesPerRow: 2),
                                         plane1: FramePlane(bytes: ub, bytesPerRow: 1),
                                         plane2: FramePlane(bytes: vb, bytesPerRow: 1)))
        } } }
        XCTAssertEqual(buffer.withUnsafeBytes { Array($0) }, [1, 2, 3, 4, 5, 6])
        buffer.withFrame { frame in
            XCTAssertEqual(Array(frame.plane(2).bytes), [6])
            XCTAssertEqual(frame.plane(2).bytesPerRow, 1)
        }
    }
}
