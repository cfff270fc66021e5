import MediaDevicesCore
import Foundation

/// Which edge of a device is up, as iio-sensor-proxy (and so GNOME and KDE) names it.
public enum DeviceOrientation: String, Sendable, CaseIterable {
    /// Upright in its natural orientation (landscape for a laptop or tablet).
    case normal
    /// Upside down.
    case bottomUp = "bottom-up"
    /// Turned 90° clockwise: the left edge is up.
    case leftUp = "left-up"
    /// Turned 90° counter-clockwise: the right edge is up.
    case rightUp = "right-up"

    /// The rotation a renderer applies to a picture from a back camera fixed to the device:
    /// turned clockwise (left edge up), the picture must be turned clockwise too.
    public var videoOrientation: VideoOrientation {
        switch self {
        case .normal: return .up
        case .leftUp: return .left
        case .bottomUp: return .down
        case .rightUp: return .right
        }
    }
}

/// One accelerometer reading in m/s², in the device's frame once the mount matrix has been
/// applied: x to the right edge, y to the top edge, z out of the screen. In the kernel's IIO
/// convention (used by the udev hwdb and iio-sensor-proxy) a reading at rest points the way
/// gravity pulls, so upright in the natural orientation reads about (0, -9.81, 0) and left
/// edge up about (9.81, 0, 0).
public struct AccelerationReading: Sendable, Hashable, Encodable {
    /// Along the device's x axis.
    public var x: Double
    /// Along the device's y axis.
    public var y: Double
    /// Along the device's z axis.
    public var z: Double

    /// A reading of (`x`, `y`, `z`) m/s².
    public init(x: Double, y: Double, z: Double) { self.x = x; self.y = y; self.z = z }
}

/// A 3×3 matrix that maps a sensor's axes onto the device's, as the kernel's `mount_matrix`
/// sysfs attribute and the udev hwdb's `ACCEL_MOUNT_MATRIX` give it: three rows separated by
/// `;`, three numbers each separated by `,` (`"0, -1, 0; 1, 0, 0; 0, 0, 1"`).
package struct MountMatrix: Sendable, Hashable, CustomStringConvertible {
    /// The rows.
    package let rows: [[Double]]

    /// The identity (sensor axes are the device's).
    package static let identity = MountMatrix(unchecked: [[1, 0, 0], [0, 1, 0], [0, 0, 1]])

    private init(unchecked rows: [[Double]]) { self.rows = rows }

    /// Parses the kernel/hwdb text form; `nil` if it is not three rows of three numbers or
    /// is all zeros.
    package init?(_ text: String) {
        let rows = text.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ";").map {
            $0.split(separator: ",").map { Double($0.trimmingCharacters(in: .whitespaces)) }
        }
        guard rows.count == 3, rows.allSatisfy({ $0.count == 3 && $0.allSatisfy { $0 != nil } }) else { return nil }
        let values = rows.map { $0.map { $0! } }
        guard values.joined().contains(where: { $0 != 0 }) else { return nil }
        self.rows = values
    }

    /// `matrix × (x, y, z)`.
    package func apply(_ reading: AccelerationReading) -> AccelerationReading {
        func row(_ r: [Double]) -> Double { r[0] * reading.x + r[1] * reading.y + r[2] * reading.z }
        return AccelerationReading(x: row(rows[0]), y: row(rows[1]), z: row(rows[2]))
    }

    /// `"1, 0, 0; 0, 1, 0; 0, 0, 1"`.
    package var description: String {
        rows.map { $0.map { $0 == $0.rounded() ? String(Int($0)) : String($0) }.joined(separator: ", ") }.joined(separator: "; ")
    }
}

/// Turns accelerometer readings into a ``DeviceOrientation`` with the states and hysteresis of
/// iio-sensor-proxy: an edge is up once the device leans more than 35° towards it, the
/// portrait axis (x) checked first, so a corner (both axes past 35°) counts as portrait; while
/// no edge leans more than 35° (lying flat, or held near flat) the last orientation stays.
/// That dead band is the whole hysteresis: iio-sensor-proxy's extra "same axis" limit of 5°
/// sits inside a branch that needs more than 35°, so it never applies, and it is left out here.
package struct OrientationCalculator: Sendable {
    /// The lean in degrees past which a side counts as up.
    package static let threshold = 35

    /// The orientation so far (`nil` until one side was clearly up).
    package private(set) var orientation: DeviceOrientation?

    /// Starts from `orientation` (`nil`: undefined).
    package init(orientation: DeviceOrientation? = nil) { self.orientation = orientation }

    /// Feeds one reading (m/s², device frame) and returns the orientation after it.
    @discardableResult
    package mutating func update(_ reading: AccelerationReading) -> DeviceOrientation? {
        orientation = OrientationCalculator.next(after: orientation, reading)
        return orientation
    }

    /// The lean towards the x axis and towards the y axis, in whole degrees: positive when the
    /// right (x) or top (y) edge points down (gravity pulls along the positive axis).
    package static func leans(_ reading: AccelerationReading) -> (x: Int, y: Int) {
        // iio-sensor-proxy works in units of 1 g = 256 and truncates to integers first; doing
        // the same keeps our answers identical to it at the boundaries.
        let x = Double(Int(reading.x * 256 / 9.81)), y = Double(Int(reading.y * 256 / 9.81)), z = Double(Int(reading.z * 256 / 9.81))
        func degrees(_ along: Double, _ a: Double, _ b: Double) -> Int {
            let across = (a * a + b * b).squareRoot()
            if along == 0 { return 0 }
            return Int((atan(along / across) * 180 / .pi).rounded())
        }
        return (degrees(x, y, z), degrees(y, x, z))
    }

    /// The orientation after `reading` given the one before.
    package static func next(after previous: DeviceOrientation?, _ reading: AccelerationReading) -> DeviceOrientation? {
        let lean = leans(reading)
        // The portrait axis (x) first; the landscape axis only if x is within the threshold.
        if abs(lean.x) > threshold {
            return lean.x > 0 ? .leftUp : .rightUp
        }
        if abs(lean.y) > threshold {
            return lean.y > 0 ? .bottomUp : .normal
        }
        return previous
    }
}
