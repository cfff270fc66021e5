import MediaDevicesCore
/// A pixel format: its V4L2 fourcc, the matching DRM fourcc where there is one, and its memory
/// layout. Formats the library does not know are kept with their fourcc and no layout.
public struct PixelFormat: Hashable, Sendable, CustomStringConvertible {
    /// The V4L2 pixel format code (`V4L2_PIX_FMT_*`).
    package let fourCC: FourCC
    /// The DRM format code (`DRM_FORMAT_*`) with the same memory layout, if there is one.
    package let drmFourCC: FourCC?
    /// A short name (`"YUYV"`, `"NV12"`, `"YU12"`); the fourcc string for unknown formats.
    public let name: String
    /// The memory layout; `nil` when the format is not in the library's table.
    package let layout: PlaneLayout?
    /// Whether the format holds luma and chroma (YCbCr) rather than RGB or grey.
    public let isYUV: Bool

    /// The V4L2 pixel format code (`V4L2_PIX_FMT_*`): four characters, the first in the lowest byte.
    public var v4l2Code: UInt32 { fourCC.rawValue }
    /// The DRM format code (`DRM_FORMAT_*`) with the same memory layout, if there is one (what
    /// EGL's `EGL_LINUX_DRM_FOURCC_EXT` takes).
    public var drmCode: UInt32? { drmFourCC?.rawValue }
    /// Whether the library knows this format's layout.
    public var isKnown: Bool { layout != nil }
    /// Whether frames are compressed (MJPEG, JPEG).
    public var isCompressed: Bool { layout?.isCompressed ?? false }

    /// The name, as printed in lists.
    public var description: String { name }

    init(_ fourCC: FourCC, drm: FourCC?, name: String, layout: PlaneLayout?, yuv: Bool) {
        self.fourCC = fourCC
        self.drmFourCC = drm
        self.name = name
        self.layout = layout
        self.isYUV = yuv
    }

    /// The format with this V4L2 code: the table's entry, or an unknown format that keeps the code.
    package init(v4l2 fourCC: FourCC) {
        self = PixelFormat.byV4L2Code[fourCC] ?? PixelFormat(fourCC, drm: nil, name: fourCC.description,
                                                               layout: nil, yuv: false)
    }

    /// The format with this V4L2 code (`V4L2_PIX_FMT_*`, ``v4l2Code``): the table's entry, or an
    /// unknown format that keeps the code.
    public init(v4l2Code: UInt32) { self.init(v4l2: FourCC(rawValue: v4l2Code)) }

    /// The format with this DRM code (`DRM_FORMAT_*`, ``drmCode``), if the table has one.
    public init?(drmCode: UInt32) { self.init(drm: FourCC(rawValue: drmCode)) }

    /// The format with this DRM code, if the table has one.
    package init?(drm fourCC: FourCC) {
        guard let format = PixelFormat.all.first(where: { $0.drmFourCC == fourCC }) else { return nil }
        self = format
    }

    /// The format named by a fourcc (`"YUYV"`, `"MJPG"`) or a common alias (`"I420"`, `"MJPEG"`,
    /// `"ARGB"`), case-sensitive for fourccs; `nil` if the text is neither.
    public init?(named text: String) {
        if let format = PixelFormat.all.first(where: { $0.name == text || $0.fourCC.description == text }) {
            self = format
        } else if let alias = PixelFormat.aliases[text.uppercased()] {
            self = alias
        } else if text.utf8.count == 4 {
            self.init(v4l2: FourCC(text))
        } else {
            return nil
        }
    }
}
