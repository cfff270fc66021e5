import MediaDevicesCore
/// An exact non-negative rational number, kept in lowest terms. Frame rates and frame
/// intervals are fractions (V4L2 `struct v4l2_fract`), never floating point.
public struct Fraction: Hashable, Sendable, CustomStringConvertible, Codable {
    /// The numerator, in lowest terms.
    public let numerator: Int
    /// The denominator, in lowest terms; never zero for a valid fraction (`0/0` marks "unset").
    public let denominator: Int

    /// Creates `numerator / denominator` reduced to lowest terms. `x/0` is kept as given so
    /// that an unset driver value stays visible.
    public init(_ numerator: Int, _ denominator: Int) {
        let divisor = Fraction.gcd(abs(numerator), abs(denominator))
        if divisor > 1, denominator != 0 {
            self.numerator = numerator / divisor
            self.denominator = denominator / divisor
        } else {
            self.numerator = numerator
            self.denominator = denominator
        }
    }

    /// A whole number.
    public init(_ value: Int) { self.init(value, 1) }

    /// Whether the denominator is non-zero.
    package var isValid: Bool { denominator != 0 }

    /// The reciprocal (`1/30` for `30/1`).
    package var reciprocal: Fraction { Fraction(denominator, numerator) }

    /// The nearest `Double`, for display and measurement only.
    public var doubleValue: Double { Double(numerator) / Double(denominator) }

    /// Compares by cross-multiplication, without rounding. (Not `Comparable`: an app compares
    /// ``FrameRate``s; the library orders intervals and scales with these.)
    package static func < (lhs: Fraction, rhs: Fraction) -> Bool {
        lhs.numerator.multipliedFullWidth(by: rhs.denominator) < rhs.numerator.multipliedFullWidth(by: lhs.denominator)
    }
    /// `!(rhs < lhs)`.
    package static func <= (lhs: Fraction, rhs: Fraction) -> Bool { !(rhs < lhs) }
    /// `rhs < lhs`.
    package static func > (lhs: Fraction, rhs: Fraction) -> Bool { rhs < lhs }
    /// `!(lhs < rhs)`.
    package static func >= (lhs: Fraction, rhs: Fraction) -> Bool { !(lhs < rhs) }

    /// The exact sum.
    package static func + (lhs: Fraction, rhs: Fraction) -> Fraction {
        Fraction(lhs.numerator * rhs.denominator + rhs.numerator * lhs.denominator, lhs.denominator * rhs.denominator)
    }

    /// The exact product.
    package static func * (lhs: Fraction, rhs: Fraction) -> Fraction {
        Fraction(lhs.numerator * rhs.numerator, lhs.denominator * rhs.denominator)
    }

    /// The exact sum, `nil` if it overflows `Int` (driver-reported u32 fractions can).
    func checkedAdding(_ other: Fraction) -> Fraction? {
        let (a, o1) = numerator.multipliedReportingOverflow(by: other.denominator)
        let (b, o2) = other.numerator.multipliedReportingOverflow(by: denominator)
        let (d, o3) = denominator.multipliedReportingOverflow(by: other.denominator)
        let (n, o4) = a.addingReportingOverflow(b)
        return o1 || o2 || o3 || o4 ? nil : Fraction(n, d)
    }

    /// The exact product, `nil` if it overflows `Int`.
    func checkedMultiplied(by other: Fraction) -> Fraction? {
        let (n, o1) = numerator.multipliedReportingOverflow(by: other.numerator)
        let (d, o2) = denominator.multipliedReportingOverflow(by: other.denominator)
        return o1 || o2 ? nil : Fraction(n, d)
    }

    /// `"30000/1001"`, or `"25"` for whole numbers.
    public var description: String { denominator == 1 ? "\(numerator)" : "\(numerator)/\(denominator)" }

    static func gcd(_ a: Int, _ b: Int) -> Int {
        var (a, b) = (a, b)
        while b != 0 { (a, b) = (b, a % b) }
        return a
    }
}
