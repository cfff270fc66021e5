import Foundation
import Glibc
@testable import MediaDevicesCore
@testable import MediaDevicesVideo
import XCTest

/// Issue 54: vivid published as a `VirtualCamera` on a PipeWire node (`.pipeWire(name:)`), read
/// by `gst-launch-1.0 pipewiresrc` and by MediaDevices' own PipeWire backend with vivid's colours;
/// on demand, vivid streams only while a PipeWire consumer streams from the node (vivid's queue,
/// as the driver reports it, is free within a second after the last reader left); a name taken
/// is refused. One camera session (dbus, pipewire, wireplumber) per test.
final class VirtualCameraPipeWireTests: XCTestCase {
    /// vivid's size and the published one (I420, the pipeline converts vivid's YUYV).
    static let size = Size(width: 640, height: 360)

    private var session: CameraSession?
    nonisolated(unsafe) private static var sessions = 0
    private var vivid = ""
    private var loadedLoopback = false

    override func setUpWithError() throws {
        try Rig.require()
        vivid = try Rig.loadVivid("n_devs=1 node_types=0x1")[0]
        // A short name: the session's socket path must fit a sockaddr_un (108 bytes).
        Self.sessions += 1
        session = try CameraSession(name: "vcam-\(Self.sessions)", devices: [])
    }

    override func tearDown() {
        session?.stop()
        session = nil
        Rig.shell("modprobe -r vivid")
        // A loopback device a test used goes with its format (v4l2loopback keeps it while loaded):
        // the next class makes its own.
        if loadedLoopback { Rig.shell("\(Rig.script("v4l2loopback.sh")) unload") }
        super.tearDown()
    }

    /// vivid's 75% colour bars, published as I420 on a node: `pipewiresrc` (through
    /// `videoconvert ! video/x-raw,format=I420`) and our PipeWire backend read the bars with the
    /// colours a direct read of vivid, converted by the same pipeline, has (each bar's mean Y, U
    /// and V within 6 levels); the node is listed as virtual; gst-launch is reported as a consumer.
    func testVividBarsReadByPipewiresrcAndOurBackendWithTheirColours() throws {
        let session = try XCTUnwrap(session)
        let device = try CaptureDevice(path: vivid)
        Self.step("bars: reading vivid directly")
        let reference = try Self.directBars(device)
        // The reference itself is the bars: Y falls from white to black, bar by bar.
        for index in 1..<8 {
            XCTAssertLessThan(reference[index].y, reference[index - 1].y - 5, "vivid's bars, read directly: \(reference)")
        }
        let (source, camera) = try Self.publish(vivid, on: [.pipeWire(name: "md_vcam_bars")])
        let recorder = EventLog(camera.events)
        Self.step("bars: starting the camera")
        try camera.start()
        defer { camera.stop(); source.release() }
        let id = try XCTUnwrap(Self.nodeID(camera), "the node is published")
        Self.step("bars: node \(id) published; running gst-launch")
        XCTAssertFalse(source.isCapturing, "nobody reads: vivid is off")

        // pipewiresrc, as the brief's pipeline has it.
        let file = "\(session.directory)/vcam-gst.i420", log = "\(session.directory)/vcam-gst.log"
        let frames = 5
        let status = Rig.shell("XDG_RUNTIME_DIR=\(session.directory) PIPEWIRE_REMOTE=\(session.remote) timeout 180 gst-launch-1.0 -q pipewiresrc path=\(id) num-buffers=\(frames) ! videoconvert ! video/x-raw,format=I420 ! filesink location=\(file) >\(log) 2>&1; echo $?")
        XCTAssertEqual(status.output.trimmingCharacters(in: .whitespacesAndNewlines), "0",
                       "gst-launch: \(Rig.shell("tail -n 20 \(log)").output)\n\(session.report)")
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: file)))
        let frameSize = Self.size.width * Self.size.height * 3 / 2
        XCTAssertEqual(bytes.count, frames * frameSize, "\(frames) I420 frames of \(Self.size)")
        let gstBars = Self.bars(Array(bytes.suffix(frameSize)), size: Self.size)
        Self.assertColours(gstBars, equal: reference, reader: "pipewiresrc")

        Self.step("bars: gst-launch done; our backend next")
        // Our own backend: lists the node as a virtual camera, reads it.
        let listed = CaptureDevice.scan(backends: [.pipewire]).devices
        let camera2 = try XCTUnwrap(listed.first { $0.pipeWireNodes.first?.name == "md_vcam_bars" }, "\(listed)")
        XCTAssertTrue(camera2.isVirtual, "our own node is marked virtual")
        XCTAssertFalse(listed.first { $0.pipeWireNodes.first?.v4l2Path == vivid }?.isVirtual ?? false, "vivid's own node is not")
        let reader = try PipeWireCameraSource(device: camera2, request: FormatRequest(pixelFormat: .yu12, size: Self.size))
        let frameRecorder = FrameRecorder(target: 8, keepIndex: 6)
        reader.consumer = frameRecorder
        try reader.start()
        XCTAssertTrue(frameRecorder.wait(seconds: 120), "8 frames through our backend: \(frameRecorder.records.count)")
        reader.release()
        let kept = try XCTUnwrap(frameRecorder.keptFormat)
        XCTAssertEqual(kept.pixelFormat, .yu12)
        XCTAssertEqual(kept.size, Self.size)
        let packed = PipeWireCameraNodeTests.packed(frameRecorder.kept.map { ($0.bytes, $0.bytesPerRow) }, format: kept)
        Self.assertColours(Self.bars(packed, size: Self.size), equal: reference, reader: "our PipeWire backend")

        XCTAssertTrue(waitUntil(seconds: 30) { !source.isCapturing }, "vivid stops after the readers left")
        camera.stop()
        let kinds = recorder.wait().map(\.kind)
        XCTAssertTrue(kinds.contains("+gst-launch-1.0"), "gst-launch is reported as a consumer: \(kinds)")
        XCTAssertTrue(kinds.contains("-gst-launch-1.0"), "and as gone: \(kinds)")
        XCTAssertEqual(kinds.filter { $0 == "started" }.count, kinds.filter { $0 == "stopped" }.count, "\(kinds)")
        XCTAssertFalse(kinds.contains("failed"), "\(kinds)")
        let written = camera.writeFigures
        XCTAssertEqual(written.failed, 0, "no write to the node failed")
        print("figure: vivid bars on node \(id): reference Y \(reference.map(\.y)); pipewiresrc Y \(gstBars.map(\.y)) U \(gstBars.map(\.u)) V \(gstBars.map(\.v)); events \(kinds); \(written.written) frames sent")
    }

    /// On demand: vivid streams (its queue owned: `VIDIOC_REQBUFS` from another file is `EBUSY`)
    /// only while a PipeWire consumer streams from the node; it is free within a second after the
    /// consumer's exit, and a new consumer starts it again.
    func testOnDemandVividFollowsThePipeWireConsumers() throws {
        let session = try XCTUnwrap(session)
        let (source, camera) = try Self.publish(vivid, on: [.pipeWire(name: "md_vcam_demand")])
        let recorder = EventLog(camera.events)
        Self.step("on demand: starting the camera")
        try camera.start()
        defer { camera.stop(); source.release() }
        let id = try XCTUnwrap(Self.nodeID(camera))
        Self.step("on demand: node \(id) published")
        usleep(500_000)
        XCTAssertEqual(Self.queueBusy(vivid), false, "idle: vivid's queue is free")
        var starts: [Double] = [], stops: [Double] = []
        for round in 0..<2 {
            let gst = session.pipewiresrc(node: id)
            let spawned = Date()
            try gst.run()
            Self.step("round \(round): gst-launch started")
            defer { if gst.isRunning { gst.terminate() } }
            XCTAssertTrue(waitUntil(seconds: 120, every: 20_000) { Self.queueBusy(vivid) == true }, "round \(round): a consumer starts vivid streaming")
            starts.append(Date().timeIntervalSince(spawned))
            Self.step("round \(round): vivid busy \(Self.queueBusy(vivid).map(String.init) ?? "?"), consumers \(camera.consumers)")
            // The driver's queue is taken inside the source's start(), which then returns.
            XCTAssertTrue(waitUntil(seconds: 30) { source.isCapturing }, "round \(round): the source runs")
            // Frames reach the node meanwhile.
            let sent = camera.writeFigures.written
            XCTAssertTrue(waitUntil(seconds: 60) { camera.writeFigures.written >= sent + 5 }, "round \(round): frames go to the node")
            Self.step("round \(round): \(camera.writeFigures) written; killing gst-launch")
            kill(gst.processIdentifier, SIGKILL)
            gst.waitUntilExit()
            let exited = Date()
            var freed: Date?
            XCTAssertTrue(waitUntil(seconds: 30, every: 10_000) {
                if Self.queueBusy(vivid) == false { freed = Date() }
                return freed != nil
            }, "round \(round): vivid stops after the consumer left")
            if let freed {
                stops.append(freed.timeIntervalSince(exited))
                XCTAssertLessThan(stops.last!, 1.0, "round \(round): vivid's queue is free within 1 s after the last consumer's exit")
            }
            XCTAssertFalse(source.isCapturing)
        }
        // Idle, the node stays listed.
        XCTAssertNoThrow(try session.run("pw-cli info \(id)"))
        camera.stop()
        let kinds = recorder.wait().map(\.kind)
        XCTAssertEqual(kinds.filter { $0 == "started" }.count, 2, "\(kinds)")
        XCTAssertEqual(kinds.filter { $0 == "stopped" }.count, 2, "\(kinds)")
        XCTAssertEqual(kinds.filter { $0 == "+gst-launch-1.0" }.count, 2, "\(kinds)")
        XCTAssertEqual(kinds.filter { $0 == "-gst-launch-1.0" }.count, 2, "\(kinds)")
        print("figure: on demand on node \(id): vivid streaming \(starts.map { String(format: "%.2f", $0) }) s after gst-launch started, its queue free \(stops.map { String(format: "%.3f", $0) }) s after gst-launch's exit; events \(kinds)")
    }

    /// Two consumers at two sizes. A PipeWire port carries one format: on one node, a second
    /// `pipewiresrc` asking for another size than the first fixed gets no frame of it (PipeWire
    /// 0.3.65 does not renegotiate a port in use), and the first keeps reading. One node per
    /// format is the answer: one camera with two nodes serves 640x360 and 320x240 at once from one
    /// vivid capture, each reader's frames converted once, with vivid's colours (band means equal
    /// to a direct read converted the same way, within 6 levels).
    func testTwoSizesAtOnceNeedOneNodePerFormat() throws {
        let session = try XCTUnwrap(session)
        let device = try CaptureDevice(path: vivid)
        let small = Size(width: 320, height: 240)
        let referenceBig = try Self.directBars(device)
        let referenceSmall = try Self.directBars(device, output: small)
        let (source, camera) = try Self.publish(vivid, on: [.pipeWire(name: "md_vcam_big"), .pipeWire(name: "md_vcam_small")])
        try camera.start()
        defer { camera.stop(); source.release() }
        let ids = camera.state.withLock { $0.nodes.map(\.node) }.compactMap(\.status.nodeID)
        XCTAssertEqual(ids.count, 2, "two nodes published")
        guard ids.count == 2 else { return }
        let environment = "XDG_RUNTIME_DIR=\(session.directory) PIPEWIRE_REMOTE=\(session.remote)"
        func reader(_ id: UInt32, _ size: Size, frames: Int, file: String) -> String {
            "\(environment) timeout 240 gst-launch-1.0 -q pipewiresrc path=\(id) num-buffers=\(frames) ! video/x-raw,format=I420,width=\(size.width),height=\(size.height) ! filesink location=\(file) >\(file).log 2>&1"
        }
        // One node per format: both at once.
        Self.step("two sizes: one reader per node")
        let bigFile = "\(session.directory)/vcam-big.i420", smallFile = "\(session.directory)/vcam-small.i420"
        let results = Rig.shells([reader(ids[0], Self.size, frames: 5, file: bigFile), reader(ids[1], small, frames: 5, file: smallFile)])
        XCTAssertEqual(results.map(\.status), [0, 0], "both readers: \(Rig.shell("tail -n 5 \(bigFile).log \(smallFile).log").output)\n\(session.report)")
        let bigBytes = [UInt8]((try? Data(contentsOf: URL(fileURLWithPath: bigFile))) ?? Data())
        let smallBytes = [UInt8]((try? Data(contentsOf: URL(fileURLWithPath: smallFile))) ?? Data())
        let bigFrame = Self.size.width * Self.size.height * 3 / 2, smallFrame = small.width * small.height * 3 / 2
        XCTAssertEqual(bigBytes.count, 5 * bigFrame, "5 frames of 640x360")
        XCTAssertEqual(smallBytes.count, 5 * smallFrame, "5 frames of 320x240")
        if bigBytes.count == 5 * bigFrame { Self.assertColours(Self.bars(Array(bigBytes.suffix(bigFrame)), size: Self.size), equal: referenceBig, reader: "640x360 node") }
        if smallBytes.count == 5 * smallFrame { Self.assertColours(Self.bars(Array(smallBytes.suffix(smallFrame)), size: small), equal: referenceSmall, reader: "320x240 node") }

        // One node, two sizes: the second reader's link cannot take the format the first fixed.
        Self.step("two sizes: two readers of one node")
        let first = Process()
        first.executableURL = URL(fileURLWithPath: "/bin/sh")
        first.arguments = ["-c", "exec env \(environment) gst-launch-1.0 -q pipewiresrc path=\(ids[0]) ! video/x-raw,format=I420,width=\(Self.size.width),height=\(Self.size.height) ! fakesink"]
        first.standardOutput = FileHandle.nullDevice
        first.standardError = FileHandle.nullDevice
        try first.run()
        defer { if first.isRunning { first.terminate() } }
        XCTAssertTrue(waitUntil(seconds: 120) { source.isCapturing }, "the first reader starts vivid")
        let secondFile = "\(session.directory)/vcam-second.i420"
        let second = Rig.shell(reader(ids[0], small, frames: 3, file: secondFile).replacingOccurrences(of: "timeout 240", with: "timeout 60"))
        let secondBytes = Rig.fileSize(secondFile)
        let sent = camera.writeFigures.written
        XCTAssertTrue(waitUntil(seconds: 60) { camera.writeFigures.written >= sent + 5 }, "the first reader still gets frames")
        XCTAssertTrue(first.isRunning, "the first reader still runs")
        XCTAssertNotEqual(secondBytes, 3 * smallFrame, "a second size on one node: no 320x240 frames (exit \(second.status))")
        print("figure: two sizes: one node each, 640x360 and 320x240 read at once (\(bigBytes.count / bigFrame) and \(smallBytes.count / smallFrame) frames, colours equal); one node, a second reader at 320x240: exit \(second.status), \(secondBytes) bytes (\(Rig.shell("tail -n 3 \(secondFile).log").output.replacingOccurrences(of: "\n", with: " | ")))")
    }

    /// `mediadevices publish testpattern --pipewire NAME --on-demand` names its node, prints a
    /// reader coming and going and the source starting and stopping; `list --backend pipewire`
    /// marks the node virtual (text and JSON).
    func testPublishCommandPrintsTheConsumersAndListMarksTheNodeVirtual() throws {
        let session = try XCTUnwrap(session)
        let out = "\(session.directory)/publish.out", err = "\(session.directory)/publish.err"
        let publish = try Rig.spawn(["/usr/bin/env", "XDG_RUNTIME_DIR=\(session.directory)", "PIPEWIRE_REMOTE=\(session.remote)", Rig.tool,
                                     "publish", "testpattern", "--pipewire", "md_vcam_cli", "--on-demand", "--timeout", "400"],
                                    output: out, errors: err)
        defer { if publish.isRunning { kill(publish.processIdentifier, SIGKILL) } }
        func printed() -> String { (try? String(contentsOfFile: out, encoding: .utf8)) ?? "" }
        XCTAssertTrue(waitUntil(seconds: 180) { printed().contains("(node ") }, "publish names its node: \(printed()) \((try? String(contentsOfFile: err, encoding: .utf8)) ?? "")")
        let header = printed()
        let id = try XCTUnwrap(header.components(separatedBy: "(node ").dropFirst().first?.prefix { $0.isNumber }, header)
        XCTAssertTrue(header.contains("on pipewire:md_vcam_cli (node \(id))") && header.contains("on demand"), header)

        let text = try session.run("\(Rig.tool) list --backend pipewire")
        let line = text.split(separator: "\n").drop { !$0.contains("md_vcam_cli") }.dropFirst().first.map(String.init) ?? ""
        XCTAssertTrue(line.contains("virtual"), "list marks our node virtual:\n\(text)")
        let json = try session.run("\(Rig.tool) list --backend pipewire --json")
        let cameras = (try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])?["cameras"] as? [[String: Any]] ?? []
        let ours = try XCTUnwrap(cameras.first { $0["name"] as? String == "md_vcam_cli" }, json)
        XCTAssertEqual(ours["virtual"] as? Bool, true, json)

        let file = "\(session.directory)/vcam-cli.i420"
        let read = Rig.shell("XDG_RUNTIME_DIR=\(session.directory) PIPEWIRE_REMOTE=\(session.remote) timeout 180 gst-launch-1.0 -q pipewiresrc path=\(id) num-buffers=3 ! videoconvert ! video/x-raw,format=I420 ! filesink location=\(file)")
        XCTAssertEqual(read.status, 0, "gst-launch: \(read.errors)")
        XCTAssertTrue(waitUntil(seconds: 60) { printed().contains("publish: consumer left: gst-launch-1.0") && printed().contains("publish: source stopped") },
                      "publish prints the reader leaving and the source stopping:\n\(printed())")
        kill(publish.processIdentifier, SIGINT)
        XCTAssertTrue(Rig.wait(for: publish, seconds: 60), "publish ends on Ctrl-C")
        let all = printed()
        for expected in ["publish: consumer connected: gst-launch-1.0 (pid ", "on pipewire:md_vcam_cli", "publish: source started", "publish: stopped;"] {
            XCTAssertTrue(all.contains(expected), "publish printed \(expected):\n\(all)")
        }
        print("figure: mediadevices publish --pipewire printed:\n\(all)")
    }

    /// Both outputs at once: vivid on a loopback device and a node, read at the same time by
    /// `v4l2-ctl` and `pipewiresrc`; one capture, and one pump (one conversion) for the two, as
    /// both take I420 640x360; both readers get vivid's colours.
    func testBothOutputsAtOnceShareOneCaptureAndOneConversion() throws {
        let session = try XCTUnwrap(session)
        try Rig.run("\(Rig.script("v4l2loopback.sh")) load video_nr=10 exclusive_caps=1 card_label=MediaDevices-Loopback")
        loadedLoopback = true
        let device = try CaptureDevice(path: vivid)
        let reference = try Self.directBars(device)
        let (source, camera) = try Self.publish(vivid, on: [.pipeWire(name: "md_vcam_both"), .v4l2Loopback(path: "/dev/video10")])
        try camera.start()
        defer { camera.stop(); source.release() }
        let id = try XCTUnwrap(Self.nodeID(camera))
        let gstFile = "\(session.directory)/vcam-both.i420", ctlFile = "\(session.directory)/vcam-both.yuv"
        let shared = SeenFlag()
        let watcher = Thread {
            for _ in 0..<4800 {
                let plan = camera.state.withLock { $0.plans.map(\.sinks.count) }
                if plan == [2] { shared.set(); return }
                usleep(50_000)
            }
        }
        watcher.start()
        let results = Rig.shells([
            "XDG_RUNTIME_DIR=\(session.directory) PIPEWIRE_REMOTE=\(session.remote) timeout 240 gst-launch-1.0 -q pipewiresrc path=\(id) num-buffers=60 ! videoconvert ! video/x-raw,format=I420 ! filesink location=\(gstFile)",
            "timeout 240 v4l2-ctl -d /dev/video10 --stream-mmap --stream-count 60 --stream-to \(ctlFile)",
        ])
        XCTAssertEqual(results.map(\.status), [0, 0], "readers: \(results.map(\.errors))")
        XCTAssertTrue(shared.value, "while both read, one pump feeds the node and the device (one conversion)")
        let frame = Self.size.width * Self.size.height * 3 / 2
        for (file, reader) in [(gstFile, "pipewiresrc"), (ctlFile, "v4l2-ctl")] {
            let bytes = [UInt8]((try? Data(contentsOf: URL(fileURLWithPath: file))) ?? Data())
            XCTAssertGreaterThanOrEqual(bytes.count, frame, "\(reader) read frames")
            if bytes.count >= frame { Self.assertColours(Self.bars(Array(bytes.suffix(frame)), size: Self.size), equal: reference, reader: reader) }
        }
        print("figure: both outputs: pipewiresrc and v4l2-ctl read vivid at once, one pump for both: \(shared.value); \(camera.writeFigures) written")
    }

    /// The source failing mid-run (vivid's `disconnect` control: its node goes, ioctls fail
    /// with ENODEV): the failure is an event, the node is removed, so every consumer's link goes
    /// (its consumers leave) and no picture stays: our own PipeWire backend reading it stops;
    /// and a node of that name is published again (a new id), idle. What `pipewiresrc` does then
    /// is printed (PipeWire 0.3.65's waits for a new target: see the figure).
    func testSourceFailureEndsTheConsumersStreamsAndPublishesTheNodeAgain() throws {
        let session = try XCTUnwrap(session)
        let (source, camera) = try Self.publish(vivid, on: [.pipeWire(name: "md_vcam_fail")])
        let recorder = EventLog(camera.events)
        try camera.start()
        defer { camera.stop(); source.release() }
        let id = try XCTUnwrap(Self.nodeID(camera))
        let gst = session.pipewiresrc(node: id)
        try gst.run()
        defer { if gst.isRunning { gst.terminate() } }
        XCTAssertTrue(waitUntil(seconds: 120, every: 20_000) { source.isCapturing && camera.writeFigures.written >= 3 }, "gst-launch gets frames")
        let listed = CaptureDevice.scan(backends: [.pipewire]).devices
        let node = try XCTUnwrap(listed.first { $0.pipeWireNodes.first?.name == "md_vcam_fail" }, "\(listed)")
        let reader = try PipeWireCameraSource(device: node, request: FormatRequest(pixelFormat: .yu12, size: Self.size))
        let frames = FrameRecorder(target: 3, keepIndex: 1)
        reader.consumer = frames
        try reader.start()
        defer { reader.release() }
        XCTAssertTrue(frames.wait(seconds: 60), "our backend reads the node too")
        let first = try XCTUnwrap(camera.state.withLock { $0.nodes.first?.node })
        try Rig.run("v4l2-ctl -d \(vivid) -c disconnect=1")
        let disconnected = Date()
        XCTAssertTrue(waitUntil(seconds: 60, every: 20_000) { frames.stopCount > 0 }, "our backend's capture ends when the source fails (\(frames.records.count) frames)")
        let readerEnded = Date().timeIntervalSince(disconnected)
        // A new node object with an id. PipeWire hands a freed id out again (its id map reuses
        // the last freed slot first), so the new node may well have the old node's id: the
        // node object is what tells.
        var again: UInt32?
        XCTAssertTrue(waitUntil(seconds: 30, every: 20_000) {
            let node = camera.state.withLock { $0.nodes.first?.node }
            again = node?.status.nodeID
            return node != nil && node !== first && again != nil
        }, "the node is published again (a new node object with an id)")
        let nodes = try session.run("pw-cli ls Node")
        XCTAssertEqual(nodes.components(separatedBy: "node.name = \"md_vcam_fail\"").count - 1, 1, "one node of the name, listed:\n\(nodes)")
        let gstEnded = Rig.wait(for: gst, seconds: 10)
        camera.stop()
        let kinds = recorder.wait().map(\.kind)
        XCTAssertTrue(kinds.contains("failed"), "the failure is an event: \(kinds)")
        let failedAt = kinds.firstIndex(of: "failed") ?? kinds.count
        XCTAssertTrue(kinds[failedAt...].contains("-gst-launch-1.0"), "gst-launch's link went with the node: \(kinds)")
        print("figure: vivid disconnected: our backend's capture ended \(String(format: "%.2f", readerEnded)) s later (\(frames.stopError.map { "\($0.code)" } ?? "no error")); gst-launch \(gstEnded ? "exited (status \(gst.terminationStatus))" : "still running 10 s after the node was published again (pipewiresrc waits for a new target)"); node \(id) published again as \(again.map(String.init) ?? "?")\(again == id ? " (PipeWire reused the id)" : ""); events \(kinds)")
    }

    /// A name another node has: `.busy`, naming the node and what to do; nothing left published.
    func testANameTakenIsRefused() throws {
        let first = VirtualCamera(source: TestPatternSource(), outputs: [.pipeWire(name: "md_vcam_taken")])
        try first.start()
        defer { first.stop() }
        let second = VirtualCamera(source: TestPatternSource(), outputs: [.pipeWire(name: "md_vcam_taken")])
        XCTAssertThrowsError(try second.start()) { error in
            let error = error as? MediaDevicesError
            XCTAssertEqual(error?.code, .busy, "\(String(describing: error))")
            XCTAssertEqual(error?.device, "pipewire:md_vcam_taken", "\(String(describing: error))")
            XCTAssertTrue(error?.detail.contains("md_vcam_taken") == true, "\(String(describing: error))")
            XCTAssertTrue(error?.remedy?.contains("another name") == true, "\(String(describing: error))")
            print("figure: a name taken: \(error.map { "\($0)" } ?? "?")")
        }
        let nodes = try XCTUnwrap(session).run("pw-cli ls Node")
        XCTAssertEqual(nodes.components(separatedBy: "node.name = \"md_vcam_taken\"").count - 1, 1, "one node of that name:\n\(nodes)")
    }

    // MARK: - Helpers

    /// A progress line (the emulated guest is slow: where a test waits shows in the log).
    static func step(_ text: String) {
        print("step: \(text)")
        fflush(nil)
    }

    /// One bar's mean luma and chroma.
    struct Bar: Equatable, CustomStringConvertible {
        var y: Int, u: Int, v: Int
        var description: String { "(\(y),\(u),\(v))" }
    }

    /// The 8 bars' means in a packed I420 frame of `size`: the middle half of each eighth of the
    /// width (a bar of the full picture; of a cropped one, a band compared with a reference
    /// cropped alike), rows 60 % to 90 % down (below vivid's text).
    static func bars(_ frame: [UInt8], size: Size) -> [Bar] {
        let (width, height) = (size.width, size.height)
        let chromaWidth = width / 2, chromaHeight = height / 2
        let uBase = width * height, vBase = uBase + chromaWidth * chromaHeight
        return (0..<8).map { bar in
            let left = bar * width / 8 + width / 32, right = (bar + 1) * width / 8 - width / 32
            var y = 0, u = 0, v = 0, count = 0, chromaCount = 0
            for row in (height * 6 / 10)..<(height * 9 / 10) {
                for column in left..<right { y += Int(frame[row * width + column]); count += 1 }
            }
            for row in (chromaHeight * 6 / 10)..<(chromaHeight * 9 / 10) {
                for column in (left / 2)..<(right / 2) {
                    u += Int(frame[uBase + row * chromaWidth + column])
                    v += Int(frame[vBase + row * chromaWidth + column])
                    chromaCount += 1
                }
            }
            return Bar(y: y / max(count, 1), u: u / max(chromaCount, 1), v: v / max(chromaCount, 1))
        }
    }

    /// Each bar of `bars` within 6 levels of `reference`'s.
    static func assertColours(_ bars: [Bar], equal reference: [Bar], reader: String, file: StaticString = #filePath, line: UInt = #line) {
        for (index, (bar, expected)) in zip(bars, reference).enumerated() {
            XCTAssertTrue(abs(bar.y - expected.y) <= 6 && abs(bar.u - expected.u) <= 6 && abs(bar.v - expected.v) <= 6,
                          "\(reader): bar \(index) is \(bar), vivid's is \(expected) (all: \(bars) vs \(reference))", file: file, line: line)
        }
    }

    /// vivid's bars read directly (YUYV at `size`, converted to I420 at `output` by the pixel
    /// pipeline), measured as `bars` measures them.
    static func directBars(_ device: CaptureDevice, output: Size = size) throws -> [Bar] {
        let source = CameraSource(device: device, request: FormatRequest(pixelFormat: .yuyv, size: size))
        defer { source.release() }
        let converter = try FrameConverter(output: OutputFormat(.yu12, size: output))
        let recorder = FrameRecorder(target: 6, keepIndex: 4)
        source.consumer = ConvertingRecorder(converter: converter, recorder: recorder)
        try source.start()
        XCTAssertTrue(recorder.wait(seconds: 60), "vivid read directly: \(recorder.records.count) frames")
        source.stop()
        let kept = try XCTUnwrap(recorder.keptFormat)
        return bars(PipeWireCameraNodeTests.packed(recorder.kept.map { ($0.bytes, $0.bytesPerRow) }, format: kept), size: output)
    }

    /// Converts each frame and hands it to a recorder.
    final class ConvertingRecorder: VideoFrameConsumer, @unchecked Sendable {
        let converter: FrameConverter, recorder: FrameRecorder
        init(converter: FrameConverter, recorder: FrameRecorder) { self.converter = converter; self.recorder = recorder }
        func consumeFrame(_ frame: VideoFrame) { try? converter.convert(frame) { recorder.consumeFrame($0) } }
    }

    /// vivid (YUYV at `size`) as a virtual camera on `outputs`, I420 at `size`, on demand; not started.
    static func publish(_ vivid: String, on outputs: [VirtualCamera.Output]) throws -> (CameraSource, VirtualCamera) {
        let source = CameraSource(device: try CaptureDevice(path: vivid), request: FormatRequest(pixelFormat: .yuyv, size: size))
        return (source, VirtualCamera(source: source, outputs: outputs, format: FormatRequest(pixelFormat: .yu12, size: size), onDemand: true))
    }

    /// The node's id, once published.
    static func nodeID(_ camera: VirtualCamera) -> UInt32? {
        camera.state.withLock { $0.nodes.first?.node }?.status.nodeID
    }

    /// Whether vivid's buffer queue belongs to another file (streaming, or buffers allocated):
    /// `VIDIOC_REQBUFS` with count 0 from a file of our own is `EBUSY` then, 0 when free (and
    /// frees nothing). `nil` when the node cannot be opened.
    static func queueBusy(_ path: String) -> Bool? {
        let fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        // struct v4l2_requestbuffers: count, type (1: VIDEO_CAPTURE), memory (1: MMAP), capabilities, flags + reserved.
        var request: (UInt32, UInt32, UInt32, UInt32, UInt32) = (0, 1, 1, 0, 0)
        let result = withUnsafeMutableBytes(of: &request) { ioctl(fd, 0xC014_5608, $0.baseAddress!) }  // VIDIOC_REQBUFS
        return result < 0 && errno == EBUSY
    }
}
