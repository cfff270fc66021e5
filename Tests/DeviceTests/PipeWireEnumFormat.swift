import Foundation
import MediaDevices

/// What `pw-cli enum-params ID EnumFormat` prints, read as a set of one line per format, size
/// and rates ("YUY2 640x480 1/1,2/1,…", "mjpg 1280x720 range 1/1-30/1", "BGR 636x480 none"):
/// the reference the PipeWire camera listing is checked against.
enum PipeWireEnumFormat {
    /// The lines for pw-cli's `output`.
    static func lines(_ output: String) -> Set<String> {
        var result: Set<String> = []
        var key = "", choice = "None"
        var subtype = "", formats: [String] = [], sizes: [String] = [], sizeChoice = "None"
        var rates: [String] = [], rateChoice = "None", formatChoice = "None"
        func alternatives(_ values: [String], _ choice: String) -> [String] {
            choice == "Enum" && values.count > 1 ? Array(values.dropFirst()) : Array(values.prefix(1))
        }
        func flush() {
            guard !subtype.isEmpty else { return }
            let names = subtype == "raw" ? alternatives(formats, formatChoice) : [subtype]
            let sizeTexts = sizeChoice == "Range" && sizes.count >= 3 ? ["range \(sizes[1])-\(sizes[2])"]
                : sizeChoice == "Step" && sizes.count >= 4 ? ["step \(sizes[1])-\(sizes[2])/\(sizes[3])"] : alternatives(sizes, sizeChoice)
            let rateText = rates.isEmpty ? "none"
                : (rateChoice == "Range" || rateChoice == "Step") && rates.count >= 3 ? "range \(rates[1])-\(rates[2])"
                : alternatives(rates, rateChoice).joined(separator: ",")
            for name in names { for size in sizeTexts { result.insert("\(name) \(size) \(rateText)") } }
            subtype = ""; formats = []; sizes = []; rates = []; sizeChoice = "None"; rateChoice = "None"; formatChoice = "None"
        }
        for raw in output.split(separator: "\n") {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("Object:") { flush(); continue }
            if line.hasPrefix("Prop: key ") {
                key = String(line.dropFirst("Prop: key Spa:Pod:Object:Param:Format:".count).prefix { $0 != " " })
                choice = "None"
                continue
            }
            if line.hasPrefix("Choice: type Spa:Enum:Choice:") {
                choice = String(line.dropFirst("Choice: type Spa:Enum:Choice:".count).prefix { $0 != "," })
                switch key {
                case "Video:format": formatChoice = choice
                case "Video:size": sizeChoice = choice
                case "Video:framerate": rateChoice = choice
                default: break
                }
                continue
            }
            let enumName = line.range(of: "(Spa:Enum:").map { String(line[$0.upperBound...].drop { $0 != ":" }.dropFirst().prefix { $0 != ")" }) }
            switch key {
            case "mediaSubtype": if let enumName { subtype = enumName }
            // SPA's v4l2 plugin lists V4L2 formats it has no SPA name for as format 0, which
            // pw-cli prints "((null))" and MediaDevices reports as "unknown".
            case "Video:format": if line.hasPrefix("Id ") { formats.append(enumName ?? "unknown") }
            case "Video:size": if line.hasPrefix("Rectangle ") { sizes.append(String(line.dropFirst("Rectangle ".count))) }
            case "Video:framerate": if line.hasPrefix("Fraction ") { rates.append(String(line.dropFirst("Fraction ".count))) }
            default: break
            }
        }
        flush()
        return result
    }

    /// The same lines for a node as MediaDevices listed it (the formats it has a pixel format
    /// for; their SPA names are the descriptions' first word).
    static func lines(_ node: PipeWireCameraNode) -> Set<String> {
        var result: Set<String> = []
        for format in node.formats {
            let name = String(format.description.prefix { $0 != " " })
            for option in format.frameSizes {
                let size: String
                switch option.sizes {
                case .discrete(let s): size = "\(s.width)x\(s.height)"
                case .continuous(let min, let max): size = "range \(min.width)x\(min.height)-\(max.width)x\(max.height)"
                case .stepwise(let min, let max, let step): size = "step \(min.width)x\(min.height)-\(max.width)x\(max.height)/\(step.width)x\(step.height)"
                }
                func text(_ rate: FrameRate) -> String { "\(rate.framesPerSecond.numerator)/\(rate.framesPerSecond.denominator)" }
                let rates = option.frameRateRanges.isEmpty ? "none"
                    : option.frameRateRanges.first?.kind == .continuous
                    ? "range \(text(option.frameRateRanges[0].minFrameRate))-\(text(option.frameRateRanges[0].maxFrameRate))"
                    : option.frameRateRanges.map { text($0.minFrameRate) }.joined(separator: ",")
                result.insert("\(name) \(size) \(rates)")
            }
        }
        return result
    }
}
