import Glibc
import MediaDevices
import MediaDevicesCommandLine

/// A tightly packed image in memory the benchmark owns, laid out as a V4L2 driver lays out a
/// frame of its format (one buffer with the planes one after the other, or one buffer per plane
/// for the multi-planar `…M` formats), filled with pseudo-random bytes.
final class BenchmarkImage {
    let format: VideoFormat
    private var buffers: [UnsafeMutableRawBufferPointer] = []
    private var planeStarts: [UnsafeMutablePointer<UInt8>] = []
    private var planeLengths: [Int] = []

    init(_ pixelFormat: PixelFormat, width: Int, height: Int, colorimetry: Colorimetry? = nil, seed: UInt64 = 0x9E37_79B9_7F4A_7C15) {
        format = VideoFormat(pixelFormat: pixelFormat, width: width, height: height, colorimetry: colorimetry)
        var state = seed
        for size in format.bufferSizes {
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(size, 1), alignment: 64)
            let words = buffer.count / 8
            let wordPointer = buffer.baseAddress!.bindMemory(to: UInt64.self, capacity: words)
            for index in 0..<words {
                state ^= state << 13; state ^= state >> 7; state ^= state << 17   // xorshift64
                wordPointer[index] = state
            }
            buffers.append(buffer)
        }
        let locations = format.planeLocations
        for (index, location) in locations.enumerated() {
            let start = buffers[location.buffer].baseAddress!.advanced(by: location.offset)
            let next = locations.dropFirst(index + 1).first { $0.buffer == location.buffer }
            let end = next?.offset ?? buffers[location.buffer].count
            planeStarts.append(start.assumingMemoryBound(to: UInt8.self))
            planeLengths.append(end - location.offset)
        }
    }

    deinit { for buffer in buffers { buffer.deallocate() } }

    /// Plane `index`'s start.
    func plane(_ index: Int) -> UnsafeMutablePointer<UInt8> { planeStarts[index] }
    /// Plane `index`'s row stride.
    func stride(_ index: Int) -> Int32 { Int32(format.bytesPerRow[index]) }
    /// The bytes of every buffer together.
    var byteCount: Int { buffers.reduce(0) { $0 + $1.count } }
    /// The first buffer.
    var firstBuffer: UnsafeMutableRawBufferPointer { buffers[0] }

    /// The image as a captured frame, as a camera source hands it to consumers.
    var frame: VideoFrame {
        func framePlane(_ index: Int) -> FramePlane {
            guard index < planeStarts.count else { return .empty }
            return FramePlane(bytes: UnsafeRawBufferPointer(start: planeStarts[index], count: planeLengths[index]),
                              bytesPerRow: format.bytesPerRow[index])
        }
        return VideoFrame(format: format, timestamp: MonotonicInstant(nanoseconds: 0), sequence: 0, orientation: .up, captureDelay: .zero,
                          planeCount: planeStarts.count, bytesUsed: format.bufferSizes[0],
                          plane0: framePlane(0), plane1: framePlane(1), plane2: framePlane(2))
    }

    /// Copies every buffer of this image into `destination` (at least `byteCount` bytes): the
    /// memcpy reference.
    func copyAll(into destination: UnsafeMutableRawPointer) {
        var offset = 0
        for buffer in buffers {
            memcpy(destination + offset, buffer.baseAddress!, buffer.count)
            offset += buffer.count
        }
    }
}
