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
