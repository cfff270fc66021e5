import CPipeWire
import Glibc
import XCTest

/// Issue 52: a PipeWire camera buffer in plain memory (`SPA_DATA_MemPtr`, as GStreamer's
/// `pipewiresink` gives it) lies in a block of PipeWire's pool, a memfd the stream maps shared
/// and unmaps with its buffer set. The shim maps those pages a second time
/// (`cpw_mapping_alias`), so that such a buffer is lent as a memfd one is: its frames read in
/// place (no copy) and a lease outlives the buffer set. These tests stand for PipeWire's pool with
/// shared memory of their own.
final class PipeWireBufferAliasTests: XCTestCase {
    private let page = Int(sysconf(Int32(_SC_PAGESIZE)))

    /// `length` bytes of shared memory (shmem, as a memfd of PipeWire's pool is), filled with a pattern.
    private func sharedMemory(_ length: Int) throws -> UnsafeMutableRawPointer {
        let base = try XCTUnwrap(mmap(nil, length, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0))
        XCTAssertNotEqual(base, MAP_FAILED, "mmap: errno \(errno)")
        for index in 0..<length { base.storeBytes(of: UInt8(truncatingIfNeeded: index &* 7 &+ 3), toByteOffset: index, as: UInt8.self) }
        return base
    }

    /// The alias reads the same pages (a write through PipeWire's mapping shows in it: the
    /// frame was not copied), from an unaligned start as a buffer's data has, and stays readable,
    /// with the same bytes, after PipeWire's mapping is gone (a lease past its buffer set).
    func testAnAliasReadsTheSamePagesAndOutlivesTheOriginalMapping() throws {
        let frameSize = 640 * 480 * 2, offset = 136  // a YUYV frame after the buffer's metas and chunk
        let length = (offset + frameSize + page - 1) / page * page + page
        let base = try sharedMemory(length)
        let data = base + offset
        let expected = Array(UnsafeRawBufferPointer(start: data, count: frameSize))

        let alias = try XCTUnwrap(cpw_mapping_alias(data, frameSize, 5), "a shared mapping is aliased: errno \(errno)")
        defer { cpw_mapping_free(alias) }
        let bytes = try XCTUnwrap(cpw_mapping_bytes(alias))
        XCTAssertNotEqual(UnsafeRawPointer(bytes), UnsafeRawPointer(data), "a mapping of its own")
        XCTAssertEqual(Int(bitPattern: bytes) % page, offset % page, "the data's place in its page is kept")

        // The same pages: the producer's write (through PipeWire's mapping) is what the lease reads.
        data.storeBytes(of: 0xAB, toByteOffset: 1000, as: UInt8.self)
        XCTAssertEqual(bytes.load(fromByteOffset: 1000, as: UInt8.self), 0xAB, "the alias shares the pages: nothing was copied")
        data.storeBytes(of: expected[1000], toByteOffset: 1000, as: UInt8.self)

        // PipeWire lets the buffer set go: its mapping is unmapped; the alias still reads the frame.
        XCTAssertEqual(munmap(base, length), 0)
        XCTAssertEqual(Array(UnsafeRawBufferPointer(start: bytes, count: frameSize)), expected, "the frame, after the original mapping went")
    }

    /// Private memory (a producer's heap in this process) cannot be mapped twice: no alias, so
    /// the frame is copied rather than lent from memory that could not be kept.
    func testPrivateMemoryIsNotAliased() throws {
        let length = 4 * page
        let base = try XCTUnwrap(mmap(nil, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0))
        XCTAssertNotEqual(base, MAP_FAILED)
        defer { munmap(base, length) }
        base.storeBytes(of: 1, as: UInt8.self)
        XCTAssertNil(cpw_mapping_alias(base + 64, length - 64, 0), "a private mapping is not aliased")
    }
}
