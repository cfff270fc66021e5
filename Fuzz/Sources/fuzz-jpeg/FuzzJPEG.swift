// libFuzzer harness: MJPEG frames through FrameConverter (JPEGDecoder + 4:2:x to I420, and the
// scaling/rotation/NV12 paths behind it). One converter per output variant lives across inputs,
// as in a capture run, so a bad frame followed by a good one is exercised too.
// Input: byte 0 picks the output variant, the rest is the frame's payload.
import MediaDevices

nonisolated(unsafe) var converters: [FrameConverter] = [
    try! FrameConverter(output: OutputFormat(.yu12)),                               // straight decode
    try! FrameConverter(output: OutputFormat(.nv12)),                               // decode + interleave
    try! FrameConverter(output: OutputFormat(.yu12, size: Size(width: 40, height: 30))),  // decode + scale
    try! FrameConverter(output: OutputFormat(.argb, rotation: .clockwise90)),       // decode + rotate + RGB
]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    guard size >= 1 else { return 0 }
    let converter = converters[Int(data[0]) % converters.count]
    let payload = size - 1
    // A driver's buffer: the payload plus slack, as bytesused < length.
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: payload + 64, alignment: 64)
    defer { buffer.deallocate() }
    buffer.initializeMemory(as: UInt8.self, repeating: 0)
    if payload > 0 { buffer.baseAddress!.copyMemory(from: data + 1, byteCount: payload) }
    let format = VideoFormat(pixelFormat: .mjpeg, width: 64, height: 48, bytesPerRow: [0], bufferSizes: [buffer.count])
    let frame = VideoFrame(format: format, timestamp: 1, sequence: 1, orientation: .up, captureDelay: .zero,
                           planeCount: 1, bytesUsed: payload,
                           plane0: FramePlane(bytes: UnsafeRawBufferPointer(buffer), bytesPerRow: 0))
    _ = try? converter.convert(frame) { out -> Int in
        // Touch every output byte so ASan sees any plane that is shorter than claimed.
        var sum = 0
        for index in 0..<out.planeCount {
            let plane = out.plane(index)
            for byte in plane.bytes { sum &+= Int(byte) }
        }
        return sum
    }
    return 0
}
