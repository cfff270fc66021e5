import CTurboJPEG
import CYUV
import Glibc
import MediaDevices
import MediaDevicesCommandLine

/// Part 2: MJPEG decode through `FrameConverter` against libjpeg-turbo called directly
/// (`tjDecompressHeader3` + `tjDecompressToYUVPlanes`, the calls the pipeline makes), and
/// against that decode followed by the same libyuv calls the pipeline adds for the output. Both
/// decode with the pipeline's default IDCT (`JPEGDecoding.fast`: `TJFLAG_FASTDCT`).
struct MJPEGBenchmark {
    struct Row: Encodable {
        var subsampling: String
        var output: String
        var size: String
        var jpegBytes: Int
        var chain: String
        var pipeline: Timing
        /// libjpeg-turbo alone: header and decode to the JPEG's own planes.
        var turboJPEG: Timing
        /// libjpeg-turbo and the libyuv calls the pipeline makes after it, made directly.
        var turboJPEGAndLibyuv: Timing
        /// Pipeline over libjpeg-turbo alone, medians (goal ≤ 1.05).
        var pipelineOverTurboJPEG: Double
        var pipelineOverTurboJPEGMinimum: Double
        /// Pipeline over the same chain made directly, medians.
        var pipelineOverChain: Double
    }

    var width: Int
    var height: Int
    var quality: Int32
    var rounds: Int
    var batchNanoseconds: UInt64

    func run(progress: (String) -> Void) throws -> [Row] {
        var rows: [Row] = []
        for (name, subsampling) in [("4:2:0", TJSAMP_420), ("4:2:2", TJSAMP_422)] {
            let jpeg = try Self.encodeTestPattern(width: width, height: height, subsampling: subsampling, quality: quality)
            defer { jpeg.deallocate() }
            for output in [PixelFormat.yu12, .nv12] {
                rows.append(try measure(jpeg, subsamplingName: name, subsampling: subsampling, output: output, progress: progress))
            }
        }
        return rows
    }

    private func measure(_ jpeg: UnsafeRawBufferPointer, subsamplingName: String, subsampling: TJSAMP,
                         output: PixelFormat, progress: (String) -> Void) throws -> Row {
        let converter = try FrameConverter(output: OutputFormat(output), device: "benchmark")
        let format = VideoFormat(pixelFormat: .mjpeg, width: width, height: height, bytesPerRow: [0], bufferSizes: [jpeg.count])
        let frame = VideoFrame(format: format, timestamp: MonotonicInstant(nanoseconds: 0), sequence: 0, orientation: .up, captureDelay: .zero,
                               planeCount: 1, bytesUsed: jpeg.count, plane0: FramePlane(bytes: jpeg, bytesPerRow: 0))
        guard let handle = tjInitDecompress() else { throw BenchmarkError("tjInitDecompress failed") }
        defer { tjDestroy(handle) }
        // The JPEG's own planes, then I420 (for 4:2:2), then the output.
        let w = Int32(width), h = Int32(height), cw = (w + 1) / 2, ch = (h + 1) / 2
        let is422 = subsampling == TJSAMP_422
        let nativeChromaRows = is422 ? h : ch
        let nativeY = BenchmarkBlock(Int(w * h)), nativeU = BenchmarkBlock(Int(cw * nativeChromaRows)), nativeV = BenchmarkBlock(Int(cw * nativeChromaRows))
        let i420U = BenchmarkBlock(Int(cw * ch)), i420V = BenchmarkBlock(Int(cw * ch))
        let out = BenchmarkImage(output, width: width, height: height)
        let planes = UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>.allocate(capacity: 3)
        let strides = UnsafeMutablePointer<Int32>.allocate(capacity: 3)
        defer { planes.deallocate(); strides.deallocate() }
        let source = jpeg.baseAddress!.assumingMemoryBound(to: UInt8.self)
        let count = UInt(jpeg.count)
        let flags = TJFLAG_STOPONWARNING | (converter.output.jpegDecoding == .fast ? TJFLAG_FASTDCT : 0)
        func decode() -> Int32 {
            var jw: Int32 = 0, jh: Int32 = 0, js: Int32 = 0, jc: Int32 = 0
            guard tjDecompressHeader3(handle, source, count, &jw, &jh, &js, &jc) == 0 else { return -1 }
            // 4:2:0 to I420 decodes straight into the output, as the pipeline does.
            let direct = !is422 && output == .yu12
            planes[0] = direct ? out.plane(0) : nativeY.pointer
            planes[1] = direct ? out.plane(1) : nativeU.pointer
            planes[2] = direct ? out.plane(2) : nativeV.pointer
            strides[0] = w; strides[1] = cw; strides[2] = cw
            return tjDecompressToYUVPlanes(handle, source, count, planes, jw, strides, jh, flags)
        }
        func chain() -> Int32 {
            var status = decode()
            guard status == 0 else { return status }
            var (u, v) = (nativeU.pointer, nativeV.pointer)
            if is422 {
                let (iu, iv) = output == .yu12 ? (out.plane(1), out.plane(2)) : (i420U.pointer, i420V.pointer)
                let y = output == .yu12 ? out.plane(0) : nativeY.pointer
                status = I422ToI420(nativeY.pointer, w, nativeU.pointer, cw, nativeV.pointer, cw,
                                    y, w, iu, cw, iv, cw, w, h)
                (u, v) = (iu, iv)
                guard status == 0 else { return status }
            }
            if output == .nv12 {
                status = I420ToNV12(nativeY.pointer, w, u, cw, v, cw, out.plane(0), out.stride(0), out.plane(1), out.stride(1), w, h)
            }
            return status
        }
        var calls = ["tjDecompressToYUVPlanes"]
        if is422 { calls.append("I422ToI420") }
        if output == .nv12 { calls.append("I420ToNV12") }
        // Both paths must work and agree before they are timed.
        guard chain() == 0 else { throw BenchmarkError("libjpeg-turbo could not decode the benchmark's own JPEG") }
        var pipelineBytes: [UInt8] = [], directBytes: [UInt8] = []
        try converter.convert(frame) { converted in
            for index in 0..<converted.planeCount { pipelineBytes += converted.plane(index).bytes }
        }
        let outFrame = out.frame
        for index in 0..<outFrame.planeCount { directBytes += outFrame.plane(index).bytes }
        guard pipelineBytes == directBytes else {
            throw BenchmarkError("the pipeline's \(subsamplingName) JPEG → \(output.fourCC) differs from \(calls.joined(separator: " + ")) made directly")
        }
        var failures = 0
        let timings = measureInterleaved([
            { do { try converter.convert(frame) { _ in } } catch { failures += 1 } },
            { if decode() != 0 { failures += 1 } },
            { if chain() != 0 { failures += 1 } },
        ], rounds: rounds, batchNanoseconds: batchNanoseconds)
        if failures > 0 { throw BenchmarkError("\(failures) decodes failed while measuring") }
        let row = Row(subsampling: subsamplingName, output: "\(output.fourCC)", size: "\(width)x\(height)", jpegBytes: jpeg.count,
                      chain: calls.joined(separator: " + "), pipeline: timings[0], turboJPEG: timings[1], turboJPEGAndLibyuv: timings[2],
                      pipelineOverTurboJPEG: timings[0].medianNanoseconds / timings[1].medianNanoseconds,
                      pipelineOverTurboJPEGMinimum: timings[0].minimumNanoseconds / timings[1].minimumNanoseconds,
                      pipelineOverChain: timings[0].medianNanoseconds / timings[2].medianNanoseconds)
        progress(String(format: "MJPEG %@ → %@: %@ (%.3f× libjpeg-turbo)", subsamplingName, "\(output.fourCC)",
                        formatDuration(row.pipeline.medianNanoseconds), row.pipelineOverTurboJPEG))
        return row
    }

    static func table(_ rows: [Row]) -> String {
        var table = BenchmarkTable("JPEG", "output", "size", "bytes", "pipeline", "turbojpeg", "+libyuv", "pipe/tj", "(min)", "pipe/chain", "goal ≤1.05", "chain")
        for row in rows {
            table.add(row.subsampling, row.output, row.size, "\(row.jpegBytes)", formatDuration(row.pipeline.medianNanoseconds),
                      formatDuration(row.turboJPEG.medianNanoseconds), formatDuration(row.turboJPEGAndLibyuv.medianNanoseconds),
                      formatRatio(row.pipelineOverTurboJPEG), formatRatio(row.pipelineOverTurboJPEGMinimum),
                      formatRatio(row.pipelineOverChain), goalMark(row.pipelineOverTurboJPEG, 1.05), row.chain)
        }
        return table.text
    }

    /// A camera-like test picture (colour bars, ramps, fine detail and sensor-like noise)
    /// compressed by libjpeg-turbo. The caller deallocates the result.
    static func encodeTestPattern(width: Int, height: Int, subsampling: TJSAMP, quality: Int32) throws -> UnsafeRawBufferPointer {
        let rgb = BenchmarkBlock(width * height * 3)
        let bars: [(UInt8, UInt8, UInt8)] = [(235, 235, 235), (235, 235, 16), (16, 235, 235), (16, 235, 16),
                                             (235, 16, 235), (235, 16, 16), (16, 16, 235), (16, 16, 16)]
        var noise: UInt32 = 12345
        for y in 0..<height {
            for x in 0..<width {
                noise = noise &* 1_664_525 &+ 1_013_904_223
                let jitter = Int(noise >> 28) - 8
                var (r, g, b): (Int, Int, Int)
                if y < height / 2 {
                    let bar = bars[x * bars.count / width]
                    (r, g, b) = (Int(bar.0), Int(bar.1), Int(bar.2))
                } else if y < height * 3 / 4 {
                    let ramp = x * 255 / width
                    (r, g, b) = (ramp, 255 - ramp, (y * 255 / height + ramp) / 2)
                } else {
                    // Fine detail: a zone plate.
                    let dx = x - width / 2, dy = y - height
                    let phase = ((dx * dx + dy * dy) / 64) & 255
                    (r, g, b) = (phase, (phase + 85) & 255, (phase + 170) & 255)
                }
                let pixel = rgb.pointer + (y * width + x) * 3
                pixel[0] = UInt8(clamping: r + jitter); pixel[1] = UInt8(clamping: g + jitter); pixel[2] = UInt8(clamping: b + jitter)
            }
        }
        guard let handle = tjInitCompress() else { throw BenchmarkError("tjInitCompress failed") }
        defer { tjDestroy(handle) }
        var buffer: UnsafeMutablePointer<UInt8>? = nil
        var size: UInt = 0
        guard tjCompress2(handle, rgb.pointer, Int32(width), Int32(width * 3), Int32(height), Int32(TJPF_RGB.rawValue),
                          &buffer, &size, Int32(subsampling.rawValue), quality, 0) == 0, let buffer else {
            throw BenchmarkError("libjpeg-turbo could not compress the test picture: \(String(cString: tjGetErrorStr2(handle)))")
        }
        defer { tjFree(buffer) }
        let copy = UnsafeMutableRawBufferPointer.allocate(byteCount: Int(size), alignment: 64)
        copy.copyMemory(from: UnsafeRawBufferPointer(start: buffer, count: Int(size)))
        return UnsafeRawBufferPointer(copy)
    }
}

/// A block of bytes the benchmark owns.
final class BenchmarkBlock {
    let pointer: UnsafeMutablePointer<UInt8>
    init(_ count: Int) {
        pointer = UnsafeMutableRawPointer.allocate(byteCount: max(count, 1), alignment: 64).bindMemory(to: UInt8.self, capacity: max(count, 1))
        pointer.initialize(repeating: 0, count: max(count, 1))
    }
    deinit { pointer.deallocate() }
}
