import AllocationCounter
import CTurboJPEG
import Glibc
import TestSupport
import XCTest
@testable import MediaDevicesVideo
@testable import MediaDevicesCore

/// An application calling `FrameConverter.convert(_:_:)` itself, frame after frame, as the
/// microbenchmarks do (not through a source's pipeline): after the first call of a shape, a
/// call allocates nothing, for raw (YUYV) and MJPEG frames. With `ALLOCATION_TRACE` set, each
/// allocation counted prints its call stack.
final class DirectConversionAllocationTests: XCTestCase {
    /// Calls `converter.convert` on `frame` `calls` times (the first one outside the count) and
    /// returns the heap allocations of calls 2 and later, on this thread.
    static func allocations(_ converter: FrameConverter, _ frame: VideoFrame, calls: Int = 20) throws -> UInt64 {
        var sum = 0
        try converter.convert(frame) { sum &+= $0.plane(0).bytes.count }
        let trace = getenv("ALLOCATION_TRACE") != nil
        let start = allocation_counter_this_thread()
        if trace { allocation_counter_trace(1) }
        var count = 1
        while count < calls {   // no `for in`: its debug iterator allocates
            try converter.convert(frame) { sum &+= $0.plane(0).bytes.count }
            count += 1
        }
        allocation_counter_trace(0)
        let allocations = allocation_counter_this_thread() - start
        XCTAssertGreaterThan(sum, 0, "the converted frames were read")
        return allocations
    }

    override func setUpWithError() throws {
        if let why = AllocationProbe.unavailableReason { print("skip: \(why)"); throw XCTSkip(why) }
        XCTAssertTrue(AllocationProbe.isActive, "malloc is interposed in the test binary")
    }

    /// YUYV 640x480 (a webcam's raw format) to I420 and to ARGB, as they are, and through the
    /// working format (scaled; turned and mirrored).
    func testRawConversionAllocatesNothingAfterTheFirstCall() throws {
        let tight = (0..<(640 * 480 * 2)).map { UInt8(truncatingIfNeeded: $0 % 1280 / 5 + $0 / 1280) }
        let image = PaddedImage(tight: tight, pixelFormat: .yuyv, width: 640, height: 480)
        let outputs = [OutputFormat(.yu12), OutputFormat(.argb), OutputFormat(.nv12),
                       OutputFormat(.yu12, size: Size(width: 320, height: 240)),
                       OutputFormat(.argb, rotation: .clockwise90, mirrored: true)]
        for output in outputs {
            let converter = try FrameConverter(output: output, device: "test")
            let allocations = try image.withFrame { try Self.allocations(converter, $0) }
            XCTAssertEqual(allocations, 0, "YUYV 640x480 → \(output): heap allocations over 19 calls after the first")
        }
    }

    /// An MJPEG frame (the emulated USB camera's 640x480 picture, 4:2:0, and a 4:2:2 one) to
    /// I420 at its own size (decoded straight into the output), to 320x240 (a DCT-scaled
    /// decode) and to ARGB: after the first call, a call allocates exactly what libjpeg-turbo
    /// itself allocates to read the header and decode the picture (TurboJPEG 2.1's
    /// `tjDecompressToYUVPlanes` allocates its row pointers and libjpeg its per-image memory
    /// on every call; measured here on the same bytes, called directly), nothing more.
    func testMJPEGDecodeAllocatesNothingAfterTheFirstCall() throws {
        let outputs = [OutputFormat(.yu12), OutputFormat(.yu12, size: Size(width: 320, height: 240)), OutputFormat(.argb)]
        for subsampling: UInt8 in [20, 22] {
            let jpeg = ScaledJPEGDecodeTests.picture(640, 480, subsampling: subsampling)
            let image = ScaledJPEGDecodeTests.frame(jpeg, 640, 480)
            for output in outputs {
                let converter = try FrameConverter(output: output, device: "test")
                let ours = try image.withFrame { try Self.allocations(converter, $0) }
                let scale = try XCTUnwrap(converter.lastDecodeScale, "the frame was decoded as MJPEG")
                let libjpegs = try Self.turboJPEGAllocations(jpeg, scale: scale)
                print("figure: heap allocations over 19 MJPEG 640x480 4:\(subsampling / 10):\(subsampling % 10) → \(output) calls after the first: \(ours); libjpeg-turbo's own header read and decode: \(libjpegs)")
                XCTAssertEqual(ours, libjpegs, "MJPEG 640x480 4:\(subsampling / 10):\(subsampling % 10) → \(output): heap allocations over 19 calls after the first, beyond libjpeg-turbo's own")
            }
        }
    }

    /// The heap allocations libjpeg-turbo itself makes to read the header of `jpeg` and decode it
    /// at `scale` into planes allocated beforehand, over `calls - 1` calls after a first one:
    /// TurboJPEG called directly, as the converter calls it.
    static func turboJPEGAllocations(_ jpeg: [UInt8], scale: JPEGScale, calls: Int = 20) throws -> UInt64 {
        let handle = try XCTUnwrap(tjInitDecompress(), "libjpeg-turbo could not create a decompressor")
        defer { tjDestroy(handle) }
        var width: Int32 = 0, height: Int32 = 0, subsampling: Int32 = 0, colorspace: Int32 = 0
        XCTAssertEqual(tjDecompressHeader3(handle, jpeg, UInt(jpeg.count), &width, &height, &subsampling, &colorspace), 0)
        let size = scale.scaled(Size(width: Int(width), height: Int(height)))
        let planes = UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>.allocate(capacity: 3)
        let strides = UnsafeMutablePointer<Int32>.allocate(capacity: 3)
        for index in 0..<3 {
            let stride = tjPlaneWidth(Int32(index), Int32(size.width), subsampling)
            strides[index] = stride
            planes[index] = .allocate(capacity: Int(stride * tjPlaneHeight(Int32(index), Int32(size.height), subsampling)))
        }
        defer {
            for index in 0..<3 { planes[index]?.deallocate() }
            planes.deallocate()
            strides.deallocate()
        }
        var start: UInt64 = 0
        var count = 0
        while count < calls {
            if count == 1 { start = allocation_counter_this_thread() }
            XCTAssertEqual(tjDecompressHeader3(handle, jpeg, UInt(jpeg.count), &width, &height, &subsampling, &colorspace), 0)
            XCTAssertEqual(tjDecompressToYUVPlanes(handle, jpeg, UInt(jpeg.count), planes, Int32(size.width), strides,
                                                   Int32(size.height), TJFLAG_FASTDCT), 0)
            count += 1
        }
        return allocation_counter_this_thread() - start
    }
}
