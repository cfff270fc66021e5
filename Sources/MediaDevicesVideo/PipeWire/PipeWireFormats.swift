#if PipeWire
import MediaDevicesCore
import CPipeWire

/// A node's `EnumFormat` entries (one per SPA format and size, as the CPipeWire shim expands
/// them) as ``CaptureFormat``s: grouped by pixel format in the node's order, sizes in the node's
/// order without repeats, rates as the node gives them (a list: discrete rates; a range:
/// continuous; none: no `frameRateRanges`).
struct PipeWireFormats {
    /// The formats MediaDevices has a pixel format for.
    private(set) var formats: [CaptureFormat] = []
    /// Whether any entry gave rates.
    private(set) var givesFrameRates = false
    /// SPA names of the formats without a pixel format (each once).
    private(set) var unmapped: [String] = []

    init(_ entries: [cpw_format_entry]) {
        var order: [UInt32] = []
        var names: [UInt32: String] = [:]
        var compressed: [UInt32: Bool] = [:]
        var sizes: [UInt32: [FrameSizeOption]] = [:]
        for var entry in entries {
            let name = withUnsafeBytes(of: &entry.format_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard entry.fourcc != 0 else {
                if !unmapped.contains(name) { unmapped.append(name) }
                continue
            }
            if sizes[entry.fourcc] == nil {
                order.append(entry.fourcc)
                names[entry.fourcc] = name
                compressed[entry.fourcc] = entry.subtype != CPW_SUBTYPE_RAW.rawValue
            }
            let rates = Self.rates(of: &entry)
            if !rates.isEmpty { givesFrameRates = true }
            let option = FrameSizeOption(sizes: Self.sizes(of: entry), frameRateRanges: rates)
            if !(sizes[entry.fourcc]?.contains(option) ?? false) { sizes[entry.fourcc, default: []].append(option) }
        }
        formats = order.map { fourcc in
            CaptureFormat(pixelFormat: PixelFormat(v4l2: FourCC(rawValue: fourcc)), description: "\(names[fourcc] ?? "") (PipeWire)",
                          isCompressed: compressed[fourcc] ?? false, isEmulated: false, frameSizes: sizes[fourcc] ?? [])
        }
    }

    /// Whether the libcamera nodes of a PipeWire server of `serverVersion` label their RGB
    /// formats with the bytes in reverse order. Until 1.1.81 PipeWire's libcamera plugin named
    /// libcamera's formats (DRM's, little-endian: `BGR888` is bytes R, G, B) by the SPA format of
    /// the same name (SPA's name bytes in memory order: `BGR` is bytes B, G, R), so a libcamera
    /// camera's red and blue came out swapped (Debian 12's 0.3.65 does this; vimc's colour bars
    /// show it). An unknown version counts as an old one.
    static func libcameraLabelsRGBReversed(serverVersion: String) -> Bool {
        let parts = serverVersion.split(separator: ".").map { Int($0) ?? 0 }
        guard parts.count >= 3 else { return true }
        return (parts[0], parts[1], parts[2]) < (1, 1, 81)
    }

    /// `entry` with the pixel format its bytes really are: the byte-reversed SPA format's fourcc
    /// (its `spa_format` stays what the node lists, which is what a stream asks the node for).
    static func byteReversed(_ entry: cpw_format_entry) -> cpw_format_entry {
        guard entry.subtype == CPW_SUBTYPE_RAW.rawValue else { return entry }
        let reversed = cpw_spa_format_byte_reversed(entry.spa_format)
        guard reversed != entry.spa_format else { return entry }
        var entry = entry
        entry.fourcc = cpw_fourcc_of_spa_format(reversed)
        return entry
    }

    private static func sizes(of entry: cpw_format_entry) -> FrameSizeRange {
        let min = Size(width: Int(entry.width), height: Int(entry.height))
        let max = Size(width: Int(entry.max_width), height: Int(entry.max_height))
        switch entry.size_kind {
        case CPW_SIZE_RANGE.rawValue: return .continuous(min: min, max: max)
        case CPW_SIZE_STEP.rawValue:
            return .stepwise(min: min, max: max, step: Size(width: Int(entry.step_width), height: Int(entry.step_height)))
        default: return .discrete(min)
        }
    }

    /// The entry's rates; a rate of 0 (PipeWire's "variable") or with a zero denominator is no rate.
    private static func rates(of entry: inout cpw_format_entry) -> [FrameRateRange] {
        let count = Int(entry.rate_count)
        let given: [Fraction] = withUnsafeBytes(of: &entry.rates) { raw in
            let rates = raw.bindMemory(to: cpw_rate.self)
            return (0..<min(count, rates.count)).compactMap { i in
                rates[i].num == 0 || rates[i].denom == 0 ? nil : Fraction(Int(rates[i].num), Int(rates[i].denom))
            }
        }
        switch entry.rate_kind {
        case CPW_RATES_LIST.rawValue:
            return given.map { FrameRateRange(discrete: FrameRate($0)) }
        case CPW_RATES_RANGE.rawValue where given.count == 2:
            return [FrameRateRange(minInterval: given[1].reciprocal, maxInterval: given[0].reciprocal, step: nil)]
        default:
            return []
        }
    }
}

extension PipeWireCameraNode {
    /// The SPA video format a stream asks this node for to get `pixelFormat`'s bytes.
    func spaFormat(of pixelFormat: PixelFormat) -> UInt32 {
        let named = cpw_spa_format_of_fourcc(pixelFormat.v4l2Code)
        return labelsRGBReversed ? cpw_spa_format_byte_reversed(named) : named
    }
}
#endif
