import MediaDevicesCore
import Glibc
import Synchronization

/// A lock-free single-producer / single-consumer ring of bytes: one thread writes, another reads,
/// neither waits nor allocates. The audio thread is one end, the application the other.
///
/// The write and read positions are byte counts that only grow (wrapping at `Int.max` is
/// centuries away); the producer publishes with a release store after copying, the consumer
/// acquires before copying out, so bytes are never read before they are written.
// @unchecked Sendable: single producer, single consumer; positions are atomics with release/acquire ordering.
package final class AudioRingBuffer: @unchecked Sendable {
    /// Capacity in bytes (a power of two).
    package let capacity: Int
    private let mask: Int
    private let storage: UnsafeMutableRawPointer
    private let writePosition = Atomic<Int>(0)
    private let readPosition = Atomic<Int>(0)

    /// Creates a ring holding at least `minimumCapacity` bytes (rounded up to a power of two).
    package init(minimumCapacity: Int) {
        var size = 64
        while size < minimumCapacity { size <<= 1 }
        capacity = size
        mask = size - 1
        storage = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 64)
        storage.initializeMemory(as: UInt8.self, repeating: 0, count: size)
    }

    deinit { storage.deallocate() }

    /// Bytes ready to read (a snapshot; from the consumer it is a lower bound).
    package var availableToRead: Int {
        writePosition.load(ordering: .acquiring) - readPosition.load(ordering: .acquiring)
    }

    /// Producer: bytes written since the ring was made (the position the next write starts at).
    package var bytesWritten: Int { writePosition.load(ordering: .relaxed) }

    /// Consumer: bytes read since the ring was made (the position the next read starts at).
    package var bytesRead: Int { readPosition.load(ordering: .relaxed) }

    /// Bytes that can be written (a snapshot; from the producer it is a lower bound).
    package var availableToWrite: Int { capacity - availableToRead }

    /// Producer: copies in up to `count` bytes from `source`, rounded down to a multiple of
    /// `granularity` (a frame), and returns how many it copied.
    @discardableResult
    package func write(_ source: UnsafeRawPointer, count: Int, granularity: Int = 1) -> Int {
        write(count: count, granularity: granularity) { destination, offset in
            destination.baseAddress!.copyMemory(from: source + offset, byteCount: destination.count)
        }
    }

    /// Consumer: copies out up to `count` bytes into `destination`, rounded down to a multiple of
    /// `granularity`, and returns how many it copied.
    @discardableResult
    package func read(into destination: UnsafeMutableRawPointer, count: Int, granularity: Int = 1) -> Int {
        read(count: count, granularity: granularity) { source, offset in
            (destination + offset).copyMemory(from: source.baseAddress!, byteCount: source.count)
        }
    }

    /// Producer: offers up to two free regions (the second after the wrap) totalling the count
    /// written, to `fill(region, offsetIntoTheWrite)`, then publishes them. Returns the count.
    @inline(__always)
    func write(count: Int, granularity: Int,
               _ fill: (UnsafeMutableRawBufferPointer, Int) -> Void) -> Int {
        let head = writePosition.load(ordering: .relaxed)
        let tail = readPosition.load(ordering: .acquiring)
        var n = min(count, capacity - (head - tail))
        n -= n % granularity
        guard n > 0 else { return 0 }
        let start = head & mask
        let first = min(n, capacity - start)
        fill(UnsafeMutableRawBufferPointer(start: storage + start, count: first), 0)
        if first < n { fill(UnsafeMutableRawBufferPointer(start: storage, count: n - first), first) }
        writePosition.store(head + n, ordering: .releasing)
        return n
    }

    /// Consumer: offers up to two filled regions totalling the count read to
    /// `drain(region, offsetIntoTheRead)`, then frees them. Returns the count.
    @inline(__always)
    func read(count: Int, granularity: Int,
              _ drain: (UnsafeRawBufferPointer, Int) -> Void) -> Int {
        let tail = readPosition.load(ordering: .relaxed)
        let head = writePosition.load(ordering: .acquiring)
        var n = min(count, head - tail)
        n -= n % granularity
        guard n > 0 else { return 0 }
        let start = tail & mask
        let first = min(n, capacity - start)
        drain(UnsafeRawBufferPointer(start: storage + start, count: first), 0)
        if first < n { drain(UnsafeRawBufferPointer(start: storage, count: n - first), first) }
        readPosition.store(tail + n, ordering: .releasing)
        return n
    }

    /// Consumer: drops everything readable (used before a stream starts, when neither end runs).
    package func discardAll() {
        readPosition.store(writePosition.load(ordering: .acquiring), ordering: .releasing)
    }
}
