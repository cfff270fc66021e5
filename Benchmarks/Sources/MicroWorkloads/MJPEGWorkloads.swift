import MediaDevices

/// A 640x480 JPEG (4:2:0, quality 90) decoded by `FrameConverter` (libjpeg-turbo) to I420: full
/// size, and to 320x240 (half: a DCT-scaled decode). Per frame, what is left after the first
/// (which creates the TurboJPEG handle and sizes the buffers) is libjpeg-turbo's own: 6
/// allocations.
let mjpegWorkloads: [Workload] = [
    ("Decode MJPEG 640x480 to I420", OutputFormat(.yu12)),
    ("Decode MJPEG 640x480 to I420 320x240", OutputFormat(.yu12, size: Size(width: 320, height: 240))),
].map { name, output in
    Workload(name) {
        let jpeg = try TestImage(jpegOf: TestImage(yuyv: .vga))
        let converter = try FrameConverter(output: output, device: "benchmark")
        let frame = jpeg.frame
        return {
            try withExtendedLifetime(jpeg) {
                try converter.convert(frame) { sink($0.plane(0).bytes.baseAddress) }
            }
        }
    }
}
