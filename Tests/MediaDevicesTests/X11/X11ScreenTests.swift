import Foundation
import Synchronization
import TestSupport
@testable import MediaDevices
@testable import MediaDevicesAudio
@testable import MediaDevicesVideo
@testable import MediaDevicesCore
import XCTest

/// The X11 backend of `ScreenSource` against a real X server (a private Xvfb per test): RandR
/// monitors as screens, MIT-SHM grabs equal to what a client drew, DAMAGE skipping unchanged
/// frames, the XFIXES cursor. Without Xvfb these tests fail (they never skip).
final class X11ScreenTests: XCTestCase {
    var server: XvfbServer!
    var client: X11TestClient!

    override func setUpWithError() throws {
        server = try XvfbServer(width: 640, height: 480)
        print("Xvfb \(server.display) started in \(String(format: "%.0f", server.startupSeconds * 1000)) ms")
        client = try X11TestClient(display: server.display)
        client.draw((0, 0, 640, 480), X11TestClient.pattern)
    }

    override func tearDown() {
        client = nil
        server?.stop()
        server = nil
    }

    /// The pixels of an `XBGR32` frame that differ from `expected(x, y)` (see `pixelMismatches`).
    private func mismatches(_ frame: VideoFrame, _ expected: (Int, Int) -> UInt32) -> [(x: Int, y: Int, got: UInt32, expected: UInt32)] {
        pixelMismatches(frame, expected)
    }

    private func screen(named name: String) throws -> Screen {
        let screens = try ScreenSource.x11Screens(display: server.display)
        return try XCTUnwrap(screens.first { $0.name == name }, "no monitor \(name) among \(screens)")
    }

    func testTheRootMonitorIsAScreenOfTheX11Backend() throws {
        let screens = try ScreenSource.x11Screens(display: server.display)
        XCTAssertEqual(screens.count, 1, "\(screens)")
        let screen = try XCTUnwrap(screens.first)
        XCTAssertEqual(screen.backend, .x11)
        XCTAssertEqual(screen.card, server.display)
        XCTAssertEqual(screen.frame, Rect(x: 0, y: 0, width: 640, height: 480))
        XCTAssertEqual(screen.mode?.size, Size(width: 640, height: 480))
        XCTAssertEqual(screen.uniqueID, "x11:\(server.display)/\(screen.name)")
    }

    /// The lifecycle rules every source shares (one core), on an X11 screen: calls from the
    /// callback (`grabFrame` as the change), twice, after release.
    func testLifecycleRulesHoldAsForEverySource() throws {
        let source = ScreenSource(screen: try screen(named: "screen"), frameRate: FrameRate(30), skipsUnchangedFrames: false)
        let broken = try SourceLifecycleRules.violations(of: source, change: { try source.grabFrame { _ in } })
        XCTAssertEqual(broken, [], "rules broken by the X11 screen source")
    }

    /// `grabFrame`'s closure runs without the source's lock: calling the source from it gets an
    /// answer, not a deadlock (the grab ran under the control lock before), and a `release()`
    /// there leaves the lent frame readable until the grab returns.
    func testGrabFrameClosureMayCallTheSource() throws {
        let source = ScreenSource(screen: try screen(named: "screen"))
        defer { source.release() }
        let outcome = Mutex<(start: MediaDevicesError.Code?, nested: MediaDevicesError.Code?, bad: Int)?>(nil)
        let done = DispatchSemaphore(value: 0)
        let grabber = Thread {
            let result = try? source.grabFrame { frame in
                var start: MediaDevicesError.Code?, nested: MediaDevicesError.Code?
                do { try source.start() } catch { start = (error as? MediaDevicesError)?.code }
                do { try source.grabFrame { _ in } } catch { nested = (error as? MediaDevicesError)?.code }
                source.release()
                return (start, nested, pixelMismatches(frame, X11TestClient.pattern).count)
            }
            outcome.withLock { $0 = result }
            done.signal()
        }
        grabber.start()
        XCTAssertEqual(done.wait(timeout: .now() + 20), .success, "grabFrame's closure calling the source deadlocked")
        let result = try XCTUnwrap(outcome.withLock { $0 }, "grabFrame threw")
        XCTAssertEqual(result.start, .invalidState, "start() from the closure")
        XCTAssertEqual(result.nested, .invalidState, "grabFrame() from the closure")
        XCTAssertEqual(result.bad, 0, "the frame stays readable after release() in the closure")
        XCTAssertFalse(source.isCapturing)
        XCTAssertEqual(try source.grabFrame { self.mismatches($0, X11TestClient.pattern).count }, 0, "a grab after the release opens the screen again")
    }

    func testGrabEqualsTheDrawnPatternPixelForPixel() throws {
        let source = ScreenSource(screen: try screen(named: "screen"))
        defer { source.release() }
        let bad = try source.grabFrame { frame -> [(x: Int, y: Int, got: UInt32, expected: UInt32)] in
            XCTAssertEqual(frame.format.size, Size(width: 640, height: 480))
            return mismatches(frame, X11TestClient.pattern)
        }
        XCTAssertTrue(bad.isEmpty, "first differences: \(bad)")
        // A new picture is grabbed anew (the segment is reused, not stale).
        client.draw((0, 0, 640, 480)) { x, y in X11TestClient.pattern(x: y, y: x) }
        let started = Date()
        let grabs = 30
        for _ in 0..<grabs { try source.grabFrame { _ in } }
        print("X11 grab of 640x480: \(String(format: "%.2f", Date().timeIntervalSince(started) * 1000 / Double(grabs))) ms per frame")
        let again = try source.grabFrame { mismatches($0) { x, y in X11TestClient.pattern(x: y, y: x) } }
        XCTAssertTrue(again.isEmpty, "first differences: \(again)")
    }

    func testMemfdAndSystemVSegmentsGrabTheSamePixels() throws {
        let screen = try screen(named: "screen")
        XCTAssertEqual(try X11ScreenGrabber(screen: screen, region: nil, showsCursor: false).sharing, .memfd,
                       "Xvfb speaks MIT-SHM 1.2 over a Unix socket: a memfd by default")
        for region in [nil, Rect(x: 30, y: 20, width: 100, height: 50)] {
            var grabs: [X11SharedMemory.Sharing: [UInt8]] = [:]
            for sharing in X11SharedMemory.Sharing.allCases {
                let grabber = try X11ScreenGrabber(screen: screen, region: region, showsCursor: false, sharing: sharing)
                XCTAssertEqual(grabber.sharing, sharing)
                _ = try grabber.grab(timestamp: MonotonicInstant(nanoseconds: 0), sequence: 0, onlyIfChanged: false) { frame in
                    let (left, top) = (region?.x ?? 0, region?.y ?? 0)
                    let bad = mismatches(frame) { x, y in X11TestClient.pattern(x: x + left, y: y + top) }
                    XCTAssertTrue(bad.isEmpty, "\(sharing), \(String(describing: region)): first differences: \(bad)")
                    grabs[sharing] = Array(frame.plane(0).bytes)
                }
            }
            XCTAssertEqual(grabs[.memfd]?.count, (region?.width ?? 640) * (region?.height ?? 480) * 4)
            XCTAssertTrue(grabs[.memfd] == grabs[.systemV], "memfd and System V grabs are byte for byte the same")
        }
    }

    func testRegionIsCutFromTheMonitor() throws {
        let source = ScreenSource(screen: try screen(named: "screen"), region: Rect(x: 30, y: 20, width: 100, height: 50))
        defer { source.release() }
        let bad = try source.grabFrame { frame in
            XCTAssertEqual(frame.format.size, Size(width: 100, height: 50))
            return mismatches(frame) { x, y in X11TestClient.pattern(x: x + 30, y: y + 20) }
        }
        XCTAssertTrue(bad.isEmpty, "first differences: \(bad)")
        let outside = ScreenSource(screen: try screen(named: "screen"), region: Rect(x: 700, y: 0, width: 10, height: 10))
        XCTAssertThrowsError(try outside.initialize()) { XCTAssertEqual(($0 as? MediaDevicesError)?.code, .invalidState, "\($0)") }
    }

    func testSetMonitorVirtualMonitorsAppearAsScreens() throws {
        try server.xrandr("--setmonitor", "left", "320/85x480/127+0+0", "none")
        try server.xrandr("--setmonitor", "right", "320/85x480/127+320+0", "none")
        let screens = try ScreenSource.x11Screens(display: server.display)
        XCTAssertEqual(Set(screens.map(\.name)), ["screen", "left", "right"], "\(screens)")
        let right = try screen(named: "right")
        XCTAssertEqual(right.frame, Rect(x: 320, y: 0, width: 320, height: 480))
        XCTAssertEqual(right.physicalSize, Size(width: 85, height: 127))
        XCTAssertEqual(try screen(named: "left").frame, Rect(x: 0, y: 0, width: 320, height: 480))
        let source = ScreenSource(screen: right)
        defer { source.release() }
        let bad = try source.grabFrame { frame in
            XCTAssertEqual(frame.format.size, Size(width: 320, height: 480))
            return mismatches(frame) { x, y in X11TestClient.pattern(x: x + 320, y: y) }
        }
        XCTAssertTrue(bad.isEmpty, "first differences: \(bad)")
        // A monitor removed after enumeration is reported as gone.
        try server.xrandr("--delmonitor", "right")
        XCTAssertThrowsError(try ScreenSource(screen: right).initialize()) {
            XCTAssertEqual(($0 as? MediaDevicesError)?.code, .disconnected, "\($0)")
        }
    }

    func testMonitorChangesAreFollowedAndARemovedMonitorGivesNothingUntilItIsBack() throws {
        try server.xrandr("--setmonitor", "left", "320/85x480/127+0+0", "none")
        let source = ScreenSource(screen: try screen(named: "left"), frameRate: FrameRate(60))
        defer { source.release() }
        // Each frame against the pattern where the monitor lies for its size.
        let places = [Size(width: 320, height: 480): (0, 0), Size(width: 200, height: 100): (100, 50), Size(width: 64, height: 32): (8, 16)]
        let frames = CheckedFrames { frame in
            guard let (left, top) = places[frame.format.size] else { return false }
            return self.mismatches(frame) { x, y in X11TestClient.pattern(x: x + left, y: y + top) }.isEmpty
        }
        source.consumer = frames
        try source.start()
        try wait("the first frame") { source.statistics.deliveredFrames >= 1 }
        try server.xrandr("--delmonitor", "left")
        try server.xrandr("--setmonitor", "left", "200/50x100/25+100+50", "none")
        try wait("a frame at the new place and size") { frames.sizes.contains(Size(width: 200, height: 100)) }
        // Gone for a while (grabs have nothing to show: sequence gaps), then back elsewhere.
        try server.xrandr("--delmonitor", "left")
        usleep(200_000)
        XCTAssertTrue(source.isCapturing, "a removed monitor does not end capture")
        try server.xrandr("--setmonitor", "left", "64/16x32/8+8+16", "none")
        try wait("a frame after the monitor came back") { frames.sizes.contains(Size(width: 64, height: 32)) }
        source.stop()
        let results = frames.results.withLock { $0 }
        XCTAssertEqual(results.first?.size, Size(width: 320, height: 480))
        XCTAssertTrue(results.allSatisfy(\.matches), "every frame equals the pattern where the monitor lies: \(results)")
        XCTAssertGreaterThan(source.statistics.droppedFrames, 0, "the time without a monitor shows as a sequence gap")
        XCTAssertNil(frames.stopError.withLock { $0 })
    }

    func testDamageReportsTheChangedAreaAndUnchangedGrabsAreSkipped() throws {
        let grabber = try X11ScreenGrabber(screen: try screen(named: "screen"), region: Rect(x: 100, y: 100, width: 200, height: 100), showsCursor: false)
        var lent = 0
        XCTAssertEqual(try grabber.grab(timestamp: MonotonicInstant(nanoseconds: 0), sequence: 0, onlyIfChanged: true) { _ in lent += 1 }, .delivered, "the first grab")
        XCTAssertEqual(try grabber.grab(timestamp: MonotonicInstant(nanoseconds: 0), sequence: 1, onlyIfChanged: true) { _ in lent += 1 }, .unchanged)
        // A change outside the region is no change of it.
        client.draw((0, 0, 50, 50)) { _, _ in 0xFF0000 }
        XCTAssertEqual(try grabber.grab(timestamp: MonotonicInstant(nanoseconds: 0), sequence: 1, onlyIfChanged: true) { _ in lent += 1 }, .unchanged)
        // A change across the region's corner: reported cut to the region, in frame coordinates.
        client.draw((290, 150, 40, 20)) { _, _ in 0x00FF00 }
        var bad: [(x: Int, y: Int, got: UInt32, expected: UInt32)] = []
        XCTAssertEqual(try grabber.grab(timestamp: MonotonicInstant(nanoseconds: 0), sequence: 1, onlyIfChanged: true) { frame in
            lent += 1
            bad = mismatches(frame) { x, y in x >= 190 && y >= 50 && y < 70 ? 0x00FF00 : X11TestClient.pattern(x: x + 100, y: y + 100) }
        }, .delivered)
        XCTAssertEqual(grabber.lastDamage, Rect(x: 190, y: 50, width: 10, height: 20))
        XCTAssertTrue(bad.isEmpty, "first differences: \(bad)")
        XCTAssertEqual(try grabber.grab(timestamp: MonotonicInstant(nanoseconds: 0), sequence: 2, onlyIfChanged: true) { _ in lent += 1 }, .unchanged)
        // Without onlyIfChanged the picture is lent anyway (a screenshot).
        XCTAssertEqual(try grabber.grab(timestamp: MonotonicInstant(nanoseconds: 0), sequence: 2, onlyIfChanged: false) { _ in lent += 1 }, .delivered)
        XCTAssertEqual(lent, 3)
    }

    func testCaptureCountsUnchangedFramesAndDeliversChangesOnce() throws {
        let source = ScreenSource(screen: try screen(named: "screen"), frameRate: FrameRate(60), region: Rect(x: 0, y: 0, width: 64, height: 64))
        defer { source.release() }
        let frames = Frames()
        source.consumer = frames
        try source.start()
        try wait("unchanged grabs counted") { source.statistics.unchangedFrames >= 5 }
        XCTAssertEqual(source.statistics.deliveredFrames, 1, "an unchanged screen gives its first frame only")
        // A still screen costs the capture thread about one wake-up a second (it sleeps on the
        // X connection until DAMAGE says something changed), not one per deadline (120 in 2 s).
        let stillWakeUps = try CaptureThreadFigures.screenWakeUps(during: 2)
        XCTAssertLessThanOrEqual(stillWakeUps, 6, "capture-thread wake-ups in 2 s of a still screen at 60 fps")
        client.draw((10, 10, 4, 4)) { _, _ in 0x0000FF }
        try wait("the change delivered") { source.statistics.deliveredFrames >= 2 }
        let unchangedBefore = source.statistics.unchangedFrames
        try wait("unchanged again") { source.statistics.unchangedFrames >= unchangedBefore + 5 }
        source.stop()
        let statistics = source.statistics
        XCTAssertEqual(statistics.deliveredFrames, 2, "\(statistics)")
        XCTAssertEqual(statistics.droppedFrames, 0, "skipped grabs are no sequence gaps: \(statistics)")
        XCTAssertEqual(frames.sequences.withLock { $0 }, [0, 1])
        XCTAssertEqual(frames.blueAt10.withLock { $0 }, [false, true], "the second frame shows the change")
    }

    func testCaptureWithoutSkippingDeliversEveryDeadline() throws {
        let source = ScreenSource(screen: try screen(named: "screen"), frameRate: FrameRate(60),
                                  region: Rect(x: 0, y: 0, width: 64, height: 64), skipsUnchangedFrames: false)
        defer { source.release() }
        let frames = Frames()
        source.consumer = frames
        try source.start()
        try wait("frames of a still screen") { source.statistics.deliveredFrames >= 5 }
        source.stop()
        XCTAssertEqual(source.statistics.unchangedFrames, 0)
        XCTAssertFalse(frames.blueAt10.withLock { $0 }.contains(true))
    }

    /// `setFormat` on a screen (the member every ``VideoSource`` has): the rate changes, also
    /// while capturing, and a pixel format or size asked otherwise is an adjustment; the
    /// framebuffer's format stays.
    func testSetFormatChangesTheRateAndReportsTheRestAsAdjustments() throws {
        let source = ScreenSource(screen: try screen(named: "screen"), frameRate: FrameRate(30),
                                  region: Rect(x: 0, y: 0, width: 64, height: 64), skipsUnchangedFrames: false)
        defer { source.release() }
        try source.initialize()
        let initial = try XCTUnwrap(source.negotiation)
        XCTAssertEqual(initial.frameRate, FrameRate(30))
        XCTAssertEqual(initial.adjustments, [])
        XCTAssertEqual(source.captureSettings, CaptureSettings(format: initial.format, frameRate: FrameRate(30)))
        try source.start()
        try wait("frames at 30 fps") { source.statistics.deliveredFrames >= 2 }
        let changed = try source.setFormat(FormatRequest(pixelFormat: .nv12, size: Size(width: 32, height: 32), frameRate: FrameRate(60)))
        XCTAssertTrue(source.isCapturing, "capture goes on across the change")
        XCTAssertEqual(changed.frameRate, FrameRate(60))
        XCTAssertEqual(source.frameRate, FrameRate(60))
        XCTAssertEqual(changed.format, initial.format, "the framebuffer's format stays")
        XCTAssertEqual(changed.adjustments.map(\.field), [.pixelFormat, .size], "\(changed.adjustments)")
        XCTAssertEqual(source.negotiation, changed)
        let before = source.statistics.deliveredFrames
        try wait("frames after the change") { source.statistics.deliveredFrames >= before + 3 }
        source.stop()
        XCTAssertEqual(try source.setFormat(FormatRequest()).frameRate, FrameRate(30), "no rate asked: the source's own")
        XCTAssertThrowsError(try source.setFormat(FormatRequest(frameRate: FrameRate(0)))) { error in
            XCTAssertEqual((error as? MediaDevicesError)?.code, .unsupportedFormat)
        }
        XCTAssertEqual(source.frameRate, FrameRate(30), "a refused rate changes nothing")
    }

    func testCursorComesThroughXFixesWhenAsked() throws {
        client.warpPointer(x: 200, y: 150)
        let cursor = try client.cursorImage()
        XCTAssertTrue(cursor.pixels.contains { $0 >> 24 == 0xFF }, "Xvfb's cursor has opaque pixels")
        let area = Rect(x: cursor.x, y: cursor.y, width: cursor.width, height: cursor.height)
        let screen = try screen(named: "screen")
        func expected(_ x: Int, _ y: Int) -> UInt32? {
            guard area.contains(x: x, y: y) else { return X11TestClient.pattern(x: x, y: y) }
            let pixel = cursor.pixels[(y - area.y) * area.width + (x - area.x)]
            switch pixel >> 24 {
            case 0xFF: return pixel & 0xFF_FFFF
            case 0: return X11TestClient.pattern(x: x, y: y)
            default: return nil  // blended: rounding is libyuv's
            }
        }
        let with = ScreenSource(screen: screen, showsCursor: true)
        defer { with.release() }
        let bad = try with.grabFrame { frame in mismatches(frame) { x, y in expected(x, y) ?? X11TestClient.pattern(x: x, y: y) } }
            .filter { expected($0.x, $0.y) != nil }
        XCTAssertTrue(bad.isEmpty, "first differences: \(bad)")
        let without = ScreenSource(screen: screen)
        defer { without.release() }
        XCTAssertTrue(try without.grabFrame { mismatches($0, X11TestClient.pattern) }.isEmpty, "no cursor unless asked")
        // A moved cursor is a change, though no pixel of the root window changed.
        let grabber = try X11ScreenGrabber(screen: screen, region: nil, showsCursor: true)
        XCTAssertEqual(try grabber.grab(timestamp: MonotonicInstant(nanoseconds: 0), sequence: 0, onlyIfChanged: true) { _ in }, .delivered)
        XCTAssertEqual(try grabber.grab(timestamp: MonotonicInstant(nanoseconds: 0), sequence: 1, onlyIfChanged: true) { _ in }, .unchanged)
        client.warpPointer(x: 300, y: 200)
        XCTAssertEqual(try grabber.grab(timestamp: MonotonicInstant(nanoseconds: 0), sequence: 1, onlyIfChanged: true) { _ in }, .delivered)
    }

    func testTheAutomaticBackendIsX11WhenDISPLAYAnswersElseKMS() async {
        let saved = getenv("DISPLAY").map { String(cString: $0) }
        defer { if let saved { setenv("DISPLAY", saved, 1) } else { unsetenv("DISPLAY") } }
        setenv("DISPLAY", server.display, 1)
        let automatic = await ScreenSource.discover()
        XCTAssertFalse(automatic.devices.isEmpty)
        XCTAssertTrue(automatic.devices.allSatisfy { $0.backend == .x11 && $0.card == server.display }, "\(automatic.devices)")
        XCTAssertEqual(ScreenSource.scan(backend: .kms).devices.filter { $0.backend != .kms }, [])
        setenv("DISPLAY", ":4711", 1)
        let fallback = ScreenSource.scan()
        XCTAssertTrue(fallback.devices.allSatisfy { $0.backend == .kms }, "\(fallback.devices)")
        XCTAssertTrue(fallback.problems.contains { $0.code == .notFound && $0.device == ":4711" }, "the X11 failure is told: \(fallback.problems)")
        unsetenv("DISPLAY")
        XCTAssertFalse(ScreenSource.scan().problems.contains { $0.operation == "xcb_connect" }, "no DISPLAY: KMS only, X11 not tried")
        let explicit = ScreenSource.scan(backend: .x11)
        XCTAssertEqual(explicit.devices, [])
        XCTAssertTrue(explicit.problems.first?.detail.contains("DISPLAY is not set") == true, "\(explicit.problems)")
    }

    func testNoXServerIsNotFoundSayingWhatToDo() {
        XCTAssertThrowsError(try ScreenSource.x11Screens(display: ":4711")) { error in
            let error = error as? MediaDevicesError
            XCTAssertEqual(error?.code, .notFound)
            XCTAssertTrue(error?.detail.contains("start X") == true, "\(String(describing: error))")
        }
    }

    /// Polls `condition` for up to 20 s (a busy machine); fails naming `what`.
    private func wait(_ what: String, _ condition: () -> Bool) throws {
        let deadline = Date().addingTimeInterval(20)
        while !condition() {
            if Date() > deadline { throw XvfbError("timed out waiting for: \(what)") }
            usleep(5_000)
        }
    }
}

/// Records the sequence numbers of the frames delivered, and whether pixel (10, 10) is blue.
private final class Frames: VideoFrameConsumer, Sendable {
    let sequences = Mutex<[UInt32]>([])
    let blueAt10 = Mutex<[Bool]>([])
    func consumeFrame(_ frame: VideoFrame) {
        let plane = frame.plane(0)
        let offset = 10 * plane.bytesPerRow + 10 * 4
        let blue = plane.bytes[offset] == 0xFF && plane.bytes[offset + 1] == 0 && plane.bytes[offset + 2] == 0
        sequences.withLock { $0.append(frame.sequence) }
        blueAt10.withLock { $0.append(blue) }
    }
    func captureDidStop(error: MediaDevicesError?) {}
}
