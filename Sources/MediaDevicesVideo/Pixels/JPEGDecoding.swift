import MediaDevicesCore
/// How MJPEG and JPEG frames are decoded: which inverse DCT libjpeg-turbo runs.
///
/// The default, `.fast`, is what GStreamer's `jpegdec` (`idct-method=ifast`) and libyuv's
/// `MJPGToI420` (WebRTC's path for MJPEG webcams) use: libjpeg's fast integer IDCT. It costs
/// noticeably less per frame; its samples differ from the accurate one's by at most a level or
/// two (on the tests' reference picture, 46 % of them, 51.5 dB PSNR), invisible in a video call.
/// `.accurate` is libjpeg's own default (`djpeg`): pick it when the pixels are measured (vision
/// pipelines, archival) or must equal another libjpeg decode exactly.
public enum JPEGDecoding: String, Sendable, Hashable, CaseIterable {
    /// libjpeg's fast integer IDCT (`JDCT_IFAST`; TurboJPEG's `TJFLAG_FASTDCT`).
    case fast
    /// libjpeg's accurate integer IDCT (`JDCT_ISLOW`), libjpeg's default.
    case accurate
}
