import MediaDevicesCore
/// The choice `FormatSelection` makes from a source's supported formats: a pixel format, a size
/// and a rate, with the reasons wherever the request could not be met as asked.
package struct FormatChoice: Sendable, Hashable {
    /// The chosen pixel format.
    package let pixelFormat: PixelFormat
    /// The chosen size.
    package let size: Size
    /// The chosen rate, `nil` if the format lists none.
    package let frameRate: FrameRate?
    /// What differs from the request, and why.
    package let adjustments: [FormatAdjustment]
}

/// Chooses a pixel format, size and rate from a capability table. Pure: no device is touched,
/// so the rules are unit-tested over made-up tables.
///
/// Rules: a requested pixel format must be offered (else `.unsupportedFormat`); without one, the
/// formats that give the size at the wanted rate are ranked by the request's `preference`
/// (``FormatPreference``), and the reason for the choice is recorded. The wanted rate is the
/// requested one, or without one the highest any format offers at that size, capped at 30 fps.
/// When no format gives size and rate, the first raw format offering the size wins, then
/// compressed ones. A requested size that is not
/// offered is replaced by the nearest offered size. The rate is the highest at or below the
/// requested one (the exact rate when it is offered); if none is at or below, the lowest offered.
package enum FormatSelection {
    /// The size used when the request names none.
    package static let defaultSize = Size.vga

    /// Chooses for `request` among `formats`; `device` names the source in errors.
    package static func choose(_ request: FormatRequest, from formats: [CaptureFormat], device: String) throws(MediaDevicesError) -> FormatChoice {
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
            let raw = formats.filter { !$0.isCompressed && $0.isConvertible }
            let allowed = formats.filter { !raw.contains($0) && (request.preference != .rawOnly || !$0.isCompressed) }
            // What the pipeline cannot read comes last: chosen only when nothing else gives the size.
            candidates = raw + allowed.filter(\.isConvertible) + allowed.filter { !$0.isConvertible }
            guard !candidates.isEmpty else {
                throw MediaDevicesError(.unsupportedFormat, device: device, operation: "choose format",
                                        detail: "no raw format is offered and the request allows raw formats only")
            }
        }

        let wantedSize = request.size ?? defaultSize
        // Some drivers do not implement VIDIOC_ENUM_FRAMESIZES: ask for the size directly and
        // let the driver's answer to S_FMT and S_PARM (recorded as adjustments) decide.
        if let silent = candidates.first, candidates.allSatisfy({ $0.frameSizes.isEmpty }) {
            return FormatChoice(pixelFormat: silent.pixelFormat, size: wantedSize, frameRate: request.frameRate,
                                adjustments: [])
        }
        var chosen: (format: CaptureFormat, option: FrameSizeOption)?
        var preferenceReason: String?
        if request.pixelFormat == nil, let ranked = rank(candidates, size: wantedSize, request: request) {
            chosen = (ranked.format, ranked.option)
            preferenceReason = ranked.reason
        }
        for format in candidates where chosen == nil {
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
            let reason = preferenceReason
                ?? (format.isCompressed ? "no raw format offers \(size)" : "first raw format offering \(size)")
            adjustments.insert(FormatAdjustment(field: .pixelFormat, requested: "any", chosen: format.pixelFormat.name,
                                                reason: reason),
                               at: 0)
        }
        let rate = chooseRate(request.frameRate, from: option.frameRateRanges, adjustments: &adjustments)
        return FormatChoice(pixelFormat: format.pixelFormat, size: size, frameRate: rate, adjustments: adjustments)
    }

    /// The rate a request wants at `size`: its own, or the highest any candidate offers there,
    /// capped at 30 fps (a video-call rate; a higher one is asked for explicitly).
    static func wantedRate(_ request: FormatRequest, _ offers: [(CaptureFormat, FrameSizeOption)]) -> FrameRate? {
        if let rate = request.frameRate { return rate }
        guard let highest = offers.flatMap({ $0.1.frameRateRanges.map(\.maxFrameRate) }).max() else { return nil }
        return min(highest, FrameRate(30))
    }

    /// The candidates that give `size` at the wanted rate, ranked by the request's preference;
    /// the best, with the reason. `nil` when none gives both (the caller falls back).
    static func rank(_ candidates: [CaptureFormat], size: Size, request: FormatRequest)
        -> (format: CaptureFormat, option: FrameSizeOption, reason: String)? {
        let offers = candidates.compactMap { format in
            format.frameSizes.first(where: { $0.sizes.contains(size) }).map { (format, $0) }
        }
        let rate = wantedRate(request, offers)
        func reaches(_ option: FrameSizeOption) -> Bool {
            guard let rate, let best = option.frameRateRanges.map(\.maxFrameRate).max() else { return true }
            return best >= rate
        }
        let reaching = offers.filter { reaches($0.1) }
        // Never a format the pipeline cannot read while one it can read does the job.
        let readable = reaching.filter { $0.0.isConvertible }
        let able = readable.isEmpty ? reaching : readable
        let rateText = rate.map { " at \($0) fps" } ?? ""
        let raw = able.filter { !$0.0.isCompressed }
        switch request.preference {
        case .automatic, .rawOnly:
            if let first = raw.first {
                return (first.0, first.1, "first raw format giving \(size)\(rateText)")
            }
            guard request.preference == .automatic, let compressed = able.first else { return nil }
            let rawBest = offers.filter { !$0.0.isCompressed }.compactMap { offer in
                offer.1.frameRateRanges.map(\.maxFrameRate).max().map { "\(offer.0.pixelFormat.name) at most \($0) fps" }
            }
            let why = rawBest.isEmpty ? "no raw format offers \(size)" : "no raw format gives \(size)\(rateText) (\(rawBest.joined(separator: ", ")))"
            return (compressed.0, compressed.1, "\(why); \(compressed.0.pixelFormat.name) is decoded by the pipeline")
        case .lowestBandwidth:
            guard let best = able.min(by: { bytesPerPixel($0.0) < bytesPerPixel($1.0) }) else { return nil }
            return (best.0, best.1, "fewest bytes per frame giving \(size)\(rateText) (about \(bytesPerPixel(best.0)) bytes per pixel)")
        case .bestQuality:
            guard let best = able.max(by: { quality($0.0) < quality($1.0) }) else { return nil }
            return (best.0, best.1, "most colour information giving \(size)\(rateText)")
        }
    }

    /// The grey formats the table knows (luma only, whatever their sample size).
    static let greyFormats: Set<PixelFormat> = [.grey, .y10, .y12, .y16, .y16BigEndian]

    /// Bytes per pixel over the bus: exact for raw formats, an estimate for compressed ones
    /// (MJPEG at webcam quality is about 1.6 bits per pixel).
    static func bytesPerPixel(_ format: CaptureFormat) -> Double {
        guard !format.isCompressed, let layout = format.pixelFormat.layout else { return 0.2 }
        return layout.planes.reduce(0.0) {
            $0 + Double($1.bytesPerSample) / Double($1.horizontalSubsampling * $1.verticalSubsampling)
        }
    }

    /// A rank of colour information: compressed lowest, grey next, then formats with fewer than
    /// 8 bits a component, then chroma resolution (Bayer, one colour sample per pixel, ranks as
    /// 4:2:0). A packed 4:4:4 pixel in 2 bytes (YUV444, YUV555, YUV565, RGB565, RGB555,
    /// RGB444: 4 to 6 bits a component) ranks below 8-bit 4:2:0: 16 to 64 levels of luma band
    /// visibly, where subsampled chroma does not.
    static func quality(_ format: CaptureFormat) -> Double {
        guard !format.isCompressed, let layout = format.pixelFormat.layout else { return 0 }
        if greyFormats.contains(format.pixelFormat) { return 0.1 }
        if PixelFormat.bayerFormats.contains(format.pixelFormat) { return 1.25 }
        guard format.pixelFormat.isYUV || layout.planes[0].bytesPerSample >= 2 else { return 0.1 }
        let (h, v) = layout.chromaSubsampling
        if layout.planes.count == 1 && h * v == 1 && layout.planes[0].bytesPerSample < 3 || format.pixelFormat == .bgr666 { return 1.1 }
        return 1 + 1 / Double(h * v)
    }

    /// The best rate at or below `desired` among `ranges`; the highest if `desired` is nil; the
    /// lowest offered if every offered rate is above `desired`.
    package static func chooseRate(_ desired: FrameRate?, from ranges: [FrameRateRange],
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
