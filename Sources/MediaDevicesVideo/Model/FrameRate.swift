import MediaDevicesCore
/// A frame rate in frames per second, exact. The corresponding V4L2 value is the frame
/// interval (`timeperframe`), its reciprocal.
public struct FrameRate: Hashable, Sendable, Comparable, CustomStringConvertible, Codable {
    /// Frames per second, e.g. `30000/1001`.
    public let framesPerSecond: Fraction

    /// A rate of `framesPerSecond`.
    public init(_ framesPerSecond: Fraction) { self.framesPerSecond = framesPerSecond }

    /// A whole number of frames per second.
    public init(_ framesPerSecond: Int) { self.init(Fraction(framesPerSecond)) }

    /// The rate whose frame interval (seconds per frame) is `interval`.
    public init(interval: Fraction) { self.init(interval.reciprocal) }

    /// Seconds per frame (V4L2 `timeperframe`).
    public var frameInterval: Fraction { framesPerSecond.reciprocal }

    /// Parses `"30"`, `"30000/1001"` or `"29.97"` (decimals are taken exactly: `2997/100`).
    public init?(parsing text: String) {
        func digits(_ part: Substring) -> Bool { !part.isEmpty && part.allSatisfy { $0.isASCII && $0.isNumber } }
        let fraction = text.split(separator: "/", omittingEmptySubsequences: false)
        let decimal = text.split(separator: ".", omittingEmptySubsequences: false)
        if fraction.count == 2, fraction.allSatisfy(digits), let n = Int(fraction[0]), let d = Int(fraction[1]), n > 0, d > 0 {
            self.init(Fraction(n, d))
        } else if digits(Substring(text)), let whole = Int(text), whole > 0 {
            self.init(whole)
        } else if decimal.count == 2, decimal.allSatisfy(digits), decimal[1].count <= 9,
                  let whole = Int(decimal[0]), let frac = Int(decimal[1]) {
            var scale = 1
            for _ in 0..<decimal[1].count { scale *= 10 }
            // Too many digits for an Int (found by the fuzzer: "28888888888838888.888") is not a rate.
            let (shifted, overflow) = whole.multipliedReportingOverflow(by: scale)
            let (numerator, carry) = shifted.addingReportingOverflow(frac)
            guard !overflow, !carry, numerator > 0 else { return nil }
            self.init(Fraction(numerator, scale))
        } else {
            return nil
        }
    }

    /// Orders by frames per second.
    public static func < (lhs: FrameRate, rhs: FrameRate) -> Bool { lhs.framesPerSecond < rhs.framesPerSecond }

    /// `"30 fps"`, `"30000/1001 fps"`.
    public var description: String { "\(framesPerSecond) fps" }
}

/// A range of frame rates a format supports (AVFoundation's `AVFrameRateRange`), built from a
/// V4L2 frame interval entry: a single rate (discrete), a range with a step (stepwise), or any
/// rate in a range (continuous).
public struct FrameRateRange: Hashable, Sendable, CustomStringConvertible {
    /// The lowest rate (from the longest interval).
    public let minFrameRate: FrameRate
    /// The highest rate (from the shortest interval).
    public let maxFrameRate: FrameRate
    /// The interval step of a stepwise range, `nil` for discrete and continuous ranges.
    package let intervalStep: Fraction?
    /// What kind of V4L2 entry this came from.
    package let kind: Kind

    /// The kind of V4L2 frame interval entry (`V4L2_FRMIVAL_TYPE_*`).
    package enum Kind: String, Sendable {
        /// One rate (`V4L2_FRMIVAL_TYPE_DISCRETE`).
        case discrete
        /// Rates on a grid of intervals (`V4L2_FRMIVAL_TYPE_STEPWISE`).
        case stepwise
        /// Any rate in the range (`V4L2_FRMIVAL_TYPE_CONTINUOUS`).
        case continuous
    }

    /// A single rate.
    package init(discrete rate: FrameRate) {
        minFrameRate = rate; maxFrameRate = rate; intervalStep = nil; kind = .discrete
    }

    /// The rates whose intervals lie between `minInterval` and `maxInterval`, in `step`s
    /// (`step == nil` means continuous).
    package init(minInterval: Fraction, maxInterval: Fraction, step: Fraction?) {
        minFrameRate = FrameRate(interval: maxInterval)
        maxFrameRate = FrameRate(interval: minInterval)
        intervalStep = step
        kind = step == nil ? .continuous : .stepwise
    }

    /// The shortest frame interval.
    package var minFrameInterval: Fraction { maxFrameRate.frameInterval }
    /// The longest frame interval.
    package var maxFrameInterval: Fraction { minFrameRate.frameInterval }

    /// Whether `rate` is one of the rates this range offers.
    public func contains(_ rate: FrameRate) -> Bool {
        guard rate >= minFrameRate, rate <= maxFrameRate else { return false }
        guard let step = intervalStep, step.numerator > 0 else { return true }
        // The interval must be minInterval + k * step for a whole k. Checked arithmetic: a
        // driver's u32 fractions overflow Int products (found by the fuzzer).
        guard step.denominator > 0,
              let offset = rate.frameInterval.checkedAdding(Fraction(-minFrameInterval.numerator, minFrameInterval.denominator)),
              let steps = offset.checkedMultiplied(by: Fraction(step.denominator, step.numerator)) else { return false }
        return steps.denominator == 1
    }

    /// The highest rate in this range that is at or below `rate`, if any.
    package func bestRate(atOrBelow rate: FrameRate) -> FrameRate? {
        if rate < minFrameRate { return nil }
        if rate >= maxFrameRate { return maxFrameRate }
        guard let step = intervalStep, step.numerator > 0 else {
            return kind == .continuous ? rate : nil
        }
        // Smallest interval >= 1/rate on the grid minInterval + k * step.
        // Checked arithmetic: a driver's u32 fractions (or a 0 denominator) overflow or divide by
        // zero in Int (found by the fuzzer); then no grid rate is offered.
        let wanted = rate.frameInterval
        guard step.denominator > 0,
              let offset = wanted.checkedAdding(Fraction(-minFrameInterval.numerator, minFrameInterval.denominator)),
              let stepsNeeded = offset.checkedMultiplied(by: Fraction(step.denominator, step.numerator)),
              stepsNeeded.denominator > 0, stepsNeeded.numerator >= 0 else { return nil }
        let k = stepsNeeded.numerator / stepsNeeded.denominator + (stepsNeeded.numerator % stepsNeeded.denominator == 0 ? 0 : 1)
        guard let grid = Fraction(k).checkedMultiplied(by: step), let interval = minFrameInterval.checkedAdding(grid) else { return nil }
        return interval <= maxFrameInterval ? FrameRate(interval: interval) : nil
    }

    /// `"30 fps"` or `"1-30 fps"`.
    public var description: String {
        kind == .discrete ? maxFrameRate.description
            : "\(minFrameRate.framesPerSecond)-\(maxFrameRate.framesPerSecond) fps"
    }
}
