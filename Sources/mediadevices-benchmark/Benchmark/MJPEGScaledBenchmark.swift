import CTurboJPEG
import Glibc
import MediaDevices
import MediaDevicesCommandLine

/// MJPEG decoded at the size asked for (issue 39), on the host: libjpeg-turbo's own decode at
/// each DCT scale against its whole decode (the 1/8 decode is entropy decoding plus a DC-only
/// IDCT: how much of a frame no scale saves), and `FrameConverter` scaling to each output size
/// with the scaled decode against the same converter decoding whole (`jpegScaledDecoding` off).
struct MJPEGScaledBenchmark {
    struct Row: Encodable {
        var size: String
        /// `tjDecompressToYUVPlanes 1/4` or `FrameConverter → I420 640x360`.
        var what: String
        var timing: Timing
        /// The row over its reference: libjpeg-turbo's whole decode, or the converter decoding whole.
        var overReference: Double
        /// The reference's median, in nanoseconds.
        var referenceNanoseconds: Double
        /// The goal for the ratio, when the issue sets one.
        var goal: Double?
    }

    var sizes: [Size]
    var quality: Int32
    var rounds: Int
    var batchNanoseconds: UInt64

    /// The output sizes measured for a `source`: 640x360 and 320x180, where at most half of it.
    static func outputs(for source: Size) -> [Size] {
        [Size(width: 640, height: 360), Size(width: 320, height: 180)]
            .filter { $0.width * 2 <= source.width && $0.height * 2 <= source.height }
    }

    func run(progress: (String) -> Void) throws -> [Row] {
        var rows: [Row] = []
        for size in sizes {
            let jpeg = try MJPEGBenchmark.encodeTestPattern(width: size.width, height: size.height, subsampling: TJSAMP_420, quality: quality)
            defer { jpeg.deallocate() }
            rows += try decodeRows(jpeg, size)
            rows += try converterRows(jpeg, size)
            progress("MJPEG scaled decode \(size): measured")
        }
        return rows
    }

    /// libjpeg-turbo's header and decode to 4:2:0 planes at 1/1, 1/2, 1/4 and 1/8, with the
    /// pipeline's flags (the fast IDCT; the accurate one at 1/2, as the pipeline works around
    /// libjpeg-turbo 2.1's corrupt chroma there).
    private func decodeRows(_ jpeg: UnsafeRawBufferPointer, _ size: Size) throws -> [Row] {
        guard let handle = tjInitDecompress() else { throw BenchmarkError("tjInitDecompress failed") }
        defer { tjDestroy(handle) }
        let y = BenchmarkBlock(size.width * size.height), u = BenchmarkBlock(size.width * size.height / 4 + size.width),
            v = BenchmarkBlock(size.width * size.height / 4 + size.width)
        let planes = UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>.allocate(capacity: 3)
        let strides = UnsafeMutablePointer<Int32>.allocate(capacity: 3)
        defer { planes.deallocate(); strides.deallocate() }
        let source = jpeg.baseAddress!.assumingMemoryBound(to: UInt8.self)
        let denominators: [Int32] = [1, 2, 4, 8]
        var failures = 0
        let bodies: [() -> Void] = denominators.map { denominator in
            {
                var jw: Int32 = 0, jh: Int32 = 0, js: Int32 = 0, jc: Int32 = 0
                guard tjDecompressHeader3(handle, source, UInt(jpeg.count), &jw, &jh, &js, &jc) == 0 else { failures += 1; return }
                let w = (jw + denominator - 1) / denominator, h = (jh + denominator - 1) / denominator
                planes[0] = y.pointer; planes[1] = u.pointer; planes[2] = v.pointer
                strides[0] = w; strides[1] = (w + 1) / 2; strides[2] = (w + 1) / 2
                let flags = TJFLAG_STOPONWARNING | (denominator == 2 ? 0 : TJFLAG_FASTDCT)
                if tjDecompressToYUVPlanes(handle, source, UInt(jpeg.count), planes, w, strides, h, flags) != 0 { failures += 1 }
            }
        }
        let timings = measureInterleaved(bodies, rounds: rounds, batchNanoseconds: batchNanoseconds)
        if failures > 0 { throw BenchmarkError("\(failures) libjpeg-turbo decodes failed while measuring") }
        return denominators.indices.map { index in
            Row(size: "\(size)", what: "tjDecompressToYUVPlanes 1/\(denominators[index])", timing: timings[index],
                overReference: timings[index].medianNanoseconds / timings[0].medianNanoseconds,
                referenceNanoseconds: timings[0].medianNanoseconds, goal: nil)
        }
    }

    /// `FrameConverter` to I420 at each output size, scaled decode against whole decode.
    private func converterRows(_ jpeg: UnsafeRawBufferPointer, _ size: Size) throws -> [Row] {
        let format = VideoFormat(pixelFormat: .mjpeg, width: size.width, height: size.height, bytesPerRow: [0], bufferSizes: [jpeg.count])
        let frame = VideoFrame(format: format, timestamp: MonotonicInstant(nanoseconds: 0), sequence: 0, orientation: .up, captureDelay: .zero,
                               planeCount: 1, bytesUsed: jpeg.count, plane0: FramePlane(bytes: jpeg, bytesPerRow: 0))
        var rows: [Row] = []
        for output in Self.outputs(for: size) {
            let scaled = try FrameConverter(output: OutputFormat(.yu12, size: output), device: "benchmark")
            let whole = try FrameConverter(output: OutputFormat(.yu12, size: output, jpegScaledDecoding: false), device: "benchmark")
            var failures = 0
            let timings = measureInterleaved([
                { do { try scaled.convert(frame) { _ in } } catch { failures += 1 } },
                { do { try whole.convert(frame) { _ in } } catch { failures += 1 } },
            ], rounds: rounds, batchNanoseconds: batchNanoseconds)
            if failures > 0 { throw BenchmarkError("\(failures) conversions failed while measuring") }
            let goal = output.width * 4 <= size.width ? 0.4 : 0.5
            rows.append(Row(size: "\(size)", what: "FrameConverter → I420 \(output)", timing: timings[0],
                            overReference: timings[0].medianNanoseconds / timings[1].medianNanoseconds,
                            referenceNanoseconds: timings[1].medianNanoseconds, goal: goal))
        }
        return rows
    }

    static func table(_ rows: [Row]) -> String {
        var table = BenchmarkTable("JPEG 4:2:0", "what", "CPU/frame", "reference", "÷ reference", "goal")
        for row in rows {
            table.add(row.size, row.what, formatDuration(row.timing.medianNanoseconds), formatDuration(row.referenceNanoseconds),
                      formatRatio(row.overReference), row.goal.map { String(format: "≤%g× ", $0) + goalMark(row.overReference, $0) } ?? "–")
        }
        return table.text
    }
}
