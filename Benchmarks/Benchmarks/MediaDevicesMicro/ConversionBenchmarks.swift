import Benchmark
import MediaDevices

/// YUYV 640x480, as a webcam delivers it uncompressed, through `FrameConverter` to I420 and to
/// BGRA (libyuv's ARGB: B, G, R, A in memory). I420 is V4L2's YU12.
func registerConversionBenchmarks() {
    for output in [PixelFormat.yu12, .argb] {
        Benchmark("Convert YUYV 640x480 to \(output.fourCC)") { benchmark in
            let image = TestImage(yuyv: .vga)
            let converter = try FrameConverter(output: OutputFormat(output), device: "benchmark")
            let frame = image.frame
            // package-benchmark runs this closure once per sample: the first call (which sizes
            // the converter's buffers) stays out of the measurement, as in a stream of frames.
            try converter.convert(frame) { blackHole($0.plane(0).bytes.baseAddress) }
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations {
                try converter.convert(frame) { blackHole($0.plane(0).bytes.baseAddress) }
            }
            benchmark.stopMeasurement()
            withExtendedLifetime(image) {}
        }
    }
}
