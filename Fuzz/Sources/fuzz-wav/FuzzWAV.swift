// libFuzzer harness: the WAV reader (WAVFile(bytes:)) and its float conversion.
import MediaDevices
@testable import MediaDevicesAudio  // WAVFile is package-internal (the command line's `play` reads with it)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let file = try? WAVFile(bytes: bytes, name: "fuzz.wav") else { return 0 }
    precondition(file.data.count % file.format.bytesPerFrame == 0, "data is not whole frames")
    precondition(file.data.count <= size, "more data than input")
    let samples = file.floatSamples()
    precondition(samples.count == file.frames * file.format.channels, "sample count")
    return 0
}
