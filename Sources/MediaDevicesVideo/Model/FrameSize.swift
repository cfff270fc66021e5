import MediaDevicesCore
/// A rectangle of pixels: a region of a frame.
public struct Rect: Hashable, Sendable, Codable, CustomStringConvertible {
    /// Left edge in pixels.
    public var x: Int
    /// Top edge in pixels.
    public var y: Int
    /// Width in pixels.
    public var width: Int
    /// Height in pixels.
    public var height: Int

    /// A rectangle at (`x`, `y`) of `width` by `height` pixels.
    public init(x: Int, y: Int, width: Int, height: Int) {
        self.x = x; self.y = y; self.width = width; self.height = height
    }

    /// The rectangle covering all of `size`.
    package init(_ size: Size) { self.init(x: 0, y: 0, width: size.width, height: size.height) }

    /// The rectangle's size.
    public var size: Size { Size(width: width, height: height) }

    /// `"WxH+X+Y"`, as X11 geometry and v4l2-ctl's selection print it.
    public var description: String { "\(width)x\(height)+\(x)+\(y)" }

    /// Parses `"WxH+X+Y"` (or `"WxH"` for a rectangle at the origin).
    package init?(parsing text: String) {
        let parts = text.split(separator: "+", omittingEmptySubsequences: false)
        guard parts.count == 1 || parts.count == 3, let size = Size(parsing: String(parts[0])) else { return nil }
        var x = 0, y = 0
        if parts.count == 3 {
            guard let px = Int(parts[1]), let py = Int(parts[2]), px >= 0, py >= 0 else { return nil }
            x = px; y = py
        }
        self.init(x: x, y: y, width: size.width, height: size.height)
    }
}

/// A width and height in pixels.
public struct Size: Hashable, Sendable, CustomStringConvertible, Codable {
    /// Width in pixels.
    public var width: Int
    /// Height in pixels.
    public var height: Int

    /// A size.
    public init(width: Int, height: Int) { self.width = width; self.height = height }

    /// Parses `"640x480"`.
    package init?(parsing text: String) {
        let parts = text.lowercased().split(separator: "x")
        guard parts.count == 2, let w = Int(parts[0]), let h = Int(parts[1]), w > 0, h > 0 else { return nil }
        self.init(width: w, height: h)
    }

    /// Common presets, named as AVFoundation's session presets are.
    public static let vga = Size(width: 640, height: 480)
    /// 1280x720.
    public static let hd720 = Size(width: 1280, height: 720)
    /// 1920x1080.
    public static let hd1080 = Size(width: 1920, height: 1080)

    /// The number of pixels; `Int.max` when that overflows (a driver may report u32 x u32
    /// sizes, a user may ask for any; found by the fuzzer in `FormatSelection`).
    public var area: Int {
        let (product, overflow) = width.multipliedReportingOverflow(by: height)
        return overflow ? Int.max : product
    }

    /// `"640x480"`.
    public var description: String { "\(width)x\(height)" }
}

/// The frame sizes a pixel format offers, as the driver reports one entry of
/// `VIDIOC_ENUM_FRAMESIZES`: one discrete size, or a stepwise or continuous range.
public enum FrameSizeRange: Hashable, Sendable, CustomStringConvertible {
    /// Exactly this size.
    case discrete(Size)
    /// Sizes from `min` to `max` in steps of `step` (width and height independently).
    case stepwise(min: Size, max: Size, step: Size)
    /// Any size from `min` to `max`.
    case continuous(min: Size, max: Size)

    /// Whether `size` is one of the sizes offered.
    public func contains(_ size: Size) -> Bool {
        switch self {
        case .discrete(let only):
            return only == size
        case .stepwise(let min, let max, let step):
            return size.width >= min.width && size.width <= max.width && size.height >= min.height
                && size.height <= max.height && (size.width - min.width) % Swift.max(step.width, 1) == 0
                && (size.height - min.height) % Swift.max(step.height, 1) == 0
        case .continuous(let min, let max):
            return size.width >= min.width && size.width <= max.width && size.height >= min.height
                && size.height <= max.height
        }
    }

    /// The largest size offered.
    public var maxSize: Size {
        switch self {
        case .discrete(let size): return size
        case .stepwise(_, let max, _), .continuous(_, let max): return max
        }
    }

    /// `"640x480"` or `"16x16 - 1920x1080 step 2x2"`.
    public var description: String {
        switch self {
        case .discrete(let size): return size.description
        case .stepwise(let min, let max, let step): return "\(min) - \(max) step \(step)"
        case .continuous(let min, let max): return "\(min) - \(max)"
        }
    }
}
