import XCTest
@testable import MediaDevices
@testable import MediaDevicesAudio
@testable import MediaDevicesVideo
@testable import MediaDevicesCore

final class FractionTests: XCTestCase {
    func testReduction() {
        let half = Fraction(2, 4)
        XCTAssertEqual(half.numerator, 1)
        XCTAssertEqual(half.denominator, 2)
        XCTAssertEqual(Fraction(60000, 2002), Fraction(30000, 1001))
        XCTAssertEqual(Fraction(30000, 1001).numerator, 30000)  // already lowest terms
        XCTAssertEqual(Fraction(0, 5).denominator, 1)
        XCTAssertEqual(Fraction(25).denominator, 1)
    }

    func testUnsetValueStaysVisible() {
        XCTAssertFalse(Fraction(0, 0).isValid)
        XCTAssertFalse(Fraction(6, 0).isValid)
        XCTAssertEqual(Fraction(6, 0).numerator, 6)
        XCTAssertTrue(Fraction(1, 30).isValid)
    }

    func testComparisonByCrossMultiplication() {
        XCTAssertTrue(Fraction(30000, 1001) < Fraction(30))
        XCTAssertTrue(Fraction(30000, 1001) > Fraction(2997, 100))  // 29.97002997 > 29.97
        XCTAssertTrue(Fraction(1, 30) < Fraction(1, 29))
        XCTAssertFalse(Fraction(2, 4) < Fraction(1, 2))
        XCTAssertFalse(Fraction(1, 2) < Fraction(2, 4))
        // Values whose doubles are equal but whose fractions are not.
        let big = Int(1) << 60
        XCTAssertTrue(Fraction(big, big + 1) < Fraction(big + 1, big + 2))
    }

    func testReciprocal() {
        XCTAssertEqual(Fraction(30000, 1001).reciprocal, Fraction(1001, 30000))
        XCTAssertEqual(Fraction(30).reciprocal, Fraction(1, 30))
    }

    func testSumAndProduct() {
        XCTAssertEqual(Fraction(1, 30) + Fraction(1, 30), Fraction(1, 15))
        XCTAssertEqual(Fraction(1, 2) + Fraction(1, 3), Fraction(5, 6))
        XCTAssertEqual(Fraction(2, 3) * Fraction(3, 4), Fraction(1, 2))
        XCTAssertEqual(Fraction(3) * Fraction(1, 30), Fraction(1, 10))
        XCTAssertEqual(Fraction(1, 10) + Fraction(-1, 30), Fraction(1, 15))
    }

    func testDescription() {
        XCTAssertEqual(Fraction(30000, 1001).description, "30000/1001")
        XCTAssertEqual(Fraction(50, 2).description, "25")
        XCTAssertEqual(Fraction(1, 4).doubleValue, 0.25)
    }
}

final class FrameRateParsingTests: XCTestCase {
    func testWholeNumber() {
        XCTAssertEqual(FrameRate(parsing: "30")?.framesPerSecond, Fraction(30, 1))
    }

    func testFraction() {
        let rate = FrameRate(parsing: "30000/1001")
        XCTAssertEqual(rate?.framesPerSecond.numerator, 30000)
        XCTAssertEqual(rate?.framesPerSecond.denominator, 1001)
        XCTAssertEqual(FrameRate(parsing: "60/2")?.framesPerSecond, Fraction(30, 1))
    }

    func testDecimalIsExact() {
        let rate = FrameRate(parsing: "29.97")
        XCTAssertEqual(rate?.framesPerSecond.numerator, 2997)
        XCTAssertEqual(rate?.framesPerSecond.denominator, 100)
        XCTAssertEqual(FrameRate(parsing: "7.5")?.framesPerSecond, Fraction(15, 2))
        XCTAssertEqual(FrameRate(parsing: "0.5")?.framesPerSecond, Fraction(1, 2))
    }

    func testRejectsNonsense() {
        XCTAssertNil(FrameRate(parsing: "0"))
        XCTAssertNil(FrameRate(parsing: "abc"))
        XCTAssertNil(FrameRate(parsing: ""))
        XCTAssertNil(FrameRate(parsing: "-30"))
        XCTAssertNil(FrameRate(parsing: "30/0"))
        XCTAssertNil(FrameRate(parsing: "0/5"))
        XCTAssertNil(FrameRate(parsing: "0.0"))
        XCTAssertNil(FrameRate(parsing: "1.2.3"))
    }

    /// A sign inside a decimal is not a rate: "-0.5" must not parse as +0.5 fps, nor
    /// "29.-7" as 28.93 fps.
    func testRejectsSignedDecimals() {
        XCTAssertNil(FrameRate(parsing: "-0.5"), "-0.5 parsed as a positive rate")
        XCTAssertNil(FrameRate(parsing: "29.-7"), "29.-7 parsed as a rate")
        XCTAssertNil(FrameRate(parsing: "29.+7"), "29.+7 parsed as a rate")
    }

    func testIntervalIsReciprocal() {
        XCTAssertEqual(FrameRate(30).frameInterval, Fraction(1, 30))
        XCTAssertEqual(FrameRate(interval: Fraction(1001, 30000)), FrameRate(Fraction(30000, 1001)))
        XCTAssertLessThan(FrameRate(Fraction(30000, 1001)), FrameRate(30))
        XCTAssertEqual(FrameRate(Fraction(30000, 1001)).description, "30000/1001 fps")
    }
}
