import MediaDevicesCore
// Framebuffer formats that have a DRM code but no V4L2 one: their `fourCC` is the DRM code.

extension PixelFormat {
    /// 32-bit, little-endian word X:2 R:10 G:10 B:10 (DRM XRGB2101010 'XR30'; deep-colour screens).
    public static let xrgb2101010 = PixelFormat("XR30", drm: "XR30", name: "XRGB2101010", layout: .packed(4), yuv: false)
    /// 32-bit, little-endian word A:2 R:10 G:10 B:10 (DRM ARGB2101010 'AR30').
    public static let argb2101010 = PixelFormat("AR30", drm: "AR30", name: "ARGB2101010", layout: .packed(4), yuv: false)

    /// Formats known by their DRM code only (not in `PixelFormat.all`, which pairs V4L2 codes).
    static let drmOnly: [PixelFormat] = [.xrgb2101010, .argb2101010]

    /// The format of a framebuffer with DRM code `code`: the table's entry, one of the DRM-only
    /// formats, or `nil`.
    static func framebufferFormat(drm code: UInt32) -> PixelFormat? {
        let fourCC = FourCC(rawValue: code)
        return PixelFormat(drm: fourCC) ?? drmOnly.first { $0.drmFourCC == fourCC }
    }
}
