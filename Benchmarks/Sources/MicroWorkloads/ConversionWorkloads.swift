import MediaDevices

/// YUYV 640x480, as a webcam delivers it uncompressed, through `FrameConverter` to I420 and to
/// BGRA (libyuv's ARGB: B, G, R, A in memory). I420 is V4L2's YU12.
let conversionWorkloads: [Workload] = [PixelFormat.yu12, .argb].map { output in
    // The V4L2 fourcc as text ("YU12", "BA24"): the workload's name the thresholds know.
    let fourCC = String(decoding: (0..<4).map { UInt8(truncatingIfNeeded: output.v4l2Code >> ($0 * 8)) }, as: UTF8.self)
    return Workload("Convert YUYV 640x480 to \(fourCC)") {
        let image = TestImage(yuyv: .vga)
        let converter = try FrameConverter(output: OutputFormat(output), device: "benchmark")
        let frame = image.frame
        return {
            try withExtendedLifetime(image) {
                try converter.convert(frame) { sink($0.plane(0).bytes.baseAddress) }
            }
        }
    }
}
