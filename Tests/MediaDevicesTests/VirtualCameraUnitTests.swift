import Foundation
@testable import MediaDevicesCore
@testable import MediaDevicesVideo
import TestSupport
import XCTest

/// The parts of ``VirtualCamera`` that need no device: finding a node's openers in a procfs laid
/// out in a folder, turning scans into consumers, and the format published.
final class VirtualCameraUnitTests: XCTestCase {
    private var root = ""

    override func setUpWithError() throws {
        root = NSTemporaryDirectory() + "vcam-proc-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws { try? FileManager.default.removeItem(atPath: root) }

    /// A process `pid` named `command` with fds linking to `targets`.
    private func process(_ pid: Int32, _ command: String, _ targets: [String]) throws {
        let folder = "\(root)/\(pid)"
        try FileManager.default.createDirectory(atPath: "\(folder)/fd", withIntermediateDirectories: true)
        try "\(command)\n".write(toFile: "\(folder)/comm", atomically: false, encoding: .utf8)
        for (fd, target) in targets.enumerated() {
            try FileManager.default.createSymbolicLink(atPath: "\(folder)/fd/\(fd)", withDestinationPath: target)
        }
    }

    func testScanFindsTheProcessesHoldingTheNodes() throws {
        try process(100, "ffmpeg", ["/dev/null", "/dev/video10", "pipe:[1234]"])
        try process(7, "chromium", ["/dev/video11", "/dev/video10", "socket:[9]"])
        try process(55, "bash", ["/dev/pts/0", "/dev/video1"])
        try process(42, "ourselves", ["/dev/video10"])
        try FileManager.default.createDirectory(atPath: "\(root)/self", withIntermediateDirectories: true)
        try "x".write(toFile: "\(root)/uptime", atomically: false, encoding: .utf8)
        let scanner = NodeOpeners(procRoot: root, excluding: 42)
        XCTAssertEqual(scanner.scan(["/dev/video10", "/dev/video11"]), [
            NodeOpeners.Opener(pid: 7, command: "chromium", node: "/dev/video10"),
            NodeOpeners.Opener(pid: 7, command: "chromium", node: "/dev/video11"),
            NodeOpeners.Opener(pid: 100, command: "ffmpeg", node: "/dev/video10"),
        ])
        XCTAssertEqual(scanner.scan(["/dev/video12"]), [])
        XCTAssertEqual(NodeOpeners(procRoot: root, excluding: 0).scan(["/dev/video10"]).map(\.pid), [7, 42, 100])
        XCTAssertEqual(NodeOpeners(procRoot: root + "/missing").scan(["/dev/video10"]), [])
    }

    func testScanOfTheRealProcSeesOurOwnDescriptorOnlyWhenAsked() throws {
        let path = root + "/node"
        FileManager.default.createFile(atPath: path, contents: Data())
        let handle = try XCTUnwrap(FileHandle(forReadingAtPath: path))
        defer { try? handle.close() }
        let canonical = NodeOpeners.canonical(path)
        XCTAssertEqual(NodeOpeners().scan([canonical]), [], "our own process is left out")
        let ours = NodeOpeners(excluding: -1).scan([canonical])
        XCTAssertEqual(ours.map(\.pid), [getpid()])
        XCTAssertFalse(ours[0].command.isEmpty)
    }

    /// The watcher scans `/proc` only after this says the node was opened or closed.
    func testOpenWatchTellsOpensAndClosesOfTheNodeOnly() throws {
        let path = root + "/node", other = root + "/other"
        for file in [path, other] { FileManager.default.createFile(atPath: file, contents: Data()) }
        let watch = try XCTUnwrap(NodeOpenWatch(paths: [path]))
        XCTAssertFalse(watch.drain(), "nothing happened yet")
        let otherHandle = try XCTUnwrap(FileHandle(forReadingAtPath: other))
        try otherHandle.close()
        XCTAssertFalse(watch.drain(), "another file's open and close are not the node's")
        let handle = try XCTUnwrap(FileHandle(forReadingAtPath: path))
        XCTAssertTrue(watch.drain(), "an open")
        XCTAssertFalse(watch.drain(), "read off")
        try handle.close()
        XCTAssertTrue(watch.drain(), "a close")
        XCTAssertNil(NodeOpenWatch(paths: [root + "/missing"]), "no such node: the watcher scans on its timer")
    }

    func testConsumersNeedTwoScansAndLeaveAtTheFirstWithout() {
        var tracker = ConsumerTracker()
        let ffmpeg = NodeOpeners.Opener(pid: 100, command: "ffmpeg", node: "/dev/video10")
        let look = NodeOpeners.Opener(pid: 7, command: "v4l2-ctl", node: "/dev/video10")
        XCTAssertFalse(tracker.hasPending)
        var change = tracker.update([ffmpeg, look])
        XCTAssertEqual(change.connected, [])
        XCTAssertEqual(tracker.consumers, [])
        XCTAssertTrue(tracker.hasPending, "both wait for a second scan")
        change = tracker.update([ffmpeg])  // the look is over: never a consumer
        XCTAssertEqual(change.connected, [ffmpeg])
        XCTAssertEqual(change.left, [])
        XCTAssertFalse(tracker.hasPending, "nobody waits: the watcher scans again only when the node is opened or closed")
        change = tracker.update([ffmpeg, look])
        XCTAssertEqual(change.connected, [])
        XCTAssertEqual(tracker.consumers, [ffmpeg])
        change = tracker.update([look])
        XCTAssertEqual(change.left, [ffmpeg])
        XCTAssertEqual(change.connected, [look])
        XCTAssertEqual(tracker.consumers, [look])
        change = tracker.update([])
        XCTAssertEqual(change.left, [look])
        XCTAssertEqual(tracker.consumers, [])
        var eager = ConsumerTracker(confirmations: 1)
        XCTAssertEqual(eager.update([look]).connected, [look])
    }

    func testFormatChoice() throws {
        let yuyv720 = VideoFormat(pixelFormat: .yuyv, width: 1280, height: 720)
        // Defaults: I420 at the source's size and rate, converted.
        var choice = try LoopbackFormat.choose(nil, source: yuyv720, sourceRate: FrameRate(25), device: "/dev/video10")
        XCTAssertEqual(choice, LoopbackFormat(pixelFormat: .yu12, size: Size(width: 1280, height: 720), frameRate: FrameRate(25),
                                              conversion: OutputFormat(.yu12, size: Size(width: 1280, height: 720))))
        // Nothing known: 640x480 at 30.
        choice = try LoopbackFormat.choose(nil, source: nil, sourceRate: nil, device: "/dev/video10")
        XCTAssertEqual(choice.size, Size(width: 640, height: 480))
        XCTAssertEqual(choice.frameRate, FrameRate(30))
        // NV12 at another size: scaled by the pipeline.
        choice = try LoopbackFormat.choose(FormatRequest(pixelFormat: .nv12, size: Size(width: 640, height: 480), frameRate: FrameRate(15)),
                                           source: yuyv720, sourceRate: FrameRate(30), device: "/dev/video10")
        XCTAssertEqual(choice.conversion, OutputFormat(.nv12, size: Size(width: 640, height: 480)))
        XCTAssertEqual(choice.frameRate, FrameRate(15))
        // The source's own YUYV at its own size: written as it comes.
        choice = try LoopbackFormat.choose(FormatRequest(pixelFormat: .yuyv), source: yuyv720, sourceRate: nil, device: "/dev/video10")
        XCTAssertNil(choice.conversion)
        XCTAssertEqual(choice.pixelFormat, .yuyv)
        // YUYV at another size: the pipeline does not make it.
        XCTAssertThrowsError(try LoopbackFormat.choose(FormatRequest(pixelFormat: .yuyv, size: Size(width: 640, height: 480)),
                                                       source: yuyv720, sourceRate: nil, device: "/dev/video10")) { error in
            XCTAssertEqual((error as? MediaDevicesError)?.code, .unsupportedFormat)
            XCTAssertTrue("\(error)".contains("I420"), "\(error)")
        }
        // An odd 4:2:0 size, and a tiny one.
        for size in [Size(width: 641, height: 480), Size(width: 8, height: 8)] {
            XCTAssertThrowsError(try LoopbackFormat.choose(FormatRequest(size: size), source: yuyv720, sourceRate: nil, device: "/dev/video10")) { error in
                XCTAssertEqual((error as? MediaDevicesError)?.code, .invalidValue)
            }
        }
    }

    func testNoOutputsIsAnErrorNamingTheSourceAndTheRemedy() {
        let camera = VirtualCamera(source: TestPatternSource(), outputs: [])
        XCTAssertThrowsError(try camera.start()) { error in
            let error = error as? MediaDevicesError
            XCTAssertEqual(error?.code, .invalidState)
            XCTAssertEqual(error?.device, "virtual camera of TestPatternSource", "\(String(describing: error))")
            XCTAssertTrue(error?.remedy?.contains(".pipeWire(name:") == true && error?.remedy?.contains(".v4l2Loopback(path:") == true,
                          "\(String(describing: error))")
        }
        XCTAssertFalse(camera.isSourceRunning)
    }

    /// `start()` while another thread starts or stops the camera: `.invalidState` naming the
    /// outputs, what is going on and what to do.
    func testStartWhileAnotherThreadStartsOrStopsNamesTheDeviceAndTheRemedy() {
        let camera = VirtualCamera(source: TestPatternSource(), outputs: [.pipeWire(name: "md_unit"), .v4l2Loopback(path: "/dev/video10")])
        for phase in [VirtualCamera.Phase.starting, .stopping] {
            camera.state.withLock { $0.phase = phase }
            XCTAssertThrowsError(try camera.start()) { error in
                let error = error as? MediaDevicesError
                XCTAssertEqual(error?.code, .invalidState)
                XCTAssertEqual(error?.device, "pipewire:md_unit,/dev/video10", "\(String(describing: error))")
                XCTAssertTrue(error?.detail.contains(phase == .starting ? "starting" : "stopping") == true, "\(String(describing: error))")
                XCTAssertTrue(error?.remedy?.contains("Wait for that start() or stop() to return") == true, "\(String(describing: error))")
            }
        }
        camera.state.withLock { $0.phase = .idle }
    }

    /// Outputs of one format share a pump (converted once); each other format gets its own.
    func testPlansGroupOutputsByFormat() throws {
        let i420 = VideoFormat(pixelFormat: .yu12, width: 640, height: 480)
        let small = VideoFormat(pixelFormat: .yu12, width: 320, height: 240)
        let yuyv = VideoFormat(pixelFormat: .yuyv, width: 640, height: 480)
        let writers = try (0..<4).map { _ in LoopbackWriter(file: try DeviceFile(path: "/dev/null"), format: i420) }
        let plans = PumpPlan.grouping([(i420, .loopback(writers[0])), (small, .loopback(writers[1])), (i420, .loopback(writers[2])),
                                       (yuyv, .loopback(writers[3]))])
        XCTAssertEqual(plans.map(\.pixelFormat), [.yu12, .yu12, .yuyv])
        XCTAssertEqual(plans.map(\.size), [i420.size, small.size, yuyv.size])
        XCTAssertEqual(plans.map { $0.sinks.map(\.identity) },
                       [[ObjectIdentifier(writers[0]), ObjectIdentifier(writers[2])], [ObjectIdentifier(writers[1])], [ObjectIdentifier(writers[3])]])
        XCTAssertEqual(plans[0].conversion?.pixelFormat, .yu12, "I420 is made by the pixel pipeline")
        XCTAssertEqual(plans[1].conversion?.size, small.size)
        XCTAssertNil(plans[2].conversion, "YUYV is the source's own frames")
        XCTAssertNotEqual(plans[0], PumpPlan(pixelFormat: .yu12, size: i420.size, sinks: [.loopback(writers[0])]), "other outputs, another plan")
    }

    /// `isVirtual`: a v4l2loopback device, a PipeWire node carrying our marker or wrapping a
    /// loopback device; not vivid, not a plain PipeWire camera.
    func testVirtualCamerasAreMarked() {
        func device(driver: String, nodeProperties: [String: String]? = nil) -> CaptureDevice {
            let routes: [CaptureRoute] = nodeProperties.map {
                [.pipewire(PipeWireCameraNode(id: 42, serial: 42, properties: $0, formats: [], givesFrameRates: true, unmappedFormats: []))]
            } ?? [.v4l2(path: "/dev/video10")]
            return CaptureDevice(path: "/dev/video10", name: "Camera", driver: driver, busInfo: "platform:x", capabilities: 0,
                                 uniqueID: "x", position: .unknown, isMultiplanar: false, routes: routes)
        }
        XCTAssertTrue(device(driver: "v4l2 loopback").isVirtual)
        XCTAssertFalse(device(driver: "vivid").isVirtual)
        XCTAssertTrue(device(driver: "pipewire", nodeProperties: ["node.name": "md_cam", "mediadevices.virtual": "true"]).isVirtual)
        XCTAssertTrue(device(driver: "pipewire", nodeProperties: ["node.name": "v4l2_input.x", "api.v4l2.cap.driver": "v4l2 loopback"]).isVirtual)
        XCTAssertFalse(device(driver: "pipewire", nodeProperties: ["node.name": "v4l2_input.y", "api.v4l2.cap.driver": "uvcvideo"]).isVirtual)
    }

    func testAMissingNodeSaysHowToLoadTheModule() {
        let camera = VirtualCamera(source: TestPatternSource(), outputs: [.v4l2Loopback(path: "/dev/video-missing-\(getpid())")])
        XCTAssertThrowsError(try camera.start()) { error in
            let error = error as? MediaDevicesError
            XCTAssertEqual(error?.code, .notFound)
            XCTAssertTrue(error?.remedy?.contains("modprobe v4l2loopback") == true, "\(String(describing: error))")
        }
        XCTAssertFalse(camera.isSourceRunning)
    }

    func testAFileThatIsNoV4L2NodeIsRefused() {
        let camera = VirtualCamera(source: TestPatternSource(), outputs: [.v4l2Loopback(path: "/dev/null")])
        XCTAssertThrowsError(try camera.start()) { error in
            let error = error as? MediaDevicesError
            XCTAssertEqual(error?.code, .invalidValue)
            XCTAssertTrue(error?.detail.contains("not a v4l2loopback device") == true, "\(String(describing: error))")
        }
    }
}

/// The pump's steady state on the host: the test pattern converted to I420 and written (to
/// /dev/null, standing in for the loopback device) by the task on the capture executor.
final class VirtualCameraPumpAllocationTests: XCTestCase {
    func testThePumpAllocatesNothingPerFrame() throws {
        if let why = AllocationProbe.unavailableReason { print("skip: \(why)"); throw XCTSkip(why) }
        XCTAssertTrue(AllocationProbe.isActive, "malloc is interposed in the test binary")
        for (drawn, size) in [(PixelFormat.yu12, Size(width: 640, height: 480)), (.yuyv, Size(width: 320, height: 240))] {
            let source = TestPatternSource(request: FormatRequest(pixelFormat: drawn, size: Size(width: 640, height: 480), frameRate: FrameRate(120)))
            let probe = AllocationProbe(warmUp: 20, measured: 200)
            source.consumer = probe
            let format = VideoFormat(pixelFormat: .yu12, width: size.width, height: size.height)
            let writer = LoopbackWriter(file: try DeviceFile(path: "/dev/null"), format: format)
            let figures = WriteFigures()
            try source.start()
            let frames = try source.frameSequence(bufferSize: 2, output: OutputFormat(.yu12, size: size))
            let pump = VirtualCamera.pump(frames, to: [.loopback(writer)], executor: source.captureExecutor, figures: figures,
                                          events: VirtualCameraEvents(), device: "/dev/null")
            XCTAssertEqual(probe.done.wait(timeout: .now() + 60), .success)
            source.stop()
            pump.cancel()
            XCTAssertEqual(figures.failed.load(ordering: .relaxed), 0)
            XCTAssertGreaterThan(figures.written.load(ordering: .relaxed), 150, "\(drawn) to I420 \(size): frames written")
            XCTAssertEqual(probe.allocations, 0, "\(drawn) to I420 \(size): heap allocations on the capture thread over 200 frames (draw, convert, the pump's read and write)")
        }
    }
}
