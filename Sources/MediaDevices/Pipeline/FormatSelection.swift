/// The choice `FormatSelection` makes from a source's supported formats: a pixel format, a size
/// and a rate, with the reasons wherever the request could not be met as asked.
public struct FormatChoice: Sendable, Hashable {
    /// The chosen pixel format.
    public let pixelFormat: PixelFormat
    /// The chosen size.
    public let size: Size
    /// The chosen rate, `nil` if the format lists none.
    public let frameRate: FrameRate?
    /// What differs from the request, and why.
    public let adjustments: [FormatAdjustment]
}

/// Chooses a pixel format, size and rate from a capability table. Pure: no device is touched,
/// so the rules are unit-tested over made-up tables.
///
/// Rules: a requested pixel format must be offered (else `.unsupportedFormat`); without one, the
/// first raw format offering the size wins, then compressed ones. A requested size that is not
/// offered is replaced by the nearest offered size. The rate is the highest at or below the
/// requested one (the exact rate when it is offered); if none is at or below, the lowest offered.
public enum FormatSelection {
    /// The size used when the request names none.
    public static let defaultSize = Size.vga

    /// Chooses for `request` among `formats`; `device` names the source in errors.
    public static func choose(_ request: FormatRequest, from formats: [CaptureFormat], device: String) throws -> FormatChoice {
        guard !formats.isEmpty else {
            throw MediaDevicesError(.unsupportedFormat, device: device, operation: "choose format",
                                    detail: "The device lists no formats; it may be busy or not a capture device")
        }
        var adjustments: [FormatAdjustment] = []
        let candidates: [CaptureFormat]
        if let wanted = request.pixelFormat {
            candidates = formats.filter { $0.pixelFormat.fourCC == wanted.fourCC }
            guard !candidates.isEmpty else {
                let offered = formats.map { $0.pixelFormat.name }.joined(separator: ", ")
                throw MediaDevicesError(.unsupportedFormat, device: device, operation: "choose format",
                                        detail: "\(wanted.name) is not offered; the device offers \(offered)")
            }
        } else {
            candidates = formats.filter { !$0.isCompressed && $0.pixelFormat.isKnown }
                + formats.filter { $0.isCompressed || !$0.pixelFormat.isKnown }
        }

        let wantedSize = request.size ?? defaultSize
        // Some drivers do not implement VIDIOC_ENUM_FRAMESIZES: ask for the size directly and
        // let the driver's answer to S_FMT and S_PARM (recorded as adjustments) decide.
        if let silent = candidates.first, candidates.allSatisfy({ $0.frameSizes.isEmpty }) {
            return FormatChoice(pixelFormat: silent.pixelFormat, size: wantedSize, frameRate: request.frameRate,
                                adjustments: [])
        }
        var chosen: (format: CaptureFormat, option: FrameSizeOption)?
        for format in candidates {
            if let option = format.frameSizes.first(where: { $0.sizes.contains(wantedSize) }) {
                chosen = (format, option)
                break
            }
        }
        var size = wantedSize
        if chosen == nil {
            // Nearest offered size of the first candidate: smallest difference in area, then in width.
            let format = candidates[0]
            var best: (option: FrameSizeOption, size: Size, cost: (Int, Int))?
            for option in format.frameSizes {
                let near = nearest(in: option.sizes, to: wantedSize)
                let cost = (abs(near.area - wantedSize.area), abs(near.width - wantedSize.width))
                if best == nil || cost < best!.cost { best = (option, near, cost) }
            }
            guard let best else {
                throw MediaDevicesError(.unsupportedFormat, device: device, operation: "choose format",
                                        detail: "\(format.pixelFormat.name) lists no frame sizes")
            }
            chosen = (format, best.option)
            size = best.size
            adjustments.append(FormatAdjustment(field: .size, requested: request.size?.description ?? "any",
                                                chosen: size.description,
                                                reason: "\(wantedSize) is not offered in \(format.pixelFormat.name); nearest offered size"))
        }
        let (format, option) = chosen!
        if request.pixelFormat == nil {
            adjustments.insert(FormatAdjustment(field: .pixelFormat, requested: "any", chosen: format.pixelFormat.name,
                                                reason: format.isCompressed ? "no raw format offers \(size)" : "first raw format offering \(size)"),
                               at: 0)
        }
        let rate = chooseRate(request.frameRate, from: option.frameRateRanges, adjustments: &adjustments)
        return FormatChoice(pixelFormat: format.pixelFormat, size: size, frameRate: rate, adjustments: adjustments)
    }

    /// The best rate at or below `desired` among `ranges`; the highest if `desired` is nil; the
    /// lowest offered if every offered rate is above `desired`.
    public static func chooseRate(_ desired: FrameRate?, from ranges: [FrameRateRange],
                                  adjustments: inout [FormatAdjustment]) -> FrameRate? {
        guard let highest = ranges.map(\.maxFrameRate).max() else { return nil }
        guard let desired else { return highest }
        if let best = ranges.compactMap({ $0.bestRate(atOrBelow: desired) }).max() {
            if best != desired {
                adjustments.append(FormatAdjustment(field: .frameRate, requested: desired.description, chosen: best.description,
                                                    reason: "\(desired) is not offered; best rate at or below it"))
            }
            return best
        }
        let lowest = ranges.map(\.minFrameRate).min()!
        adjustments.append(FormatAdjustment(field: .frameRate, requested: desired.description, chosen: lowest.description,
                                            reason: "every offered rate is above \(desired); lowest offered"))
        return lowest
    }

    /// The size in `range` nearest to `size`.
    static func nearest(in range: FrameSizeRange, to size: Size) -> Size {
        switch range {
        case .discrete(let only):
            return only
        case .continuous(let min, let max):
            return Size(width: Swift.min(Swift.max(size.width, min.width), max.width),
                        height: Swift.min(Swift.max(size.height, min.height), max.height))
        case .stepwise(let min, let max, let step):
            func snap(_ value: Int, _ low: Int, _ high: Int, _ step: Int) -> Int {
                let step = Swift.max(step, 1)
                let lastOnGrid = low + (high - low) / step * step  // the max may be off the grid
                let clamped = Swift.min(Swift.max(value, low), lastOnGrid)
                return low + (clamped - low + step / 2) / step * step
            }
            return Size(width: snap(size.width, min.width, max.width, step.width),
                        height: snap(size.height, min.height, max.height, step.height))
        }
    }
}
