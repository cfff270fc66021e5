import TestSupport
import XCTest
@testable import MediaDevices
@testable import MediaDevicesAudio
@testable import MediaDevicesVideo
@testable import MediaDevicesCore

/// Every raw source format into NV12, I420 and ARGB, against FFmpeg's (swscale's) conversion
/// of the same pixels. Sources have padded rows, so strides are honoured or the test fails.
///
/// Tolerances, as PSNR against FFmpeg on a picture with gradients and hard-edged blocks (the
/// measured values are printed as a `figure:` line): libyuv and swscale filter chroma
/// differently at hard edges (libyuv point-samples chroma when upsampling; swscale interpolates),
/// so YUV→YUV must reach 45 dB, RGB→YUV 40 dB, YUV→RGB 33 dB, and RGB→RGB must be exact.
/// A swapped chroma plane or a wrong matrix scores below 30 dB.
final class ConverterReferenceTests: XCTestCase {
    struct Case: Sendable {
        let format: PixelFormat
        /// The FFmpeg pixel format the source bytes are made in.
        let ffmpeg: String
        /// Turns FFmpeg's tight bytes into the tight bytes of `format` (a byte or plane shuffle
        /// for formats FFmpeg does not write).
        var reshape: @Sendable ([UInt8]) -> [UInt8] = { $0 }
        /// A filter for FFmpeg's reference conversion (grey is full range: keep it so; going
        /// through yuv420p works around swscale writing zero chroma for full-range gray → nv12).
        var filter: String?
    }

    /// The lowest PSNR accepted for a conversion from `source` to `target`.
    static func minimumPSNR(_ source: PixelFormat, _ target: PixelFormat) -> Double {
        switch (source.isYUV, target == .argb) {
        case (true, false): return 45
        case (false, false): return 40
        case (true, true): return 33
        case (false, true): return .infinity
        }
    }

    static let w = ReferenceImages.width, h = ReferenceImages.height

    static func swapPlanes420(_ bytes: [UInt8]) -> [UInt8] {
        let y = w * h, c = (w / 2) * (h / 2)
        return Array(bytes[0..<y] + bytes[(y + c)..<(y + 2 * c)] + bytes[y..<(y + c)])
    }

    static func swapChromaBytes(_ bytes: [UInt8], first: Int, second: Int) -> [UInt8] {
        var out = bytes
        for i in stride(from: 0, to: out.count, by: 4) { out.swapAt(i + first, i + second) }
        return out
    }

    /// yuv422p → NV16 (or NV61 with `swapped`).
    static func interleave422(_ bytes: [UInt8], swapped: Bool) -> [UInt8] {
        let y = w * h, c = (w / 2) * h
        var out = Array(bytes[0..<y])
        for i in 0..<c {
            let u = bytes[y + i], v = bytes[y + c + i]
            out += swapped ? [v, u] : [u, v]
        }
        return out
    }

    static let cases: [Case] = [
        Case(format: .yuyv, ffmpeg: "yuyv422"),
        Case(format: .uyvy, ffmpeg: "uyvy422"),
        Case(format: .yvyu, ffmpeg: "yvyu422"),
        Case(format: .vyuy, ffmpeg: "uyvy422", reshape: { swapChromaBytes($0, first: 0, second: 2) }),
        Case(format: .nv12, ffmpeg: "nv12"),
        Case(format: .nv21, ffmpeg: "nv21"),
        Case(format: .nv16, ffmpeg: "yuv422p", reshape: { interleave422($0, swapped: false) }),
        Case(format: .nv61, ffmpeg: "yuv422p", reshape: { interleave422($0, swapped: true) }),
        Case(format: .yu12, ffmpeg: "yuv420p"),
        Case(format: .yv12, ffmpeg: "yuv420p", reshape: swapPlanes420),
        Case(format: .nv12m, ffmpeg: "nv12"),
        Case(format: .nv21m, ffmpeg: "nv21"),
        Case(format: .yuv420m, ffmpeg: "yuv420p"),
        Case(format: .grey, ffmpeg: "gray", filter: "scale=in_range=full:out_range=full,format=yuv420p"),
        Case(format: .rgb24, ffmpeg: "rgb24"),
        Case(format: .bgr24, ffmpeg: "bgr24"),
        Case(format: .abgr32, ffmpeg: "bgra"),
        Case(format: .xbgr32, ffmpeg: "bgr0"),
        Case(format: .argb32, ffmpeg: "argb"),
        Case(format: .xrgb32, ffmpeg: "0rgb"),
        Case(format: .rgba32, ffmpeg: "rgba"),
        Case(format: .rgbx32, ffmpeg: "rgb0"),
        Case(format: .bgra32, ffmpeg: "abgr"),
        Case(format: .bgrx32, ffmpeg: "0bgr"),
        Case(format: .rgb565, ffmpeg: "rgb565le"),
    ]

    static let targets: [(format: PixelFormat, ffmpeg: String)] = [(.yu12, "yuv420p"), (.argb, "bgra")]

    /// I420 → NV12 by interleaving the chroma planes: the NV12 reference is FFmpeg's I420 output
    /// rearranged (swscale's direct NV12 paths differ from its own I420 ones at hard edges, and
    /// write zero chroma for full-range grey).
    static func interleave420(_ bytes: [UInt8]) -> [UInt8] {
        let y = w * h, c = (w / 2) * (h / 2)
        var out = Array(bytes[0..<y])
        for i in 0..<c { out += [bytes[y + i], bytes[y + c + i]] }
        return out
    }

    func testEverySourceFormatAgainstFFmpeg() throws {
        var report: [String] = []
        for testCase in Self.cases {
            let made = try ReferenceImages.convert(ReferenceImages.picture, from: "rgb24", to: [testCase.ffmpeg])[0]
            var references = try ReferenceImages.convert(made, from: testCase.ffmpeg, to: Self.targets.map(\.ffmpeg),
                                                         filter: testCase.filter)
            references.append(Self.interleave420(references[0]))
            let image = PaddedImage(tight: testCase.reshape(made), pixelFormat: testCase.format,
                                    width: Self.w, height: Self.h)
            for (target, reference) in zip(Self.targets + [(.nv12, "nv12")], references) {
                let converter = try FrameConverter(output: OutputFormat(target.format))
                let ours = try image.withFrame { frame in try converter.convert(frame) { tightBytes($0) } }
                XCTAssertEqual(ours.count, reference.count, "\(testCase.format) → \(target.format): size")
                guard ours.count == reference.count else { continue }
                let alpha = target.format == .argb ? 4 : nil as Int?
                let (maximum, mean) = difference(ours, reference, skipAlphaOf: alpha)
                let quality = psnr(ours, reference, skipAlphaOf: alpha)
                report.append("\(testCase.format.name)→\(target.ffmpeg): \(String(format: "%.1f", quality)) dB, max \(maximum) mean \(String(format: "%.2f", mean))")
                XCTAssertGreaterThanOrEqual(quality, Self.minimumPSNR(testCase.format, target.format),
                                            "\(testCase.format) → \(target.format): \(quality) dB against FFmpeg (max difference \(maximum))")
            }
        }
        print("figure: converter vs ffmpeg: " + report.joined(separator: "; "))
    }
}
