// libFuzzer harness: FormatSelection.choose over random capability tables and requests, as a
// driver could report them (any u32 sizes and frame intervals, stepwise and continuous ranges).
// Input: a byte stream read as small integers; see `Reader`. FormatSelection is `package`, not
// public: the harness reaches it as a test does (scripts/fuzz.sh builds debug, where testing is on).
import MediaDevices
@testable import MediaDevicesVideo

struct Reader {
    var bytes: UnsafeBufferPointer<UInt8>
    var at = 0
    mutating func byte() -> Int { defer { at += 1 }; return at < bytes.count ? Int(bytes[at]) : 0 }
    /// Mostly small values, sometimes a full u32 (a driver can report anything).
    mutating func value() -> Int {
        let tag = byte()
        switch tag & 3 {
        case 0: return byte()
        case 1: return byte() << 8 | byte()
        case 2: return byte() << 24 | byte() << 16 | byte() << 8 | byte()
        default: return [1, 2, 15, 30, 60, 320, 480, 640, 720, 1080, 1280, 1920, 1001, 30000][(tag >> 2) % 14]
        }
    }
    mutating func size() -> Size { Size(width: value(), height: value()) }
    mutating func fraction() -> Fraction { Fraction(value(), value()) }
}

let pixelFormats: [PixelFormat] = [.mjpeg, .yuyv, .nv12, .yu12, .grey, .rgb24, .jpeg, PixelFormat(named: "H264")!]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    var r = Reader(bytes: UnsafeBufferPointer(start: data, count: size))
    var formats: [CaptureFormat] = []
    for _ in 0..<(r.byte() % 4 + 1) {
        let pixelFormat = pixelFormats[r.byte() % pixelFormats.count]
        var options: [FrameSizeOption] = []
        for _ in 0..<(r.byte() % 4) {
            let sizes: FrameSizeRange
            switch r.byte() % 3 {
            case 0: sizes = .discrete(r.size())
            case 1: sizes = .stepwise(min: r.size(), max: r.size(), step: r.size())
            default: sizes = .continuous(min: r.size(), max: r.size())
            }
            var rates: [FrameRateRange] = []
            for _ in 0..<(r.byte() % 4) {
                switch r.byte() % 3 {
                case 0: rates.append(FrameRateRange(discrete: FrameRate(interval: r.fraction())))
                case 1: rates.append(FrameRateRange(minInterval: r.fraction(), maxInterval: r.fraction(), step: r.fraction()))
                default: rates.append(FrameRateRange(minInterval: r.fraction(), maxInterval: r.fraction(), step: nil))
                }
            }
            options.append(FrameSizeOption(sizes: sizes, frameRateRanges: rates))
        }
        formats.append(CaptureFormat(pixelFormat: pixelFormat, description: pixelFormat.name,
                                     isCompressed: pixelFormat.isCompressed, isEmulated: false, frameSizes: options))
    }
    let flags = r.byte()
    let request = FormatRequest(
        pixelFormat: flags & 1 != 0 ? pixelFormats[r.byte() % pixelFormats.count] : nil,
        size: flags & 2 != 0 ? r.size() : nil,
        frameRate: flags & 4 != 0 ? FrameRate(r.fraction()) : nil,
        preference: FormatPreference.allCases[(flags >> 3) % FormatPreference.allCases.count])
    if let choice = try? FormatSelection.choose(request, from: formats, device: "/dev/video-fuzz") {
        precondition(formats.contains { $0.pixelFormat == choice.pixelFormat }, "chose a format not offered")
        if let wanted = request.pixelFormat { precondition(choice.pixelFormat == wanted, "ignored the requested format") }
        _ = choice.adjustments.map(\.description)
    }
    return 0
}
