import MediaDevices

/// `GET /api/cameras/{id}/formats`: the formats as the driver lists them, sizes and rates as
/// discrete lists or ranges (the page offers the usual sizes and rates inside a range).
struct FormatListing: Encodable, Sendable {
    /// One pixel format.
    struct Format: Encodable, Sendable {
        let pixelFormat: String, description: String, isCompressed: Bool
        let sizes: [SizeOption]
    }
    /// One size entry: a single size, or a range with a step.
    struct SizeOption: Encodable, Sendable {
        let width: Int?, height: Int?
        let minWidth: Int?, minHeight: Int?, maxWidth: Int?, maxHeight: Int?, stepWidth: Int?, stepHeight: Int?
        let rates: [RateOption]
    }
    /// One rate entry: a single rate, or a range (frames per second, as "30" or "30000/1001").
    struct RateOption: Encodable, Sendable {
        let fps: String?, minFPS: String?, maxFPS: String?
    }
    let camera: String
    let formats: [Format]

    init(camera: String, formats: [CaptureFormat]) {
        self.camera = camera
        self.formats = formats.map { format in
            Format(pixelFormat: format.pixelFormat.name, description: format.description, isCompressed: format.isCompressed,
                   sizes: format.frameSizes.map(FormatListing.sizeOption))
        }
    }

    private static func sizeOption(_ option: FrameSizeOption) -> SizeOption {
        let rates = option.frameRateRanges.map { range in
            range.minFrameRate == range.maxFrameRate   // one rate
                ? RateOption(fps: range.minFrameRate.framesPerSecond.description, minFPS: nil, maxFPS: nil)
                : RateOption(fps: nil, minFPS: range.minFrameRate.framesPerSecond.description,
                             maxFPS: range.maxFrameRate.framesPerSecond.description)
        }
        switch option.sizes {
        case .discrete(let size):
            return SizeOption(width: size.width, height: size.height, minWidth: nil, minHeight: nil, maxWidth: nil,
                              maxHeight: nil, stepWidth: nil, stepHeight: nil, rates: rates)
        case .stepwise(let min, let max, let step):
            return SizeOption(width: nil, height: nil, minWidth: min.width, minHeight: min.height, maxWidth: max.width,
                              maxHeight: max.height, stepWidth: step.width, stepHeight: step.height, rates: rates)
        case .continuous(let min, let max):
            return SizeOption(width: nil, height: nil, minWidth: min.width, minHeight: min.height, maxWidth: max.width,
                              maxHeight: max.height, stepWidth: 1, stepHeight: 1, rates: rates)
        }
    }
}
