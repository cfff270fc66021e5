// libFuzzer harness: the EDID monitor-name parser over arbitrary bytes.
@testable import MediaDevices

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    if let name = EDID.monitorName(bytes) {
        // A name is printable ASCII, at most the 13 bytes of a descriptor, never blank.
        precondition(!name.isEmpty && name.utf8.count <= 13, "bad monitor name \(name.debugDescription)")
        precondition(name.utf8.allSatisfy { $0 >= 0x20 && $0 < 0x7F }, "unprintable monitor name")
    }
    return 0
}
