import Glibc

/// Whether `bytes` holds exactly `expected` (false when `expected` is nil), by `memcmp`: a
/// generic comparison of every byte (`Array ==`, `elementsEqual`) costs a debug build under
/// emulation about a third of a second per VGA frame.
func sameBytes(_ bytes: UnsafeRawBufferPointer, _ expected: [UInt8]?) -> Bool {
    guard let expected, expected.count == bytes.count else { return false }
    guard let base = bytes.baseAddress else { return true }
    return expected.withUnsafeBytes { memcmp(base, $0.baseAddress!, bytes.count) == 0 }
}

/// Whether `mapped` starts with exactly `bytes` (a mapped DMA-BUF may be longer than the plane).
func startsWithBytes(_ mapped: UnsafeRawBufferPointer, _ bytes: UnsafeRawBufferPointer) -> Bool {
    guard mapped.count >= bytes.count else { return false }
    guard bytes.count > 0 else { return true }
    return memcmp(mapped.baseAddress!, bytes.baseAddress!, bytes.count) == 0
}

/// How many of the first `min(a.count, b.count)` bytes of `a` and `b` are equal, position by
/// position. Blocks that `memcmp` finds equal are not looked at byte by byte (a `zip` and
/// `filter` over a VGA frame costs a debug build under emulation seconds).
func countEqualBytes(_ a: [UInt8], _ b: [UInt8]) -> Int {
    let count = min(a.count, b.count)
    return a.withUnsafeBufferPointer { a in
        b.withUnsafeBufferPointer { b in
            guard count > 0, let first = a.baseAddress, let second = b.baseAddress else { return 0 }
            var equal = 0, start = 0
            while start < count {
                let length = min(4096, count - start)
                if memcmp(first + start, second + start, length) == 0 {
                    equal += length
                } else {
                    var index = start
                    while index < start + length {
                        if first[index] == second[index] { equal += 1 }
                        index += 1
                    }
                }
                start += length
            }
            return equal
        }
    }
}
