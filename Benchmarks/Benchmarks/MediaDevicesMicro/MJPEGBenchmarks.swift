import Benchmark
import MediaDevices

/// A 640x480 JPEG (4:2:0, quality 90) decoded by `FrameConverter` (libjpeg-turbo) to I420: full
/// size, and to 320x240 (half: a DCT-scaled decode).
func registerMJPEGBenchmarks() {
    let cases: [(String, OutputFormat)] = [
        ("Decode MJPEG 640x480 to I420", OutputFormat(.yu12)),
        ("Decode MJPEG 640x480 to I420 320x240", OutputFormat(.yu12, size: Size(width: 320, height: 240))),
    ]
    for (name, output) in cases {
        Benchmark(name) { benchmark in
            let jpeg = try TestImage(jpegOf: TestImage(yuyv: .vga))
            let converter = try FrameConverter(output: output, device: "benchmark")
            let frame = jpeg.frame
            // package-benchmark runs this closure once per sample: the first call (which creates
            // the TurboJPEG handle and sizes the buffers) stays out of the measurement, as in a
            // stream of frames. What is left per frame is libjpeg-turbo's own (6 allocations).
            try converter.convert(frame) { blackHole($0.plane(0).bytes.baseAddress) }
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations {
                try converter.convert(frame) { blackHole($0.plane(0).bytes.baseAddress) }
            }
            benchmark.stopMeasurement()
            withExtendedLifetime(jpeg) {}
        }
    }
}
