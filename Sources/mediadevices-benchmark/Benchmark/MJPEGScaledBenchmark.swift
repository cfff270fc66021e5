import CTurboJPEG
import Glibc
import MediaDevices
import MediaDevicesCommandLine
import USBDevices

/// MJPEG decoded at the size asked for (issue 39), on the host: libjpeg-turbo's own decode at
/// each DCT scale against its whole decode (the 1/8 decode is entropy decoding plus a DC-only
/// IDCT: how much of a frame no scale saves), on the noisy test pattern and on the emulated USB
/// camera's own picture at its own subsampling (what the rig's capture rows decode), and
/// `FrameConverter` scaling to each output size with the scaled decode against the same converter
/// decoding whole (`jpegScaledDecoding` off).
struct MJPEGScaledBenchmark {
    struct Row: Encodable {
        var size: String
        /// `test pattern 4:2:0` or `USB camera 4:2:2`.
        var picture: String
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
            rows += try decodeRows(jpeg, size, picture: "test pattern 4:2:0")
            rows += try converterRows(jpeg, size, picture: "test pattern 4:2:0")
            let camera = try Self.cameraPicture(size)
            defer { camera.jpeg.deallocate() }
            rows += try decodeRows(camera.jpeg, size, picture: "USB camera \(camera.subsampling)")
            rows += try converterRows(camera.jpeg, size, picture: "USB camera \(camera.subsampling)")
            progress("MJPEG scaled decode \(size): measured")
        }
        return rows
    }

    /// The emulated USB camera's picture at `size`, at the subsampling the camera sends it in
    /// (4:2:2 at 1280x720, 4:2:0 otherwise: `Tests/USBDevices`).
    static func cameraPicture(_ size: Size) throws -> (jpeg: UnsafeRawBufferPointer, subsampling: String) {
        let subsampling: UInt8 = size == Size(width: 1280, height: 720) ? 22 : 20
        let width = UInt16(size.width), height = UInt16(size.height)
        let length = usbdev_camera_picture_jpeg(width, height, subsampling, 0, nil, 0)
        guard length > 0 else { throw BenchmarkError("the USB camera's picture did not encode at \(size)") }
        let bytes = UnsafeMutableRawBufferPointer.allocate(byteCount: length, alignment: 64)
        _ = usbdev_camera_picture_jpeg(width, height, subsampling, 0, bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), length)
        return (UnsafeRawBufferPointer(bytes), subsampling == 22 ? "4:2:2" : "4:2:0")
    }

    /// libjpeg-turbo's header and decode to its own planes at 1/1, 1/2, 3/8, 1/4 and 1/8, with
    /// the pipeline's flags (the fast IDCT; the accurate one at 1/2, as the pipeline works around
    /// libjpeg-turbo 2.1's corrupt chroma there). 3/8 is the smallest scale that covers 640x360
    /// from 1080p; libjpeg-turbo's 3x3 and 6x6 IDCTs are C, not SIMD.
    private func decodeRows(_ jpeg: UnsafeRawBufferPointer, _ size: Size, picture: String) throws -> [Row] {
        guard let handle = tjInitDecompress() else { throw BenchmarkError("tjInitDecompress failed") }
        defer { tjDestroy(handle) }
        let source = jpeg.baseAddress!.assumingMemoryBound(to: UInt8.self)
        var jw: Int32 = 0, jh: Int32 = 0, js: Int32 = 0, jc: Int32 = 0
        guard tjDecompressHeader3(handle, source, UInt(jpeg.count), &jw, &jh, &js, &jc) == 0 else {
            throw BenchmarkError("libjpeg-turbo cannot read the \(picture) JPEG's header")
        }
        let blocks = (0..<3).map { BenchmarkBlock(Int(tjPlaneSizeYUV(Int32($0), jw, 0, jh, js))) }
        let planes = UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>.allocate(capacity: 3)
        let strides = UnsafeMutablePointer<Int32>.allocate(capacity: 3)
        defer { planes.deallocate(); strides.deallocate() }
        let factors: [(numerator: Int32, denominator: Int32)] = [(1, 1), (1, 2), (3, 8), (1, 4), (1, 8)]
        var failures = 0
        let bodies: [() -> Void] = factors.map { factor in
            {
                var jw: Int32 = 0, jh: Int32 = 0, js: Int32 = 0, jc: Int32 = 0
                guard tjDecompressHeader3(handle, source, UInt(jpeg.count), &jw, &jh, &js, &jc) == 0 else { failures += 1; return }
                let w = (jw * factor.numerator + factor.denominator - 1) / factor.denominator
                let h = (jh * factor.numerator + factor.denominator - 1) / factor.denominator
                for plane in 0..<3 {
                    planes[plane] = blocks[plane].pointer
                    strides[plane] = tjPlaneWidth(Int32(plane), w, js)
                }
                let flags = TJFLAG_STOPONWARNING | (factor.denominator == 2 ? 0 : TJFLAG_FASTDCT)
                if tjDecompressToYUVPlanes(handle, source, UInt(jpeg.count), planes, w, strides, h, flags) != 0 { failures += 1 }
            }
        }
        let timings = measureInterleaved(bodies, rounds: rounds, batchNanoseconds: batchNanoseconds)
        if failures > 0 { throw BenchmarkError("\(failures) libjpeg-turbo decodes of the \(picture) failed while measuring") }
        return factors.indices.map { index in
            Row(size: "\(size)", picture: picture, what: "tjDecompressToYUVPlanes \(factors[index].numerator)/\(factors[index].denominator)",
                timing: timings[index],
                overReference: timings[index].medianNanoseconds / timings[0].medianNanoseconds,
                referenceNanoseconds: timings[0].medianNanoseconds, goal: nil)
        }
    }

    /// `FrameConverter` to I420 at each output size, scaled decode against whole decode.
    private func converterRows(_ jpeg: UnsafeRawBufferPointer, _ size: Size, picture: String) throws -> [Row] {
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
            rows.append(Row(size: "\(size)", picture: picture, what: "FrameConverter → I420 \(output)", timing: timings[0],
                            overReference: timings[0].medianNanoseconds / timings[1].medianNanoseconds,
                            referenceNanoseconds: timings[1].medianNanoseconds, goal: goal))
        }
        return rows
    }

    static func table(_ rows: [Row]) -> String {
        var table = BenchmarkTable("JPEG", "picture", "what", "CPU/frame", "reference", "÷ reference", "goal")
        for row in rows {
            table.add(row.size, row.picture, row.what, formatDuration(row.timing.medianNanoseconds), formatDuration(row.referenceNanoseconds),
                      formatRatio(row.overReference), row.goal.map { String(format: "≤%g× ", $0) + goalMark(row.overReference, $0) } ?? "–")
        }
        return table.text
    }
}
