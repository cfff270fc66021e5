import MediaDevices

/// FFmpeg's names for what the package captures: its pixel formats (`-pixel_format` of
/// rawvideo, `av_get_pix_fmt`), for the play hints and the audio-and-video files.
package enum FFmpegNames {
    /// FFmpeg's name of a raw pixel format it can play back; nil where it has none.
    package static func pixelFormat(_ format: PixelFormat) -> String? { pixelFormats[format] }

    private static let pixelFormats: [PixelFormat: String] = [
        .yuyv: "yuyv422", .uyvy: "uyvy422", .yvyu: "yvyu422", .nv12: "nv12", .nv21: "nv21", .nv16: "nv16",
        .nv12m: "nv12", .grey: "gray", .rgb24: "rgb24", .bgr24: "bgr24", .xbgr32: "bgr0", .abgr32: "bgra",
        .xrgb32: "0rgb", .argb32: "argb", .rgb565: "rgb565le", .yu12: "yuv420p",
    ]
}
