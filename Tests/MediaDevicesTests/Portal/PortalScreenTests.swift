import CPNG
import Foundation
import Synchronization
@testable import MediaDevices
@testable import MediaDevicesAudio
@testable import MediaDevicesVideo
@testable import MediaDevicesCore
import XCTest
import TestSupport

/// The portal backend of `ScreenSource` against a real headless Wayland session per test
/// (sway + PipeWire + xdg-desktop-portal-wlr + xdg-desktop-portal, `WaylandSession`): the
/// portal's source types as screens, grabs equal to the picture on the screen, changes as new
/// frames and a still screen as unchanged grabs, the documented errors for a cancelled dialog
/// and a missing portal, the session closed on release, restore tokens. Without the session
/// these tests fail (they never skip).
final class PortalScreenTests: XCTestCase {
    private var session: WaylandSession?

    override func tearDown() {
        try? session?.stop()
        session = nil
    }

    private func start(_ mode: WaylandSession.Mode = .screenCast) throws -> WaylandSession {
        let started = try WaylandSession(mode)
        session = started
        print("Wayland session (\(mode)) started in \(String(format: "%.2f", started.startupSeconds)) s")
        return started
    }

    private func monitor(of session: WaylandSession) throws -> Screen {
        let screens = try ScreenSource.portalScreens(busAddress: session.busAddress)
        return try XCTUnwrap(screens.first { $0.name == "monitor" }, "no monitor among \(screens)")
    }

    func testThePortalsSourceTypesAreScreensOfThePortalBackend() throws {
        let session = try start()
        let screens = try ScreenSource.portalScreens(busAddress: session.busAddress)
        // xdg-desktop-portal-wlr offers monitors only.
        XCTAssertEqual(screens.map(\.name), ["monitor"])
        let screen = try XCTUnwrap(screens.first)
        XCTAssertEqual(screen.backend, .portal)
        XCTAssertEqual(screen.card, session.busAddress)
        XCTAssertEqual(screen.connectorID, 1)
        XCTAssertEqual(screen.uniqueID, "portal:monitor")
        XCTAssertNil(screen.mode, "the user has not chosen yet")
    }

    func testGrabEqualsTheBackgroundPixelForPixel() throws {
        let session = try start()
        let expected = try PortalScreenTests.decodePNG(session.backgroundPNGPath)
        let source = ScreenSource(screen: try monitor(of: session))
        let log = LogRecorder()
        source.logger = log.logger(label: "test.portal")
        defer { source.release() }
        let (seconds, redraws) = try session.initializeWhileRedrawing(source)
        // The source's logger hears the portal's request and its answer, with the node.
        let portalLines = log.lines.filter { $0.contains("screen-cast portal") }
        XCTAssertEqual(portalLines.count, 2, "\(log.lines)")
        XCTAssertTrue(portalLines.first?.hasPrefix("info: asking the screen-cast portal for a screen") == true, "\(portalLines)")
        XCTAssertTrue(portalLines.last?.hasPrefix("info: screen-cast portal granted a stream") == true, "\(portalLines)")
        XCTAssertTrue(portalLines.last?.contains("device=portal:monitor") == true, "\(portalLines)")
        XCTAssertTrue(portalLines.last?.range(of: #"node=[1-9][0-9]*"#, options: .regularExpression) != nil, "\(portalLines)")
        print("portal: session, choice, stream and first picture in \(String(format: "%.0f", seconds * 1000)) ms (\(redraws) redraws)")
        // After a redraw (sway's grey for a moment, then the picture), let the picture arrive.
        if redraws > 0 { usleep(300_000) }
        XCTAssertEqual(source.currentScreen?.mode?.size, Size(width: 640, height: 480))
        let bad = try source.grabFrame { frame -> [String] in
            XCTAssertEqual(frame.format.pixelFormat, .xbgr32, "BGRx in memory")
            XCTAssertEqual(frame.format.size, Size(width: expected.width, height: expected.height))
            return PortalScreenTests.mismatches(frame, expected, at: (0, 0))
        }
        XCTAssertTrue(bad.isEmpty, "first differences: \(bad)")
    }

    func testRegionIsCutFromTheSharedPicture() throws {
        let session = try start()
        let expected = try PortalScreenTests.decodePNG(session.backgroundPNGPath)
        // Across the middle: the four quadrants and the checkerboard.
        let region = Rect(x: 290, y: 210, width: 60, height: 50)
        let source = ScreenSource(screen: try monitor(of: session), region: region)
        defer { source.release() }
        if try session.initializeWhileRedrawing(source).redraws > 0 { usleep(300_000) }
        let bad = try source.grabFrame { frame -> [String] in
            XCTAssertEqual(frame.format.size, Size(width: 60, height: 50))
            return PortalScreenTests.mismatches(frame, expected, at: (region.x, region.y))
        }
        XCTAssertTrue(bad.isEmpty, "first differences: \(bad)")
    }

    func testAChangeArrivesAsANewFrameAndAStillScreenCountsAsUnchanged() throws {
        let session = try start()
        let source = ScreenSource(screen: try monitor(of: session), frameRate: FrameRate(30))
        defer { source.release() }
        let frames = CentreColours()
        source.consumer = frames
        if try session.initializeWhileRedrawing(source).redraws > 0 { usleep(300_000) }
        try source.start()
        try wait("unchanged grabs counted") { source.statistics.unchangedFrames >= 10 }
        XCTAssertEqual(source.statistics.deliveredFrames, 1, "a still screen gives its first frame only")
        // A still screen costs the capture thread about one wake-up a second (it sleeps on the
        // PipeWire loop), not one per deadline (60 in these 2 s at 30 fps).
        let stillWakeUps = try CaptureThreadFigures.screenWakeUps(during: 2)
        XCTAssertLessThanOrEqual(stillWakeUps, 6, "capture-thread wake-ups in 2 s of a still screen at 30 fps")
        try session.setBackground(color: "#00ff00")
        try wait("the change delivered (\(source.statistics), centre colours \(frames.colours.withLock { $0 }))") {
            frames.colours.withLock { $0.last } == 0x00FF00
        }
        let unchangedBefore = source.statistics.unchangedFrames
        try wait("unchanged again") { source.statistics.unchangedFrames >= unchangedBefore + 10 }
        source.stop()
        let statistics = source.statistics
        let colours = frames.colours.withLock { $0 }
        print("portal capture: \(statistics.deliveredFrames) frames, \(statistics.unchangedFrames) unchanged grabs, \(stillWakeUps) capture-thread wake-ups in 2 s still; centre colours \(colours.map { String($0, radix: 16) })")
        XCTAssertEqual(colours.first, 0x000000, "the first frame shows the background (a black checkerboard pixel at the centre)")
        XCTAssertEqual(colours.last, 0x00FF00)
        XCTAssertLessThanOrEqual(statistics.deliveredFrames, 4, "only changes are delivered (sway may draw the new background in steps): \(statistics)")
        XCTAssertEqual(statistics.droppedFrames, 0, "unchanged grabs are no sequence gaps: \(statistics)")
        XCTAssertEqual(frames.sequences.withLock { $0 }, Array(0..<UInt32(statistics.deliveredFrames)))
    }

    /// A screen that changes all the time (a 30 fps animation) is delivered at its own rate:
    /// each picture wakes the capture thread (a missed notice would leave only the one-second
    /// safety net, about one frame a second, which is what the test tells it from).
    func testAMovingPictureIsDeliveredAsItChanges() throws {
        let session = try start()
        let source = ScreenSource(screen: try monitor(of: session), frameRate: FrameRate(30))
        defer { source.release() }
        if try session.initializeWhileRedrawing(source).redraws > 0 { usleep(300_000) }
        try session.animate(fps: 30)
        try source.start()
        usleep(1_000_000)   // the animation is up
        // More frames than the safety net could give (one a second, and one pending): each
        // picture woke the capture thread. Judged against the time taken rather than in a fixed
        // window, so that a busy host slowing ffplay's software-drawn animation (its timing, not
        // ours) only takes longer: at 30 fps this holds after a fraction of a second.
        let before = source.statistics.deliveredFrames
        let started = Date()
        var delivered = 0, elapsed = 0.0
        repeat {
            usleep(100_000)
            delivered = source.statistics.deliveredFrames - before
            elapsed = Date().timeIntervalSince(started)
        } while (delivered < 10 || Double(delivered) < elapsed.rounded(.up) + 3) && elapsed < 20
        let statistics = source.statistics
        source.stop()
        print(String(format: "portal capture of a 30 fps animation: %d frames in %.1f s, %d unchanged deadlines in all", delivered, elapsed, statistics.unchangedFrames))
        XCTAssertGreaterThanOrEqual(delivered, 10, "frames delivered in \(elapsed) s of a 30 fps animation: \(statistics)")
        XCTAssertGreaterThanOrEqual(Double(delivered), elapsed.rounded(.up) + 3,
                                    "more frames than the one-second safety net gives: each picture wakes the capture thread (\(delivered) in \(elapsed) s): \(statistics)")
        XCTAssertEqual(statistics.droppedFrames, 0, "\(statistics)")
    }

    func testAModeChangeIsFollowed() throws {
        let session = try start()
        let source = ScreenSource(screen: try monitor(of: session), frameRate: FrameRate(30))
        defer { source.release() }
        let sizes = FrameSizes()
        source.consumer = sizes
        try session.initializeWhileRedrawing(source)
        try source.start()
        try wait("the first frame") { source.statistics.deliveredFrames >= 1 }
        try session.swaymsg("output", "HEADLESS-1", "mode", "800x600")
        // As at the start, the first picture after the stream is renegotiated can be lost
        // (see WaylandSession.initializeWhileRedrawing): redraw until one arrives.
        var redraws = 0
        try wait("a frame at 800x600 (\(sizes.sizes.withLock { $0 }), \(source.statistics), \(String(describing: sizes.error.withLock { $0 })))") {
            if sizes.sizes.withLock({ $0.last }) == Size(width: 800, height: 600) { return true }
            redraws += 1
            if redraws % 100 == 0 { try? session.swaymsg("output", "HEADLESS-1", "bg", redraws % 200 == 0 ? "#336699" : "#996633", "solid_color") }
            return false
        }
        print("portal mode change followed after \(redraws / 100) redraws; sizes \(Set(sizes.sizes.withLock { $0 }))")
        XCTAssertTrue(source.isCapturing, "capture goes on at the new size")
        XCTAssertEqual(sizes.sizes.withLock { $0.first }, Size(width: 640, height: 480))
        XCTAssertEqual(source.currentScreen?.mode?.size, Size(width: 800, height: 600))
    }

    func testTheSharedScreenGoingAwayEndsCaptureAsDisconnected() throws {
        let session = try start()
        let source = ScreenSource(screen: try monitor(of: session), frameRate: FrameRate(30))
        defer { source.release() }
        let frames = StopRecorder()
        source.consumer = frames
        try session.initializeWhileRedrawing(source)
        try source.start()
        try wait("the first frame") { source.statistics.deliveredFrames >= 1 }
        // The portal backend's stream (the node shared) goes away with it.
        try session.terminate("xdg-desktop-portal-wlr")
        try wait("capture ended") { !source.isCapturing }
        let error = frames.error.withLock { $0 }
        XCTAssertEqual(error?.code, .disconnected, "\(String(describing: error))")
    }

    func testACancelledDialogIsPermissionDenied() throws {
        let session = try start(.cancel)
        let source = ScreenSource(screen: try monitor(of: session))
        let log = LogRecorder()
        source.logger = log.logger(label: "test.portal")
        defer { source.release() }
        XCTAssertThrowsError(try source.initialize()) { error in
            let error = error as? MediaDevicesError
            XCTAssertEqual(error?.code, .permissionDenied, "\(String(describing: error))")
            XCTAssertEqual(error?.operation, "SelectSources")
            XCTAssertTrue(error?.detail.contains("The user cancelled") == true, "\(String(describing: error))")
        }
        // A refusal is a warning (not an error): the user said no.
        XCTAssertEqual(log.lines.filter { $0.hasPrefix("warning: screen-cast portal request refused") }.count, 1, "\(log.lines)")
    }

    /// A task waiting in `prepare()` for a dialog nobody answers ends promptly when cancelled,
    /// with `.cancelled`, and leaves no descriptor, thread or portal session behind.
    func testCancellingTheWaitForTheDialogEndsItPromptlyLeavingNothingOpen() async throws {
        let session = try start(.hang)
        let screen = try monitor(of: session)
        let observer = try DBusConnection(address: session.busAddress)
        func openSessions() throws -> Int {
            // The portal exports one node per session under /org/freedesktop/portal/desktop/session/<sender>/.
            let reply = try observer.call(ScreenCastPortalClient.destination, "/org/freedesktop/portal/desktop/session",
                                          "org.freedesktop.DBus.Introspectable", "Introspect")
            let xml = try reply.read()?.string ?? ""
            return xml.components(separatedBy: "<node name=").count - 1
        }
        // Swift's global executor starts its threads (and libdispatch its descriptors) on first use: before counting.
        try await Task.detached { try await Task.sleep(for: .milliseconds(10)) }.value
        func descriptors() -> [String] {
            ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []).sorted().map { fd in
                "\(fd) -> \((try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(fd)")) ?? "?")"
            }
        }
        func threadNames() -> [String] {
            ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []).compactMap { task in
                (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
            }
        }
        let descriptorsBefore = descriptors()
        let source = ScreenSource(screen: screen)
        let waiting = Task { try await source.prepare() }
        try wait("the portal's backend runs the chooser (sleep 600)") {
            ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).contains { pid in
                (try? String(contentsOfFile: "/proc/\(pid)/cmdline", encoding: .utf8)) == "sleep\u{0}600\u{0}"
            }
        }
        try await Task.sleep(for: .milliseconds(300))
        let cancelled = Date()
        waiting.cancel()
        let outcome = await waiting.result
        let seconds = Date().timeIntervalSince(cancelled)
        switch outcome {
        case .success: XCTFail("prepare() returned although nobody answered the dialog")
        case .failure(let error):
            XCTAssertEqual((error as? MediaDevicesError)?.code, .cancelled, "\(error)")
            XCTAssertEqual((error as? MediaDevicesError)?.operation, "SelectSources", "\(error)")
        }
        print(String(format: "figure: prepare() ended %.2f s after its task was cancelled", seconds))
        XCTAssertLessThan(seconds, 3, "ended promptly (one wait slice; the request and the session are closed without waiting for the hung backend)")
        XCTAssertNil(source.portalSessionHandle, "nothing installed")
        XCTAssertFalse(source.isCapturing)
        source.release()
        do {
            try wait("no descriptor left and no md-screen-open thread") {
                descriptors().count <= descriptorsBefore.count && !threadNames().contains("md-screen-open")
            }
        } catch {
            XCTFail("\(error): descriptors before \(descriptorsBefore), now \(descriptors()); threads \(threadNames())")
        }
        // The session's Close is sent without waiting for the portal (whose backend hangs): the
        // portal removes the session when it gets to it (a moment later on a loaded machine).
        do {
            try wait("the portal session closed") { (try? openSessions()) == 0 }
        } catch {
            XCTFail("\(error): \(String(describing: try? openSessions())) portal session(s) still open")
        }
    }

    func testWithoutScreenCastTheErrorIsNotFoundNamingWhatToInstall() throws {
        let session = try start(.noScreenCast)
        XCTAssertThrowsError(try ScreenSource.portalScreens(busAddress: session.busAddress)) { error in
            let error = error as? MediaDevicesError
            XCTAssertEqual(error?.code, .notFound, "\(String(describing: error))")
            XCTAssertTrue(error?.detail.contains("xdg-desktop-portal-wlr") == true, "\(String(describing: error))")
        }
        // A screen made from an earlier listing fails the same way.
        let source = ScreenSource(screen: PortalScreens.screen(card: session.busAddress, type: 1, name: "monitor"))
        defer { source.release() }
        XCTAssertThrowsError(try source.initialize()) { XCTAssertEqual(($0 as? MediaDevicesError)?.code, .notFound) }
        // No session bus at all.
        XCTAssertThrowsError(try ScreenSource.portalScreens(busAddress: "unix:path=/nonexistent/bus")) { error in
            let error = error as? MediaDevicesError
            XCTAssertEqual(error?.code, .notFound, "\(String(describing: error))")
            XCTAssertTrue(error?.detail.contains("xdg-desktop-portal") == true, "\(String(describing: error))")
        }
    }

    func testReleaseClosesThePortalSession() throws {
        let session = try start()
        let observer = try DBusConnection(address: session.busAddress)
        func sessionIsOpen(_ path: String) throws -> Bool {
            let reply = try observer.call(ScreenCastPortalClient.destination, path, "org.freedesktop.DBus.Introspectable", "Introspect")
            return try reply.read()?.string?.contains("org.freedesktop.portal.Session") == true
        }
        let source = ScreenSource(screen: try monitor(of: session))
        try session.initializeWhileRedrawing(source)
        let path = try XCTUnwrap(source.portalSessionHandle)
        XCTAssertTrue(try sessionIsOpen(path), "the portal exports \(path) while capturing")
        source.release()
        XCTAssertNil(source.portalSessionHandle)
        XCTAssertFalse(try sessionIsOpen(path), "release closed \(path)")
        try wait("xdg-desktop-portal-wlr closed the cast") { session.backendLogLines().contains { $0.hasSuffix("dbus: session closed") } }
    }

    func testTheRestoreTokenIsReturnedKeptAndReused() throws {
        let session = try start()
        let file = session.directory.appendingPathComponent("restore-token").path
        let options = PortalOptions(restoreTokenFile: file)
        let screen = try monitor(of: session)
        let first = ScreenSource(screen: screen, portal: options)
        try session.initializeWhileRedrawing(first)
        let token = try XCTUnwrap(first.portalRestoreToken, "the portal returned no restore token")
        XCTAssertEqual(try String(contentsOfFile: file, encoding: .utf8), token + "\n")
        first.release()

        let mark = session.backendLogLines().count
        let second = ScreenSource(screen: screen, portal: options)
        defer { second.release() }
        try session.initializeWhileRedrawing(second)
        let lines = session.backendLogLines().dropFirst(mark)
        XCTAssertTrue(lines.contains { $0.hasSuffix("dbus: restoring session from data") },
                      "the second session was restored from the token: \(lines.joined(separator: "\n"))")
        XCTAssertNotNil(second.portalRestoreToken)
    }

    /// Polls `condition` for up to 20 s (a busy machine); fails naming `what`.
    private func wait(_ what: String, _ condition: () -> Bool) throws {
        let deadline = Date().addingTimeInterval(20)
        while !condition() {
            if Date() > deadline { throw WaylandSessionError("timed out waiting for: \(what)") }
            usleep(5_000)
        }
    }

    /// The first (at most 10) pixels of an `XBGR32` frame that differ from `picture` (RGB rows)
    /// offset by `origin`, compared on R, G and B.
    private static func mismatches(_ frame: VideoFrame, _ picture: (width: Int, height: Int, rgb: [UInt8]),
                                   at origin: (x: Int, y: Int)) -> [String] {
        let plane = frame.plane(0)
        var found: [String] = []
        for y in 0..<frame.format.height {
            for x in 0..<frame.format.width {
                let offset = y * plane.bytesPerRow + x * 4
                let at = ((origin.y + y) * picture.width + origin.x + x) * 3
                let got = (plane.bytes[offset + 2], plane.bytes[offset + 1], plane.bytes[offset])
                let wanted = (picture.rgb[at], picture.rgb[at + 1], picture.rgb[at + 2])
                if got != wanted, found.count < 10 { found.append("(\(x),\(y)): \(got) instead of \(wanted)") }
            }
        }
        return found
    }

    /// Decodes a PNG into RGB rows with libpng's simplified API.
    private static func decodePNG(_ path: String) throws -> (width: Int, height: Int, rgb: [UInt8]) {
        var image = png_image()
        image.version = cpng_IMAGE_VERSION
        guard png_image_begin_read_from_file(&image, path) != 0 else { throw WaylandSessionError("libpng cannot read \(path)") }
        image.format = cpng_FORMAT_RGB
        var rgb = [UInt8](repeating: 0, count: Int(image.width * image.height * 3))
        guard png_image_finish_read(&image, nil, &rgb, 0, nil) != 0 else { throw WaylandSessionError("libpng cannot decode \(path)") }
        return (Int(image.width), Int(image.height), rgb)
    }
}

/// Records the size of each frame.
private final class FrameSizes: VideoFrameConsumer, Sendable {
    let sizes = Mutex<[Size]>([])
    let error = Mutex<MediaDevicesError?>(nil)
    func consumeFrame(_ frame: VideoFrame) { sizes.withLock { $0.append(frame.format.size) } }
    func captureDidStop(error: MediaDevicesError?) { self.error.withLock { $0 = error } }
}

/// Records the error capture ended with.
private final class StopRecorder: VideoFrameConsumer, Sendable {
    let error = Mutex<MediaDevicesError?>(nil)
    func consumeFrame(_ frame: VideoFrame) {}
    func captureDidStop(error: MediaDevicesError?) { self.error.withLock { $0 = error } }
}

/// Records each frame's sequence number and the colour (0xRRGGBB) of its centre pixel.
private final class CentreColours: VideoFrameConsumer, Sendable {
    let sequences = Mutex<[UInt32]>([])
    let colours = Mutex<[UInt32]>([])
    func consumeFrame(_ frame: VideoFrame) {
        let plane = frame.plane(0)
        let offset = frame.format.height / 2 * plane.bytesPerRow + frame.format.width / 2 * 4
        let colour = UInt32(plane.bytes[offset + 2]) << 16 | UInt32(plane.bytes[offset + 1]) << 8 | UInt32(plane.bytes[offset])
        sequences.withLock { $0.append(frame.sequence) }
        colours.withLock { $0.append(colour) }
    }
    func captureDidStop(error: MediaDevicesError?) {}
}
