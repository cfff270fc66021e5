import XCTest
import CV4L2

/// Swift's view of the V4L2 structs must match the C compiler's, or every ioctl corrupts memory.
final class StructLayoutTests: XCTestCase {
    func testSwiftSizesMatchC() {
        XCTAssertEqual(MemoryLayout<v4l2_capability>.size, cv4l2_sizeof_capability)
        XCTAssertEqual(MemoryLayout<v4l2_format>.size, cv4l2_sizeof_format)
        XCTAssertEqual(MemoryLayout<v4l2_buffer>.size, cv4l2_sizeof_buffer)
        XCTAssertEqual(MemoryLayout<v4l2_plane>.size, cv4l2_sizeof_plane)
        XCTAssertEqual(MemoryLayout<v4l2_requestbuffers>.size, cv4l2_sizeof_requestbuffers)
        XCTAssertEqual(MemoryLayout<v4l2_fmtdesc>.size, cv4l2_sizeof_fmtdesc)
        XCTAssertEqual(MemoryLayout<v4l2_frmsizeenum>.size, cv4l2_sizeof_frmsizeenum)
        XCTAssertEqual(MemoryLayout<v4l2_frmivalenum>.size, cv4l2_sizeof_frmivalenum)
        XCTAssertEqual(MemoryLayout<v4l2_streamparm>.size, cv4l2_sizeof_streamparm)
    }

    func testSwiftOffsetsMatchC() {
        XCTAssertEqual(MemoryLayout<v4l2_buffer>.offset(of: \v4l2_buffer.timestamp), cv4l2_offsetof_buffer_timestamp)
        XCTAssertEqual(MemoryLayout<v4l2_buffer>.offset(of: \v4l2_buffer.m), cv4l2_offsetof_buffer_m)
    }

    #if arch(x86_64) || arch(arm64)
    /// The uapi sizes on 64-bit Linux, worked out by hand from videodev2.h.
    func testKnown64BitSizes() {
        XCTAssertEqual(cv4l2_sizeof_capability, 104)
        XCTAssertEqual(cv4l2_sizeof_format, 208)
        XCTAssertEqual(cv4l2_sizeof_buffer, 88)
        XCTAssertEqual(cv4l2_sizeof_plane, 64)
        XCTAssertEqual(cv4l2_sizeof_requestbuffers, 20)
        XCTAssertEqual(cv4l2_sizeof_fmtdesc, 64)
        XCTAssertEqual(cv4l2_sizeof_frmsizeenum, 44)
        XCTAssertEqual(cv4l2_sizeof_frmivalenum, 52)
        XCTAssertEqual(cv4l2_sizeof_streamparm, 204)
        XCTAssertEqual(cv4l2_offsetof_buffer_timestamp, 24)
        XCTAssertEqual(cv4l2_offsetof_buffer_m, 64)
    }

    /// _IOC(dir, 'V', nr, size) with the sizes above: dir << 30 | size << 16 | 'V' << 8 | nr.
    func testKnown64BitRequestCodes() {
        XCTAssertEqual(cv4l2_VIDIOC_QUERYCAP, 0x8068_5600)  // _IOR  0, 104
        XCTAssertEqual(cv4l2_VIDIOC_S_FMT, 0xC0D0_5605)     // _IOWR 5, 208
        XCTAssertEqual(cv4l2_VIDIOC_REQBUFS, 0xC014_5608)   // _IOWR 8, 20
        XCTAssertEqual(cv4l2_VIDIOC_QBUF, 0xC058_560F)      // _IOWR 15, 88
        XCTAssertEqual(cv4l2_VIDIOC_DQBUF, 0xC058_5611)     // _IOWR 17, 88
        XCTAssertEqual(cv4l2_VIDIOC_STREAMON, 0x4004_5612)  // _IOW  18, int
        XCTAssertEqual(cv4l2_VIDIOC_STREAMOFF, 0x4004_5613) // _IOW  19, int
    }
    #endif
}
