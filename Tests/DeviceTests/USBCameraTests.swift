import Foundation
import MediaDevices
import TestSupport
import USBDevices
import XCTest

/// The real uvcvideo driver on the project's emulated UVC webcam (USB/IP, vhci-hcd): enumeration
/// and formats as v4l2-ctl sees them, a uniqueID that survives replugging, MJPEG at every size
/// decoded as libjpeg-turbo decodes it, corrupt frames dropped and counted, and YUYV frame
/// counters that prove every lost frame is counted.
final class USBCameraTests: XCTestCase {
    override func setUpWithError() throws { try Rig.require() }

    func testEnumerationFormatsAndUniqueIDSurviveReplugging() throws {
        let camera = try Rig.usbCamera()
        defer { camera.close() }
        let device = try camera.device()
        print(String(format: "figure: USB camera enumerated %.1f s after plugging in (uvcvideo bound, udev named it)", camera.enumerationSeconds))
        XCTAssertEqual(device.driver, "uvcvideo")
        // uvcvideo names the card "<product>: <streaming function>", cut to V4L2's 31 characters,
        // as on real webcams ("Integrated Camera: Integrated C").
        XCTAssertEqual(device.name, "\(USBDEV_CAMERA_PRODUCT): Media")
        let group = try XCTUnwrap(try V4L2Reference.deviceGroups().first { $0.nodes.contains(device.path) })
        XCTAssertEqual(device.name, group.name)
        XCTAssertEqual(device.busInfo, group.busInfo)
        XCTAssertTrue(device.busInfo.hasPrefix("usb-vhci_hcd"), device.busInfo)
        XCTAssertEqual(device.uniqueID, "usb-\(USBDEV_MANUFACTURER)_MediaDevices_Test_Camera_\(camera.serial)-video-index0",
                       "the /dev/v4l/by-id name, from the serial number")
        XCTAssertEqual(device.position, .unknown, "a UVC webcam reports no orientation control")

        // Formats: exactly what v4l2-ctl lists, and what the camera's descriptors declare.
        try EnumerationTests.assertFormatsAgree(device, minimumCount: 2)
        let formats = try device.supportedFormats()
        XCTAssertEqual(formats.map(\.pixelFormat), [.mjpeg, .yuyv])
        XCTAssertEqual(formats[0].frameSizes.map { $0.sizes.maxSize }, USBCamera.mjpegSizes)
        XCTAssertEqual(formats[1].frameSizes.map { $0.sizes.maxSize }, USBCamera.yuyvSizes)
        XCTAssertTrue(formats[0].isCompressed)

        // Unplugged while our fd is open, the node number stays taken, so the camera comes back on
        // another node: the uniqueID is the same.
        let held = CameraSource(device: device, request: FormatRequest(pixelFormat: .yuyv, size: Size(width: 160, height: 120)))
        try held.initialize()
        camera.unplug()
        for _ in 0..<100 { guard CaptureDevice.scan().devices.contains(where: { $0.uniqueID == device.uniqueID }) else { break }; usleep(50_000) }
        XCTAssertFalse(CaptureDevice.scan().devices.contains { $0.uniqueID == device.uniqueID }, "unplugged: gone from the list")
        try camera.replug()
        let again = try camera.device()
        XCTAssertEqual(again.uniqueID, device.uniqueID)
        XCTAssertNotEqual(again.path, device.path, "a new node while the old one is still open")
        held.release()
        print("figure: USB camera replugged: \(device.path) -> \(again.path), uniqueID \(again.uniqueID) (\(String(format: "%.1f", camera.enumerationSeconds)) s)")
    }

    func testMJPEGAtEveryOfferedSizeDecodesAsLibjpegTurboDoes() async throws {
        let camera = try Rig.usbCamera()
        defer { camera.close() }
        let device = try camera.device()
        for size in USBCamera.mjpegSizes {
            let source = CameraSource(device: device, request: FormatRequest(pixelFormat: .mjpeg, size: size, frameRate: FrameRate(30)))
            let log = USBFrameLog(camera: camera)
            source.consumer = log
            let i420 = try source.frameSequence(bufferSize: 4, output: OutputFormat(.yu12))
            let argb = try source.frameSequence(bufferSize: 4, output: OutputFormat(.argb, jpegDecoding: .accurate))
            try source.start()
            let started = Date()
            let converted = try await firstFrames(i420, count: 3, seconds: 60, stopping: source)
            let rgb = try await firstFrames(argb, count: 2, seconds: 60, stopping: source)
            let seconds = Date().timeIntervalSince(started)
            let statistics = source.statistics
            XCTAssertEqual(source.negotiation?.format.pixelFormat, .mjpeg)
            source.release()
            XCTAssertEqual(converted.count, 3, "\(size): I420 frames")
            XCTAssertEqual(rgb.count, 2, "\(size): ARGB frames")
            XCTAssertEqual(log.byteMismatches, [], "\(size): every JPEG arrives as the camera sent it")
            XCTAssertEqual(statistics.corruptFrames, 0)
            let worstChroma = try Self.assertDecodedAsLibjpeg(converted, size: size, log: log, camera: camera)
            var worstRGB = Double.infinity
            for frame in rgb {
                let counter = try XCTUnwrap(log.counter(sequence: frame.sequence))
                // libyuv samples chroma at its nearest position (no interpolation): so does
                // libjpeg-turbo's fast upsampling; what differs is the YUV->RGB rounding. This
                // sequence asks for the accurate IDCT, and so does the reference.
                let reference = try XCTUnwrap(LibjpegReference.bgra(camera.jpeg(size, counter: UInt32(counter)), fastUpsample: true, fastDCT: false))
                worstRGB = min(worstRGB, psnr(frame.planes[0], reference.bytes, skipAlphaOf: 4))
            }
            XCTAssertGreaterThanOrEqual(worstRGB, 45, "\(size): ARGB as libjpeg-turbo decodes to RGB with the same chroma sampling")
            print(String(format: "figure: USB camera MJPEG %@ (%@): I420 luma exact, chroma max diff %d; ARGB (accurate IDCT) %.1f dB vs tjDecompress2 (fast upsampling); %d frames in %.1f s (%.1f fps measured by the library), dropped %d",
                         size.description, size.width == 800 || size.width == 1280 ? "4:2:2" : "4:2:0", worstChroma, worstRGB,
                         statistics.deliveredFrames, seconds, statistics.measuredFrameRate, statistics.droppedFrames))
        }
    }

    /// Asserts that each of `converted` (I420 frames decoded from the camera's MJPEG at `size`)
    /// is libjpeg-turbo's decode of the JPEG the camera sent for the frame's counter (read by
    /// `log` from the same frame): luma exactly, 4:2:0 chroma exactly, 4:2:2 chroma ±1. Returns
    /// the largest chroma difference.
    static func assertDecodedAsLibjpeg(_ converted: [CopiedFrame], size: Size, log: USBFrameLog, camera: USBCamera,
                                       file: StaticString = #filePath, line: UInt = #line) throws -> Int {
        var worstChroma = 0
        for frame in converted {
            let counter = try XCTUnwrap(log.counter(sequence: frame.sequence), "\(size): frame \(frame.sequence) carries a counter", file: file, line: line)
            let reference = try XCTUnwrap(LibjpegReference.planes(camera.jpeg(size, counter: UInt32(counter)), fastDCT: true), file: file, line: line)
            XCTAssertEqual(frame.size, size, file: file, line: line)
            XCTAssertEqual(frame.planes[0], reference.y, "\(size): luma exactly libjpeg-turbo's (fast IDCT, the default)", file: file, line: line)
            let (u, v) = chroma420(reference)
            if reference.chromaHeight == reference.height / 2 + reference.height % 2 {
                XCTAssertEqual(frame.planes[1], u, "\(size) 4:2:0: chroma exactly libjpeg-turbo's", file: file, line: line)
                XCTAssertEqual(frame.planes[2], v, file: file, line: line)
            }
            worstChroma = max(worstChroma, difference(frame.planes[1], u).max, difference(frame.planes[2], v).max)
        }
        XCTAssertLessThanOrEqual(worstChroma, 1, "\(size): 4:2:2 chroma is the mean of two rows, ±1", file: file, line: line)
        return worstChroma
    }

    /// libjpeg-turbo's chroma as I420 has it: 4:2:0 as is, 4:2:2 with pairs of rows averaged.
    static func chroma420(_ p: LibjpegReference.Planes) -> (u: [UInt8], v: [UInt8]) {
        let rows = (p.height + 1) / 2
        if p.chromaHeight == rows { return (p.u, p.v) }
        func halve(_ plane: [UInt8]) -> [UInt8] {
            var out = [UInt8](repeating: 0, count: p.chromaWidth * rows)
            for r in 0..<rows {
                let below = min(2 * r + 1, p.chromaHeight - 1)
                for c in 0..<p.chromaWidth {
                    out[r * p.chromaWidth + c] = UInt8((Int(plane[2 * r * p.chromaWidth + c]) + Int(plane[below * p.chromaWidth + c]) + 1) / 2)
                }
            }
            return out
        }
        return (halve(p.u), halve(p.v))
    }

    func testCorruptAndTruncatedJPEGsAreDroppedCountedAndCaptureGoesOn() async throws {
        let camera = try Rig.usbCamera()
        defer { camera.close() }
        let source = CameraSource(device: try camera.device(), request: FormatRequest(pixelFormat: .mjpeg, size: .vga, frameRate: FrameRate(30)))
        let log = USBFrameLog(camera: camera)
        source.consumer = log
        let converted = try source.frameSequence(bufferSize: 64, output: OutputFormat(.yu12))
        try source.start()
        XCTAssertTrue(log.wait(for: 5, seconds: 60))
        // Each fault goes into the next frame the camera makes; wait until frames made after it
        // arrived (on a busy machine the camera runs frames ahead of the application).
        // A host starved of CPU can lose both at the source (seen with four guests on two
        // cores): then the pair is injected again, up to five times.
        var rounds = 0
        repeat {
            rounds += 1
            let beforeTruncated = camera.framesSent
            camera.inject(USBDEV_FAULT_TRUNCATED_JPEG)
            XCTAssertTrue(log.wait(forCounterAbove: beforeTruncated + 1, seconds: 60))
            let beforeCorrupt = camera.framesSent
            camera.inject(USBDEV_FAULT_CORRUPT_JPEG)
            XCTAssertTrue(log.wait(forCounterAbove: beforeCorrupt + 1, seconds: 60))
        } while log.byteMismatches.isEmpty && rounds < 5
        XCTAssertTrue(log.wait(for: 20, seconds: 60))
        let frames = try await firstFrames(converted, count: 18, seconds: 30, stopping: source)
        let statistics = source.statistics
        source.release()
        // What the library controls: every faulty frame that arrived is dropped and counted, and
        // no good one. A truncated JPEG (no end-of-image marker) reaches no consumer at all, so
        // only the statistics count it; the one damaged inside reaches the raw consumer (only a
        // decode can tell), whose bytes differ from the camera's. On an idle machine both
        // arrive; with the host starved one of them has been seen missing at the source, and the
        // emulated bus loses frames of its own (in a loaded run the raw consumer's sequence gaps
        // less the driver's drops came to 3 with one truncated frame injected, and 2 frames were
        // counted corrupt: which frames the bus lost the test cannot know, so it does not count them).
        let sequences = log.all.map(\.sequence)
        let gaps = missingNumbers(sequences)
        let damaged = log.byteMismatches.count
        let faulty = statistics.corruptFrames
        XCTAssertGreaterThanOrEqual(faulty, 1, "a faulty frame arrived in \(rounds) round(s) of two")
        XCTAssertGreaterThanOrEqual(faulty, damaged, "every damaged frame the raw consumer saw was dropped and counted: \(log.byteMismatches)")
        XCTAssertLessThanOrEqual(damaged, 2 * rounds, "only the faulty frames differ: \(log.byteMismatches)")
        let reason = try XCTUnwrap(statistics.lastCorruptFrameReason)
        XCTAssertFalse(reason.isEmpty)
        let good = Set(frames.map { $0.sequence }), last = try XCTUnwrap(good.max())
        let raw = Set(log.all.map { $0.sequence }.filter { $0 <= last })
        let badBeforeLast = log.all.filter { $0.sequence <= last }.count - raw.intersection(good).count
        XCTAssertEqual(raw.subtracting(good).count, badBeforeLast, "the converted sequence lacks exactly the bad frames")
        XCTAssertLessThanOrEqual(raw.subtracting(good).count, faulty)
        XCTAssertGreaterThanOrEqual(frames.count, 18, "capture went on after them")
        print("figure: USB camera corrupt JPEGs: \(2 * rounds) injected, \(faulty) dropped and counted (\(reason)); \(damaged) damaged inside reached the raw consumer and not the converted sequence; the raw consumer's sequence gaps \(gaps), the driver's drops \(statistics.droppedFrames); \(frames.count) good frames converted")
    }

    func testYUYVCountersAreConsecutiveOrEveryGapIsCountedAsADrop() throws {
        let camera = try Rig.usbCamera()
        defer { camera.close() }
        let source = CameraSource(device: try camera.device(), request: FormatRequest(pixelFormat: .yuyv, size: Size(width: 320, height: 240), frameRate: FrameRate(30)))
        let log = USBFrameLog(camera: camera)
        source.consumer = log
        try source.start()
        XCTAssertTrue(log.wait(for: 10, seconds: 60))
        camera.inject(USBDEV_FAULT_SHORT_YUYV)  // uvcvideo drops a frame that ends early
        XCTAssertTrue(log.wait(for: 40, seconds: 120))
        source.stop()  // the statistics and the log then hold the same frames
        let statistics = source.statistics
        source.release()
        let entries = log.all
        XCTAssertTrue(entries.allSatisfy { $0.counter != nil }, "every frame carries a readable counter")
        let counted = entries.compactMap { entry in entry.counter.map { (counter: $0, sequence: Int(entry.sequence)) } }
        XCTAssertEqual(Set(counted.map { $0.counter - $0.sequence }).count, 1,
                       "a gap in the camera's counter is a gap in V4L2's sequence: \(counted.map { "\($0.sequence):\($0.counter)" })")
        let counterGaps = missingNumbers(counted.map(\.counter))
        XCTAssertGreaterThanOrEqual(counterGaps, 1, "the short frame never reached us")
        XCTAssertEqual(statistics.droppedFrames, counterGaps, "every lost frame counted as dropped")
        print(String(format: "figure: USB camera YUYV 320x240: %d frames, %d lost on the way and %d counted dropped, %.1f fps measured",
                     entries.count, counterGaps, statistics.droppedFrames, statistics.measuredFrameRate))
    }

    func testFrameRateOfEveryFormatAndSize() throws {
        let camera = try Rig.usbCamera()
        defer { camera.close() }
        let device = try camera.device()
        var report: [String] = []
        for format in try device.supportedFormats() {
            for option in format.frameSizes {
                let size = option.sizes.maxSize
                let rate = try XCTUnwrap(option.frameRateRanges.map(\.maxFrameRate).max(), "\(size) has a rate")
                let source = CameraSource(device: device, request: FormatRequest(pixelFormat: format.pixelFormat, size: size, frameRate: rate))
                let recorder = FrameRecorder(target: Self.rateFrames)
                source.consumer = recorder  // raw frames on the callback: no decoding in the way
                try source.start()
                let finished = recorder.wait(seconds: 90)
                source.stop()  // the statistics and the records then hold the same frames
                let statistics = source.statistics
                source.release()
                XCTAssertTrue(finished, "\(format.pixelFormat.name) \(size): \(Self.rateFrames) frames")
                let sequences = recorder.snapshot.map(\.sequence)
                // A number that never reached the consumer was dropped by the driver or was a
                // frame too damaged to hand on (counted corrupt).
                XCTAssertEqual(statistics.droppedFrames + statistics.corruptFrames, missingNumbers(sequences),
                               "\(format.pixelFormat.name) \(size): every gap counted, in \(sequences)")
                report.append(String(format: "%@ %@ @ %@: %.1f fps, %d dropped", format.pixelFormat.name, size.description,
                                     rate.description, statistics.measuredFrameRate, statistics.droppedFrames))
            }
        }
        print("figure: USB camera rates through uvcvideo (\(Self.rateFrames) raw frames each): " + report.joined(separator: "; "))
    }

    /// Frames taken at each format and size for its rate: enough for a rate over a dozen frame
    /// intervals and for gaps to show (the whole loop costs about a second per size at 30).
    static let rateFrames = 12
}
