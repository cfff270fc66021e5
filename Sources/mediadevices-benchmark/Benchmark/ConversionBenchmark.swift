import CYUV
import Glibc
import MediaDevices
import MediaDevicesCommandLine

/// Part 1: each conversion through `FrameConverter`, against the same libyuv calls made
/// directly and against a memcpy of the source frame.
struct ConversionBenchmark {
    /// One measured conversion.
    struct Row: Encodable {
        var source: String
        var output: String
        var size: String
        var libyuvCalls: String
        var pipeline: Timing
        var direct: Timing
        var memcpy: Timing
        /// Pipeline over direct libyuv, medians (goal ≤ 1.05).
        var pipelineOverDirect: Double
        /// Pipeline over direct libyuv, fastest rounds.
        var pipelineOverDirectMinimum: Double
        /// Pipeline over a memcpy of the source frame, medians.
        var pipelineOverMemcpy: Double
    }

    var sizes: [Size]
    var sources: [PixelFormat]
    var outputs: [PixelFormat]
    var rounds: Int
    var batchNanoseconds: UInt64
    var geometry: Bool

    /// Every conversion case, measured.
    func run(progress: (String) -> Void) throws -> [Row] {
        var rows: [Row] = []
        for size in sizes {
            for source in sources {
                let image = BenchmarkImage(source, width: size.width, height: size.height)
                for output in outputs {
                    let request = OutputFormat(output)
                    let target = BenchmarkImage(output, width: size.width, height: size.height)
                    guard let direct = DirectConversion.make(source: image, target: target) else { continue }
                    rows.append(try measure(image, request, direct, target, label: "\(source.fourCC)", progress: progress))
                }
            }
            guard geometry else { continue }
            let yuyv = BenchmarkImage(.yuyv, width: size.width, height: size.height)
            // Centre-crop to a square, then scale to 480x480 (only a crop at 640x480).
            let side = min(size.width, size.height)
            let crop = (x: (size.width - side) / 2 / 2 * 2, y: (size.height - side) / 2 / 2 * 2, width: side, height: side)
            let square = BenchmarkImage(.nv12, width: 480, height: 480)
            rows.append(try measure(yuyv, OutputFormat(.nv12, size: Size(width: 480, height: 480)),
                                    DirectConversion.geometry(source: yuyv, crop: crop, scaledWidth: 480, scaledHeight: 480,
                                                              rotation: kRotate0, target: square),
                                    square, label: "YUYV crop+scale 480x480", progress: progress))
            // Scale to half size.
            let half = Size(width: size.width / 2, height: size.height / 2)
            let halfImage = BenchmarkImage(.nv12, width: half.width, height: half.height)
            rows.append(try measure(yuyv, OutputFormat(.nv12, size: half),
                                    DirectConversion.geometry(source: yuyv, crop: (0, 0, size.width, size.height),
                                                              scaledWidth: half.width, scaledHeight: half.height,
                                                              rotation: kRotate0, target: halfImage),
                                    halfImage, label: "YUYV scale \(half)", progress: progress))
            // Rotate a quarter turn.
            let turned = BenchmarkImage(.nv12, width: size.height, height: size.width)
            rows.append(try measure(yuyv, OutputFormat(.nv12, rotation: .clockwise90),
                                    DirectConversion.geometry(source: yuyv, crop: (0, 0, size.width, size.height),
                                                              scaledWidth: size.width, scaledHeight: size.height,
                                                              rotation: kRotate90, target: turned),
                                    turned, label: "YUYV rotate 90", progress: progress))
        }
        return rows
    }

    private func measure(_ image: BenchmarkImage, _ request: OutputFormat, _ direct: DirectConversion,
                         _ target: BenchmarkImage, label: String, progress: (String) -> Void) throws -> Row {
        let converter = try FrameConverter(output: request, device: "benchmark")
        let frame = image.frame
        // Check once that both paths work (and produce the same bytes: the same calls).
        var pipelineBytes: [UInt8] = []
        try converter.convert(frame) { converted in
            for index in 0..<converted.planeCount {
                let plane = converted.plane(index)
                pipelineBytes += plane.bytes.prefix(plane.bytesPerRow * min(8, converted.height))
            }
        }
        let status = direct.run()
        guard status == 0 else {
            throw BenchmarkError("libyuv returned \(status) for \(direct.calls) on \(label) \(image.format.width)x\(image.format.height)")
        }
        var directBytes: [UInt8] = []
        let targetFrame = target.frame
        for index in 0..<targetFrame.planeCount {
            let plane = targetFrame.plane(index)
            directBytes += plane.bytes.prefix(plane.bytesPerRow * min(8, targetFrame.height))
        }
        guard pipelineBytes == directBytes else {
            throw BenchmarkError("the pipeline's \(label) → \(request) differs from \(direct.calls) made directly: the benchmark does not compare like with like")
        }
        let copy = UnsafeMutableRawPointer.allocate(byteCount: image.byteCount, alignment: 64)
        defer { copy.deallocate() }
        var failures = 0
        let timings = measureInterleaved([
            { do { try converter.convert(frame) { _ in } } catch { failures += 1 } },
            { if direct.run() != 0 { failures += 1 } },
            { image.copyAll(into: copy) },
        ], rounds: rounds, batchNanoseconds: batchNanoseconds)
        if failures > 0 { throw BenchmarkError("\(failures) conversions of \(label) failed while measuring") }
        let row = Row(source: label, output: request.description,
                      size: "\(image.format.width)x\(image.format.height)", libyuvCalls: direct.calls,
                      pipeline: timings[0], direct: timings[1], memcpy: timings[2],
                      pipelineOverDirect: timings[0].medianNanoseconds / timings[1].medianNanoseconds,
                      pipelineOverDirectMinimum: timings[0].minimumNanoseconds / timings[1].minimumNanoseconds,
                      pipelineOverMemcpy: timings[0].medianNanoseconds / timings[2].medianNanoseconds)
        progress(String(format: "%@ %@ → %@: %@ (%.3f× direct)", row.size, label, request.description,
                        formatDuration(row.pipeline.medianNanoseconds), row.pipelineOverDirect))
        return row
    }

    /// The rows as a table, with the goal verdict.
    static func table(_ rows: [Row]) -> String {
        var table = BenchmarkTable("size", "source", "output", "pipeline", "direct", "memcpy", "pipe/direct", "(min)", "pipe/memcpy", "goal ≤1.05", "libyuv calls")
        for row in rows {
            table.add(row.size, row.source, row.output, formatDuration(row.pipeline.medianNanoseconds),
                      formatDuration(row.direct.medianNanoseconds), formatDuration(row.memcpy.medianNanoseconds),
                      formatRatio(row.pipelineOverDirect), formatRatio(row.pipelineOverDirectMinimum),
                      formatRatio(row.pipelineOverMemcpy), goalMark(row.pipelineOverDirect, 1.05),
                      row.libyuvCalls)
        }
        return table.text
    }
}

/// A benchmark that could not measure what it set out to.
struct BenchmarkError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
