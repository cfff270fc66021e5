import XCTest
@testable import MediaDevices
@testable import MediaDevicesAudio
@testable import MediaDevicesVideo
@testable import MediaDevicesCore

/// The orientation maths on readings of a full turn in the screen's plane (m/s², noisy as a
/// laptop's sensor is; computed from the angle with ±0.15 m/s² noise, not taken from hardware),
/// against states worked out by hand from iio-sensor-proxy's rules.
final class OrientationCalculatorTests: XCTestCase {
    /// (clockwise turn in degrees, x, y, z).
    static let turn: [(Int, Double, Double, Double)] = [
        (0, -0.08, -9.93, -0.06), (15, 2.44, -9.61, -0.06), (30, 5.03, -8.41, 0.16), (45, 6.85, -6.93, -0.13),
        (60, 8.40, -5.02, -0.17), (75, 9.60, -2.44, 0.18), (90, 9.90, -0.09, -0.11), (105, 9.51, 2.61, 0.21),
        (120, 8.61, 4.78, 0.06), (135, 6.99, 6.94, -0.19), (150, 4.90, 8.37, 0.26), (165, 2.65, 9.49, -0.12),
        (180, 0.12, 9.83, 0.23), (195, -2.43, 9.48, -0.05), (210, -4.88, 8.48, -0.20), (225, -7.00, 7.03, -0.27),
        (240, -8.63, 4.94, -0.13), (255, -9.47, 2.53, -0.09), (270, -9.66, -0.09, -0.05), (285, -9.56, -2.50, -0.13),
        (300, -8.54, -4.83, -0.11), (315, -6.92, -6.82, -0.24), (330, -5.04, -8.58, 0.16), (345, -2.50, -9.55, -0.10),
        (360, -0.10, -9.82, -0.27),
    ]

    /// Past 35° towards an edge it is up; at 45° (a corner) portrait wins.
    static func expected(_ degrees: Int) -> DeviceOrientation {
        switch degrees {
        case 0...30, 330...360: return .normal
        case 45...135: return .leftUp
        case 150...210: return .bottomUp
        default: return .rightUp
        }
    }

    func testFullTurn() {
        var calculator = OrientationCalculator()
        XCTAssertNil(calculator.orientation, "undefined before any reading")
        for (degrees, x, y, z) in Self.turn {
            XCTAssertEqual(calculator.update(AccelerationReading(x: x, y: y, z: z)), Self.expected(degrees), "turned \(degrees)°")
        }
    }

    func testLyingFlatKeepsTheLastStateAndStartsUndefined() {
        var calculator = OrientationCalculator()
        XCTAssertNil(calculator.update(AccelerationReading(x: 0.1, y: -0.2, z: 9.8)), "flat from the start: undefined")
        calculator.update(AccelerationReading(x: -9.8, y: 0.3, z: 0.2))
        XCTAssertEqual(calculator.orientation, .rightUp)
        // Laid down on the table, then lifted by 20° towards the top edge: still right-up.
        XCTAssertEqual(calculator.update(AccelerationReading(x: 0.1, y: 0.0, z: 9.81)), .rightUp)
        XCTAssertEqual(calculator.update(AccelerationReading(x: 0.2, y: -3.36, z: 9.2)), .rightUp)
        // Lifted to 40°: now the top edge is up.
        XCTAssertEqual(calculator.update(AccelerationReading(x: 0.2, y: -6.3, z: 7.5)), .normal)
    }

    func testThresholdIsStrictlyMoreThan35Degrees() {
        // atan(x / |(y, z)|) in whole degrees, computed at iio-sensor-proxy's 1 g = 256 scale.
        let at35 = AccelerationReading(x: 9.81 * sin(35 * .pi / 180), y: -9.81 * cos(35 * .pi / 180), z: 0)
        let at37 = AccelerationReading(x: 9.81 * sin(37 * .pi / 180), y: -9.81 * cos(37 * .pi / 180), z: 0)
        XCTAssertEqual(OrientationCalculator.leans(at35).x, 35)
        XCTAssertEqual(OrientationCalculator.next(after: .normal, at35), .normal)
        XCTAssertEqual(OrientationCalculator.next(after: .normal, at37), .leftUp)
    }

    func testMountMatrix() throws {
        let matrix = try XCTUnwrap(MountMatrix("0, -1, 0; 1, 0, 0; 0, 0, 1"))
        XCTAssertEqual(matrix.description, "0, -1, 0; 1, 0, 0; 0, 0, 1")
        // A sensor mounted turned: it reads gravity along its x where the device's -y is.
        let device = matrix.apply(AccelerationReading(x: 9.81, y: 0, z: 0))
        XCTAssertEqual(device, AccelerationReading(x: 0, y: 9.81, z: 0))
        XCTAssertEqual(MountMatrix("1.5,0,0;0,1,0;0,0,-1")?.rows[0][0], 1.5)
        XCTAssertNil(MountMatrix("1, 0; 0, 1"), "two rows")
        XCTAssertNil(MountMatrix("0, 0, 0; 0, 0, 0; 0, 0, 0"), "all zeros (an unset hwdb entry)")
        XCTAssertNil(MountMatrix("a, 0, 0; 0, 1, 0; 0, 0, 1"))
        XCTAssertEqual(MountMatrix.identity.apply(AccelerationReading(x: 1, y: 2, z: 3)), AccelerationReading(x: 1, y: 2, z: 3))
    }

    func testDeviceToVideoOrientationAndComposition() {
        XCTAssertEqual(DeviceOrientation.allCases.map(\.videoOrientation), [.up, .down, .left, .right])
        XCTAssertEqual(VideoOrientation.left.adding(.left), .down)
        XCTAssertEqual(VideoOrientation.right.adding(.left), .up)
        XCTAssertEqual(VideoOrientation.down.adding(.right), .left)
        XCTAssertEqual(VideoOrientation.left.mirrored, .right)
        XCTAssertEqual(VideoOrientation.down.mirrored, .down)
        // Mount 90° (sensor rotation 270 ccw = .left) plus device left-up on a front camera.
        let frame = FrameOrientation(mount: .left, tracker: FixedOrientationTracker(.left), facesUser: true)
        XCTAssertEqual(frame.current, .up, "a front camera sees the turn mirrored")
        XCTAssertEqual(FrameOrientation(mount: .left, tracker: FixedOrientationTracker(.left), facesUser: false).current, .down)
        XCTAssertEqual(FrameOrientation(mount: .right, tracker: nil, facesUser: false).current, .right)
    }

    func testDisplayOrientationFromPanelAndPlane() {
        typealias P = DisplayOrientationTracker.Properties
        XCTAssertEqual(DisplayOrientationTracker.orientation(P(connector: "eDP-1")), .up)
        XCTAssertEqual(DisplayOrientationTracker.orientation(P(connector: "eDP-1", panelOrientation: "Right Side Up")), .right)
        XCTAssertEqual(DisplayOrientationTracker.orientation(P(connector: "eDP-1", panelOrientation: "Normal", planeRotation: 2)), .right,
                       "DRM_MODE_ROTATE_90 is counter-clockwise")
        XCTAssertEqual(DisplayOrientationTracker.orientation(P(connector: "eDP-1", panelOrientation: "Right Side Up", planeRotation: 8)), .up,
                       "a compositor that compensates the panel with ROTATE_270 gives an upright picture")
        XCTAssertEqual(DisplayOrientationTracker.orientation(P(connector: "eDP-1", panelOrientation: "Upside Down", planeRotation: 1 | 16)), .down,
                       "ROTATE_0 with a reflection bit")
    }

    func testFixedTrackerChanges() async {
        let tracker = FixedOrientationTracker(.up)
        var changes = tracker.orientationChanges().makeAsyncIterator()
        let first = await changes.next()
        XCTAssertEqual(first, .up)
        tracker.set(.up)  // no change: not reported
        tracker.set(.right)
        let second = await changes.next()
        XCTAssertEqual(second, .right)
        XCTAssertEqual(tracker.orientation, .right)
    }
}
