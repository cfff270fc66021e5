// libFuzzer harness: what the CLI parses from its arguments (--size, --crop, --fps, --format,
// --output-format, --rotate, control assignments), with round trips through `description`.
// The CLI's DeviceSelection.resolve lives in the executable target (not importable) and only
// matches the text against the devices present; its parsing is the same Int(text)/prefix tests.
import MediaDevices
@testable import MediaDevicesVideo  // the parsers are package-internal (the command line's syntax)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    if let parsed = Size(parsing: text) {
        precondition(parsed.width > 0 && parsed.height > 0, "Size(parsing: \(text.debugDescription)) is empty")
        precondition(Size(parsing: parsed.description) == parsed, "Size round trip \(text.debugDescription)")
        _ = parsed.area
    }
    if let rect = Rect(parsing: text) {
        precondition(rect.x >= 0 && rect.y >= 0 && rect.width > 0 && rect.height > 0, "Rect \(text.debugDescription)")
        precondition(Rect(parsing: rect.description) == rect, "Rect round trip \(text.debugDescription)")
    }
    if let rate = FrameRate(parsing: text) {
        precondition(rate.framesPerSecond.numerator > 0 && rate.framesPerSecond.denominator > 0, "FrameRate \(text.debugDescription)")
        precondition(FrameRate(parsing: rate.framesPerSecond.description) == rate, "FrameRate round trip \(text.debugDescription)")
        _ = rate.frameInterval
        _ = rate.description
    }
    if let setting = ControlSetting(parsing: text) {
        precondition(ControlSetting(parsing: setting.description) == setting, "ControlSetting round trip \(text.debugDescription)")
    }
    if let format = PixelFormat(named: text) { _ = format.name; _ = format.description }
    _ = OutputFormat.pixelFormat(parsing: text)
    if let degrees = Int(text) { _ = FrameRotation(degrees: degrees) }
    // What CaptureOptions builds from the parsed pieces.
    _ = FormatRequest(pixelFormat: PixelFormat(named: text), size: Size(parsing: text), frameRate: FrameRate(parsing: text))
    return 0
}
