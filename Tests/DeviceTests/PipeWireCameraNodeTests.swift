import AllocationCounter
import Foundation
import Glibc
import MediaDevices
import TestSupport
import XCTest

/// Issue 54: a camera node of our own in a PipeWire session (`PipeWireCameraOutput`), fed with the
/// test pattern as a virtual camera's owner feeds it (each frame converted to the format the
/// consumer negotiated), read by `pw-dump`, `gst-launch-1.0 pipewiresrc` and MediaDevices' own
/// PipeWire backend, byte for byte; consumers coming and going are reported. One camera session
/// (no camera device: dbus, pipewire, wireplumber) serves the class, started again after the test
/// that kills PipeWire.
final class PipeWireCameraNodeTests: XCTestCase {
    override func setUpWithError() throws { try Rig.require() }

    override class func tearDown() {
        NodeSession.shared.stop()
        super.tearDown()
    }

    /// The source's size: small, so the emulated guest converts and copies cheaply.
    static let size = Size(width: 320, height: 240)
    /// YUYV (the pattern's own) at the source's size, NV12 and I420 at it and at 160x120.
    static let offers = PipeWireCameraOffer.standard(sourceFormat: .yuyv, size: size, frameRate: FrameRate(30),
                                                     scaledSizes: [Size(width: 160, height: 120)])

    /// (1) The node is listed with media.class Video/Source, media.role Camera, its names and our
    /// marker; its EnumFormat params are the offers.
    func testNodeIsListedAsACameraWithItsNamesAndOurMarker() throws {
        let session = try NodeSession.shared.session()
        let published = try Publisher(name: "md_test_listed", description: "MediaDevices Test Camera")
        defer { published.close() }
        let id = try XCTUnwrap(published.node.status.nodeID)
        let dump = try session.run("pw-dump \(id)")
        let objects = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(dump.utf8)) as? [[String: Any]], dump)
        let node = try XCTUnwrap(objects.first { ($0["id"] as? Int) == Int(id) }, dump)
        let props = try XCTUnwrap((node["info"] as? [String: Any])?["props"] as? [String: Any], dump)
        XCTAssertEqual(node["type"] as? String, "PipeWire:Interface:Node")
        XCTAssertEqual(props["media.class"] as? String, "Video/Source")
        XCTAssertEqual(props["media.role"] as? String, "Camera")
        XCTAssertEqual(props["node.name"] as? String, "md_test_listed")
        XCTAssertEqual(props["node.description"] as? String, "MediaDevices Test Camera")
        // pw-dump writes the property's "true" as JSON true.
        XCTAssertTrue(props["mediadevices.virtual"] as? Bool == true || props["mediadevices.virtual"] as? String == "true", "\(props)")
        let listed = try session.run("pw-cli ls Node")
        XCTAssertTrue(listed.contains("md_test_listed"), listed)
        // The EnumFormat params as pw-cli reads them: one per offer, in the order given.
        let params = try session.run("pw-cli enum-params \(id) EnumFormat")
        let formats = params.components(separatedBy: "VideoFormat:").dropFirst().map { $0.split(separator: "\n").first.map(String.init) ?? "" }
            .map { String($0.split(separator: "(").last?.split(separator: ")").first ?? "") }
        XCTAssertEqual(formats.map { $0.replacingOccurrences(of: "Spa:Enum:VideoFormat:", with: "") },
                       Self.offers.map { "\(PipeWireCameraNodeTests.spaName($0.format.pixelFormat))" }, params)
        print("figure: node \(id) listed (pw-dump, pw-cli) with \(formats.count) EnumFormat params: \(Self.offers.map(\.description))")
    }

    /// (2) `gst-launch-1.0 pipewiresrc` reads N frames equal to frames the node was sent, in the
    /// brief's pipeline (videoconvert to I420), with NV12 at the scaled size and with YUY2 forced on the link.
    func testPipewiresrcReadsTheFramesSentByteForByte() throws {
        let session = try NodeSession.shared.session()
        let published = try Publisher(name: "md_test_gst", description: "MediaDevices GStreamer Test")
        defer { published.close() }
        let id = try XCTUnwrap(published.node.status.nodeID)
        var figures: [String] = []
        for (caps, expect) in [("videoconvert ! video/x-raw,format=I420", "I420"), ("video/x-raw,format=NV12,width=160,height=120", "NV12"),
                               ("video/x-raw,format=YUY2", "YUY2")] {
            let file = "\(session.directory)/gst-\(expect).raw"
            let log = "\(session.directory)/gst-\(expect).log"
            let frames = 5
            let status = Rig.shell("XDG_RUNTIME_DIR=\(session.directory) PIPEWIRE_REMOTE=\(session.remote) timeout 120 gst-launch-1.0 -q pipewiresrc path=\(id) num-buffers=\(frames) ! \(caps) ! filesink location=\(file) >\(log) 2>&1; echo $?")
            XCTAssertEqual(status.output.trimmingCharacters(in: .whitespacesAndNewlines), "0",
                           "gst-launch (\(caps)): \(Rig.shell("tail -n 20 \(log)").output)\n\(session.report)")
            let negotiated = try XCTUnwrap(published.negotiatedFormats.last, "the node reported no negotiated format")
            let bytes = try Data(contentsOf: URL(fileURLWithPath: file))
            let frameSize = negotiated.format.imageSize
            XCTAssertEqual(bytes.count, frames * frameSize, "\(caps): \(frames) frames of \(negotiated)")
            var matched = 0
            for index in 0..<(bytes.count / max(frameSize, 1)) {
                let frame = [UInt8](bytes[(index * frameSize)..<((index + 1) * frameSize)])
                let expected = negotiated.format.pixelFormat == .yuyv || negotiated.format.pixelFormat == .yu12
                    ? frame : Self.i420(fromNV12: frame, size: negotiated.format.size)
                if published.wasSent(expected, as: negotiated.format.pixelFormat == .nv12 ? .yu12 : negotiated.format.pixelFormat) { matched += 1 }
            }
            XCTAssertEqual(matched, frames, "\(caps): every frame pipewiresrc read is one the node was sent (negotiated \(negotiated))")
            figures.append("\(caps) → negotiated \(negotiated), \(matched)/\(frames) frames equal")
        }
        let counts = published.node.frameCounts
        print("figure: pipewiresrc: \(figures.joined(separator: "; ")); node sent \(counts.sent), dropped \(counts.noBuffer) without a buffer, \(counts.mismatched) mismatched")
    }

    /// (3) MediaDevices' own PipeWire backend lists the node (marked as ours) and reads frames
    /// equal to frames the node was sent.
    func testOurPipeWireBackendListsAndReadsTheNode() throws {
        _ = try NodeSession.shared.session()
        let published = try Publisher(name: "md_test_backend", description: "MediaDevices Backend Test")
        defer { published.close() }
        let id = try XCTUnwrap(published.node.status.nodeID)
        let devices = CaptureDevice.scan(backends: [.pipewire]).devices
        let camera = try XCTUnwrap(devices.first { $0.pipeWireNodes.first?.id == id }, "\(devices)")
        let node = try XCTUnwrap(camera.pipeWireNodes.first)
        XCTAssertEqual(node.name, "md_test_backend")
        XCTAssertEqual(node.displayName, "MediaDevices Backend Test")
        XCTAssertEqual(node.properties[PipeWireCameraOutput.markerKey], "true", "our own list can tell it is ours")
        XCTAssertEqual(Set(node.formats.map(\.pixelFormat)), [.yuyv, .nv12, .yu12])
        let source = try PipeWireCameraSource(device: camera, request: FormatRequest(pixelFormat: .nv12, size: Self.size))
        let recorder = FrameRecorder(target: 10, keepIndex: 5)
        source.consumer = recorder
        try source.start()
        defer { source.release() }
        XCTAssertTrue(recorder.wait(seconds: 60), "10 frames through our backend: \(recorder.records.count); node \(published.node.status)")
        source.stop()
        let kept = try XCTUnwrap(recorder.keptFormat)
        XCTAssertEqual(kept.pixelFormat, .nv12)
        XCTAssertEqual(kept.size, Self.size)
        let packed = Self.packed(recorder.kept.map { ($0.bytes, $0.bytesPerRow) }, format: kept)
        XCTAssertTrue(published.wasSent(Self.i420(fromNV12: packed, size: kept.size), as: .yu12), "the frame our backend read is one the node was sent")
        print("figure: our backend read \(recorder.records.count) frames (NV12 \(Self.size)) from node \(id); the 6th equals a sent frame")
    }

    /// (4) A consumer coming and going: the node reports streaming when it starts and idle within a
    /// second after it is gone.
    func testConsumerComingAndGoingIsReportedWithinASecond() throws {
        let session = try NodeSession.shared.session()
        let published = try Publisher(name: "md_test_consumers", description: "MediaDevices Consumer Test")
        defer { published.close() }
        let id = try XCTUnwrap(published.node.status.nodeID)
        XCTAssertFalse(published.node.status.isStreaming, "idle before any consumer")
        let gst = session.pipewiresrc(node: id)
        let started = Date()
        try gst.run()
        defer { if gst.isRunning { gst.terminate() } }
        XCTAssertTrue(published.waitFor(streaming: true, seconds: 60), "the node reports a consumer streaming: \(published.node.status)")
        let startSeconds = Date().timeIntervalSince(started)
        // Frames flow to it meanwhile, and sending them allocates nothing.
        try Rig.requireAllocationCounting()
        let sentBefore = published.node.frameCounts.sent
        let deadline = Date().addingTimeInterval(20)
        while published.sendFigures.measured < 10 && Date() < deadline { Thread.sleep(forTimeInterval: 0.1) }
        XCTAssertGreaterThan(published.node.frameCounts.sent, sentBefore, "frames go to the consumer")
        let (measured, allocations) = published.sendFigures
        XCTAssertGreaterThanOrEqual(measured, 10, "sends measured")
        XCTAssertEqual(allocations, 0, "send(frame) allocates nothing per frame (\(measured) sends measured)")
        let killed = Date()
        kill(gst.processIdentifier, SIGKILL)
        gst.waitUntilExit()
        let exited = Date()
        XCTAssertTrue(published.waitFor(streaming: false, seconds: 10), "the node reports the consumer gone: \(published.node.status)")
        // From the consumer's exit as this process saw it to the node's report (negative: the
        // report came first; waitpid's wake-up is slow in the emulated guest).
        let idleAt = try XCTUnwrap(published.idleReportedAt)
        let goneSeconds = idleAt.timeIntervalSince(exited)
        XCTAssertLessThan(goneSeconds, 1.0, "reported within a second after the last consumer left")
        // Idle, the node stays published (listed, ready for the next consumer).
        XCTAssertEqual(published.node.status.nodeID, id)
        XCTAssertNil(published.node.status.error)
        XCTAssertNoThrow(try session.run("pw-cli info \(id)"))
        print(String(format: "figure: consumer came: streaming reported %.2f s after gst-launch started; left: idle reported %.3f s after SIGKILL (%.3f s after this process saw gst-launch exit); the node stays listed; %d sends measured, %d heap allocations in them", startSeconds, idleAt.timeIntervalSince(killed), goneSeconds, measured, Int(allocations)))
    }

    /// No PipeWire (nothing at PIPEWIRE_REMOTE): `.notFound`, naming what to start.
    func testNoPipeWireIsNotFoundNamingWhatToStart() throws {
        let saved = getenv("PIPEWIRE_REMOTE").map { String(cString: $0) }
        setenv("PIPEWIRE_REMOTE", "\(Rig.scratch)/no-such-pipewire-0", 1)
        defer { if let saved { setenv("PIPEWIRE_REMOTE", saved, 1) } else { unsetenv("PIPEWIRE_REMOTE") } }
        XCTAssertThrowsError(try PipeWireCameraOutput(name: "md_test_none", description: "None", offers: Self.offers)) { error in
            let error = error as? MediaDevicesError
            XCTAssertEqual(error?.code, .notFound, "\(String(describing: error))")
            XCTAssertTrue("\(error.map { "\($0)" } ?? "")".contains("wireplumber"), "\(String(describing: error))")
        }
    }

    /// PipeWire killed while the node is published: the status says `.disconnected`, `send` throws
    /// it, and closing stops the node's threads. (Named to run last: the class's session is started
    /// again if a test after it needs one.)
    func testWhenPipeWireQuitsTheNodeEndsDisconnectedAndClosesClean() throws {
        let session = try NodeSession.shared.session()
        let published = try Publisher(name: "md_test_gone", description: "MediaDevices Gone Test")
        defer { published.close() }
        let threadsBefore = Self.threadCount
        try session.kill("pipewire")
        XCTAssertTrue(published.waitForError(seconds: 10), "the node reports PipeWire gone: \(published.node.status)")
        let error = try XCTUnwrap(published.node.status.error)
        XCTAssertEqual(error.code, .disconnected, "\(error)")
        XCTAssertThrowsError(try published.node.send(Self.blankFrame())) { sent in
            XCTAssertEqual((sent as? MediaDevicesError)?.code, .disconnected, "\(sent)")
        }
        published.close()
        XCTAssertThrowsError(try published.node.send(Self.blankFrame())) { error in
            XCTAssertEqual((error as? MediaDevicesError)?.code, .invalidState, "\(error)")
        }
        XCTAssertLessThan(Self.threadCount, threadsBefore, "closing stopped the node's threads")
        print("figure: PipeWire killed: the node reported \(error.code): \(error)")
        NodeSession.shared.stop()
    }

    // MARK: - Helpers

    /// Threads of this process.
    static var threadCount: Int { (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").count) ?? 0 }

    /// SPA's short name of `format`, as pw-cli prints it.
    static func spaName(_ format: PixelFormat) -> String {
        switch format {
        case .yuyv: "YUY2"
        case .nv12: "NV12"
        case .yu12: "I420"
        default: "\(format)"
        }
    }

    /// A YUYV frame of the source's size, zeros.
    static func blankFrame() -> VideoFrame {
        let format = VideoFormat(pixelFormat: .yuyv, width: size.width, height: size.height)
        let bytes = UnsafeMutableRawBufferPointer.allocate(byteCount: format.imageSize, alignment: 16)
        bytes.initializeMemory(as: UInt8.self, repeating: 0)
        return VideoFrame(format: format, timestamp: .now, sequence: 0, orientation: .up, captureDelay: .zero, planeCount: 1,
                          bytesUsed: format.imageSize, plane0: FramePlane(bytes: UnsafeRawBufferPointer(bytes), bytesPerRow: format.bytesPerRow[0]))
    }

    /// `planes` (bytes and their row strides) tightly packed as `format` lays a frame out.
    static func packed(_ planes: [(bytes: [UInt8], bytesPerRow: Int)], format: VideoFormat) -> [UInt8] {
        let packed = VideoFormat(pixelFormat: format.pixelFormat, width: format.width, height: format.height)
        let layouts = format.pixelFormat.layout?.planes ?? []
        var out: [UInt8] = []
        for (index, plane) in layouts.enumerated() where index < planes.count {
            let rowBytes = packed.bytesPerRow[index]
            for row in 0..<plane.rows(height: format.height) {
                let start = row * planes[index].bytesPerRow
                out += planes[index].bytes[start..<(start + rowBytes)]
            }
        }
        return out
    }

    /// An NV12 frame (packed) as I420: the same samples, chroma de-interleaved (lossless).
    static func i420(fromNV12 frame: [UInt8], size: Size) -> [UInt8] {
        let luma = size.width * size.height
        let chroma = (size.width / 2) * (size.height / 2)
        guard frame.count >= luma + 2 * chroma else { return frame }
        var out = Array(frame[0..<luma])
        var u = [UInt8](), v = [UInt8]()
        u.reserveCapacity(chroma); v.reserveCapacity(chroma)
        for i in 0..<chroma {
            u.append(frame[luma + 2 * i]); v.append(frame[luma + 2 * i + 1])
        }
        out += u + v
        return out
    }

    /// The test pattern published on a node as a virtual camera's owner does it: the pattern runs
    /// (YUYV at `size`) while a consumer streams, and each frame goes to the node in the format the
    /// consumer negotiated (converted by `FrameConverter`, or as it is for YUYV at the source's
    /// size). Keeps what it sent (as I420, or as YUYV for YUYV) to compare readers' frames with.
    final class Publisher: VideoFrameConsumer, @unchecked Sendable {
        let node: PipeWireCameraOutput
        let source = TestPatternSource(pattern: .colorBars, request: FormatRequest(pixelFormat: .yuyv, size: PipeWireCameraNodeTests.size, frameRate: FrameRate(30)))
        private let lock = NSCondition()
        private var current: PipeWireCameraNodeStatusBox = .init()
        private var converters: [PipeWireCameraOffer: FrameConverter] = [:]
        private var referenceConverters: [Size: FrameConverter] = [:]
        private var sent: [[UInt8]] = []
        private var sentYUYV: [[UInt8]] = []
        private(set) var negotiatedFormats: [PipeWireCameraOffer] = []
        private(set) var lastSendError: MediaDevicesError?
        /// When the node last reported going from streaming to idle.
        private(set) var idleReportedAt: Date?

        init(name: String, description: String) throws {
            let box = WeakPublisher()
            node = try PipeWireCameraOutput(name: name, description: description, offers: PipeWireCameraNodeTests.offers) { status in
                box.publisher?.changed(status)
            }
            box.publisher = self
            changed(node.status)
            source.consumer = self
            try source.initialize()
        }

        private final class WeakPublisher: @unchecked Sendable { weak var publisher: Publisher? }

        /// The owner's part: start the source when a consumer streams, stop it when none does.
        func changed(_ status: PipeWireCameraOutput.Status) {
            lock.lock()
            let wasStreaming = current.status?.isStreaming ?? false
            current.status = status
            if wasStreaming && !status.isStreaming { idleReportedAt = Date() }
            if let format = status.format, negotiatedFormats.last != format { negotiatedFormats.append(format) }
            lock.broadcast()
            lock.unlock()
            if status.isStreaming && !wasStreaming { try? source.start() }
            if !status.isStreaming && wasStreaming { source.stop() }
        }

        func consumeFrame(_ frame: VideoFrame) {
            lock.lock()
            let offer = current.status?.format
            lock.unlock()
            guard let offer else { return }
            do {
                if offer.format.pixelFormat == frame.format.pixelFormat && offer.format.size == frame.format.size {
                    remember(frame, as: offer)
                    try measuredSend(frame)
                } else {
                    let converter = try converter(for: offer)
                    try converter.convert(frame) { converted in
                        remember(converted, as: offer)
                        try measuredSend(converted)
                    }
                }
            } catch {
                lock.lock(); lastSendError = error as? MediaDevicesError; lock.unlock()
            }
        }

        /// `node.send(frame)`, its heap allocations on this thread counted after the first 5 sends.
        private func measuredSend(_ frame: VideoFrame) throws {
            let before = allocation_counter_this_thread()
            let result = try node.send(frame)
            let after = allocation_counter_this_thread()
            lock.lock(); defer { lock.unlock() }
            sends += 1
            if sends > 5 && result == .sent {
                measuredSends += 1
                sendAllocations += after - before
            }
        }

        /// Sends made, sends measured (sent, after the first 5) and the allocations they made.
        private var sends = 0
        private(set) var measuredSends = 0
        private(set) var sendAllocations: UInt64 = 0

        private func converter(for offer: PipeWireCameraOffer) throws -> FrameConverter {
            if let converter = converters[offer] { return converter }
            let made = try FrameConverter(output: OutputFormat(offer.format.pixelFormat, size: offer.format.size))
            converters[offer] = made
            return made
        }

        /// Keeps `frame` (sent as `offer`): as I420 for NV12 and I420, as YUYV for YUYV.
        private func remember(_ frame: VideoFrame, as offer: PipeWireCameraOffer) {
            var bytes = PipeWireCameraNodeTests.packed((0..<frame.planeCount).map { (Array(frame.plane($0).bytes), frame.plane($0).bytesPerRow) },
                                                       format: frame.format)
            if frame.format.pixelFormat == .nv12 { bytes = PipeWireCameraNodeTests.i420(fromNV12: bytes, size: frame.format.size) }
            lock.lock()
            if frame.format.pixelFormat == .yuyv {
                sentYUYV.append(bytes)
                if sentYUYV.count > 300 { sentYUYV.removeFirst() }
            } else {
                sent.append(bytes)
                if sent.count > 300 { sent.removeFirst() }
            }
            lock.unlock()
        }

        /// Whether `frame` (I420 or YUYV, packed) is one that was sent.
        func wasSent(_ frame: [UInt8], as format: PixelFormat) -> Bool {
            lock.lock(); defer { lock.unlock() }
            return (format == .yuyv ? sentYUYV : sent).contains(frame)
        }

        /// Sends measured and the heap allocations they made.
        var sendFigures: (measured: Int, allocations: UInt64) {
            lock.lock(); defer { lock.unlock() }
            return (measuredSends, sendAllocations)
        }

        /// Waits until the node reports (not) streaming.
        func waitFor(streaming: Bool, seconds: Double) -> Bool {
            let deadline = Date().addingTimeInterval(seconds)
            lock.lock(); defer { lock.unlock() }
            while (current.status?.isStreaming ?? false) != streaming {
                if !lock.wait(until: deadline) { return false }
            }
            return true
        }

        /// Waits until the node reports an error.
        func waitForError(seconds: Double) -> Bool {
            let deadline = Date().addingTimeInterval(seconds)
            lock.lock(); defer { lock.unlock() }
            while current.status?.error == nil {
                if !lock.wait(until: deadline) { return false }
            }
            return true
        }

        func close() {
            source.release()
            node.close()
        }
    }

    /// One camera session (no camera: dbus, pipewire, wireplumber) for the class, started again
    /// when PipeWire no longer answers (a test killed it).
    final class NodeSession: @unchecked Sendable {
        static let shared = NodeSession()
        private var running: CameraSession?
        private var started = 0

        func session() throws -> CameraSession {
            if let running, Rig.shell("XDG_RUNTIME_DIR=\(running.directory) PIPEWIRE_REMOTE=\(running.remote) timeout 10 pw-cli info 0 >/dev/null 2>&1").status == 0 {
                setenv("PIPEWIRE_REMOTE", running.remote, 1)
                return running
            }
            running?.stop()
            started += 1
            let fresh = try CameraSession(name: "node-\(started)", devices: [])
            print(String(format: "figure: camera session %d (dbus-daemon, pipewire, wireplumber; no camera) started in %.1f s", started, fresh.seconds))
            running = fresh
            return fresh
        }

        func stop() {
            running?.stop()
            running = nil
        }
    }
}

/// The latest status a `Publisher` saw.
struct PipeWireCameraNodeStatusBox {
    var status: PipeWireCameraOutput.Status?
}
