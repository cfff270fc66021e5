import MediaDevicesCore
import CYUV

/// A clockwise rotation applied to frames by the pixel pipeline.
public enum FrameRotation: Int, Sendable, Hashable, CaseIterable {
    /// No rotation.
    case none = 0
    /// A quarter turn clockwise.
    case clockwise90 = 90
    /// A half turn.
    case upsideDown = 180
    /// Three quarter turns clockwise (a quarter turn counter-clockwise).
    case clockwise270 = 270

    /// The rotation of `degrees` clockwise (a multiple of 90, negative allowed); others give `nil`.
    public init?(degrees: Int) {
        self.init(rawValue: ((degrees % 360) + 360) % 360)
    }

    /// This rotation followed by `other`.
    public func adding(_ other: FrameRotation) -> FrameRotation {
        FrameRotation(degrees: rawValue + other.rawValue)!
    }

    /// Whether width and height trade places.
    public var swapsDimensions: Bool { self == .clockwise90 || self == .clockwise270 }

    /// libyuv's rotation mode.
    var libyuvMode: RotationMode {
        switch self {
        case .none: return kRotate0
        case .clockwise90: return kRotate90
        case .upsideDown: return kRotate180
        case .clockwise270: return kRotate270
        }
    }
}
