import Foundation
import Glibc
import MediaDevices
import XCTest

/// The screen-capture checks, run against each DRM driver of the rig: bochs (`--display std`,
/// ScreenTests) and virtio-gpu (`--display virtio`, ScreenVirtioTests).
enum ScreenScenarios {
    /// Loads `module` and returns its screen (the first connected output of card0).
    static func loadDisplay(_ module: String, file: StaticString = #filePath, line: UInt = #line) throws -> Screen {
        try Rig.run("modprobe \(module)", file: file, line: line)
        for _ in 0..<100 {
            if let screen = ScreenSource.scan().devices.first(where: { $0.card == "/dev/dri/card0" && $0.mode != nil }) { return screen }
            usleep(50_000)
        }
        XCTFail("\(module): no screen appeared on /dev/dri/card0 (\(ScreenSource.scan().problems))", file: file, line: line)
        throw RigError.commandFailed("modprobe \(module)")
    }

    /// The screen as enumerated now (its mode follows the test display's modesets).
    static func current(_ screen: Screen) throws -> Screen {
        try XCTUnwrap(ScreenSource.scan().devices.first { $0.uniqueID == screen.uniqueID })
    }

    /// A screen showing the test display's pattern, and the process's figures taken then: what a
    /// test compares with once it has released the sources it captured the screen with.
    struct ShownPattern {
        /// The screen as loaded.
        let screen: Screen
        /// The test display (DRM master while it lives): keep it while the test captures.
        let display: TestDisplay
        /// The buffer the display shows.
        let buffer: TestDisplay.Buffer
        /// The screen as enumerated with the pattern shown.
        let shown: Screen
        /// The process's figures, settled, with the pattern shown.
        let before: ProcessFigures
        /// The process's DMA-BUF mappings then (`ProcessFigures.dmaBufMappings()`).
        let mappedBefore: [String]
    }

    /// Loads `module`, shows the 640x480 pattern on its screen and takes the process's figures.
    static func showPattern(on module: String, file: StaticString = #filePath, line: UInt = #line) throws -> ShownPattern {
        let screen = try loadDisplay(module, file: file, line: line)
        let display = try TestDisplay()
        let buffer = try display.showPattern(width: 640, height: 480)
        let shown = try current(screen)
        return ShownPattern(screen: screen, display: display, buffer: buffer, shown: shown,
                            before: ProcessFigures.settled(), mappedBefore: ProcessFigures.dmaBufMappings())
    }

    /// Enumeration agrees with sysfs: connector name, connection, and the current mode is one
    /// the connector lists; the EDID's monitor name is QEMU's.
    static func enumeration(_ screen: Screen, driver: String) throws {
        XCTAssertEqual(screen.driver, driver)
        let sysfs = "/sys/class/drm/card0-\(screen.name)"
        XCTAssertEqual(try String(contentsOfFile: "\(sysfs)/status", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines), "connected",
                       "\(screen.name) is the kernel's name of a connected connector")
        let modes = try String(contentsOfFile: "\(sysfs)/modes", encoding: .utf8).split(separator: "\n").map(String.init)
        let mode = try XCTUnwrap(screen.mode)
        XCTAssertTrue(modes.contains("\(mode.width)x\(mode.height)"), "\(mode) is one of \(modes)")
        XCTAssertGreaterThan(mode.refreshRate.framesPerSecond.doubleValue, 20)
        XCTAssertNotNil(screen.crtcID)
        XCTAssertNotNil(screen.primaryPlaneID)
        XCTAssertEqual(screen.monitorName, "QEMU Monitor", "QEMU's EDID names the monitor")
        print("screen: \(screen)")
    }

    /// Before any test display runs, the grab shows the console (fbcon), with text written to
    /// it: not blank, and equal to what the kernel's fbdev emulation (/dev/fb0) holds.
    static func console(_ screen: Screen) throws {
        try Rig.run("printf '\\033[2J\\033[HMediaDevices screen test: the console framebuffer\\n%s\\n' \"$(seq 1 40 | tr '\\n' ' ')\" > /dev/tty1")
        usleep(300_000)  // fbdev damage is flushed to the scanout buffer by a worker
        let source = ScreenSource(screen: screen)
        defer { source.release() }
        let (lit, size) = try source.grabFrame { frame -> (Int, Size) in
            var lit = 0
            for y in 0..<frame.height { for x in 0..<frame.width where ScreenCheck.pixel(frame, x: x, y: y) != 0 { lit += 1 } }
            return (lit, frame.format.size)
        }
        print("console: \(lit) of \(size.width * size.height) pixels lit, \(source.framebuffer!)")
        XCTAssertGreaterThan(lit, 500, "the console's text shows in the grab")
        XCTAssertLessThan(lit, size.width * size.height / 2, "mostly black background")
    }

    /// The test display shows the pattern; one grab returns it pixel for pixel (whole screen
    /// and a region), and capture delivers it at the asked rate with rising timestamps.
    static func pattern(_ screen: Screen, mapping: FramebufferMapping = .automatic) throws {
        let display = try TestDisplay()
        try display.showPattern(width: 640, height: 480)
        let shown = try current(screen)
        XCTAssertEqual(shown.mode?.size, Size(width: 640, height: 480))
        let source = ScreenSource(screen: shown, frameRate: FrameRate(20), mapping: mapping)
        defer { source.release() }
        let mismatch = try source.grabFrame { frame -> String? in
            XCTAssertEqual(frame.format.pixelFormat, .xbgr32, "DRM XRGB8888")
            XCTAssertEqual(frame.format.size, Size(width: 640, height: 480))
            return ScreenCheck.firstMismatch(frame, screenWidth: 640, screenHeight: 480)
        }
        XCTAssertNil(mismatch, "the grab is the pattern")
        let framebuffer = try XCTUnwrap(source.framebuffer)
        XCTAssertEqual(framebuffer.id, display.shown?.fb)
        XCTAssertEqual(framebuffer.bytesPerRow, display.shown?.pitch)
        if mapping != .automatic { XCTAssertEqual(framebuffer.mapping, mapping) }
        print("pattern: \(framebuffer)")

        let region = Rect(x: 250, y: 150, width: 200, height: 120)
        let cropped = ScreenSource(screen: shown, region: region, mapping: mapping)
        defer { cropped.release() }
        let croppedMismatch = try cropped.grabFrame { frame -> String? in
            XCTAssertEqual(frame.format.size, Size(width: 200, height: 120))
            return ScreenCheck.firstMismatch(frame, screenWidth: 640, screenHeight: 480, originX: 250, originY: 150)
        }
        XCTAssertNil(croppedMismatch, "the region is the pattern's part at (250, 150)")

        let recorder = ScreenFrameRecorder()
        source.consumer = recorder
        try source.start()
        usleep(1_600_000)
        source.stop()
        let (count, timestamps) = recorder.results
        let statistics = source.statistics
        print("figure: screen capture at 20 fps: \(count) frames + \(statistics.droppedFrames) skipped deadlines in 1.6 s, measured \(String(format: "%.2f", statistics.measuredFrameRate)) fps, mean capture delay \(String(format: "%.0f", statistics.meanCaptureDelay.inMicroseconds)) µs")
        // Every deadline (33 in 1.6 s at 20 fps, counting the first at 0) gives a frame or, when
        // the emulated machine is too loaded to keep up, a counted gap; never more than the rate.
        XCTAssertEqual(Double(count + statistics.droppedFrames), 33, accuracy: 2, "deadlines: frames + counted gaps")
        XCTAssertGreaterThanOrEqual(count, 16, "at least half the deadlines give frames, even under load")
        XCTAssertLessThanOrEqual(statistics.measuredFrameRate, 20.5, "never faster than asked")
        XCTAssertEqual(timestamps, timestamps.sorted(), "timestamps rise")
        XCTAssertEqual(Set(timestamps).count, timestamps.count)
        XCTAssertEqual(statistics.deliveredFrames, count)
        try converted(source)
    }

    /// The seeds' screen capturer publishes ARGB: through `frames(bufferSize:output:)` the
    /// pattern arrives unchanged (alpha opaque); NV12 arrives at the screen's size.
    private static func converted(_ source: ScreenSource) throws {
        source.consumer = nil
        let argb = try source.frameSequence(bufferSize: 2, output: OutputFormat(.argb))
        let nv12 = try source.frameSequence(bufferSize: 2, output: OutputFormat(.nv12))
        try source.start()
        defer { source.stop() }
        let results = Results()
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            var argbIterator = argb.makeAsyncIterator(), nv12Iterator = nv12.makeAsyncIterator()
            let first = try? await argbIterator.next()
            results.argb = first?.withFrame { frame in
                (frame.format.pixelFormat, ScreenCheck.firstMismatch(frame, screenWidth: 640, screenHeight: 480),
                 frame.plane(0).bytes.load(fromByteOffset: 3, as: UInt8.self))
            }
            results.nv12 = try? await nv12Iterator.next()?.withFrame { ($0.format.pixelFormat, $0.format.size) }
            done.signal()
        }
        XCTAssertEqual(done.wait(timeout: .now() + 30), .success)
        XCTAssertEqual(results.argb?.0, .argb)
        XCTAssertNotNil(results.argb, "an ARGB frame arrived")
        if let argb = results.argb { XCTAssertNil(argb.1, "ARGB frames are the pattern") }
        XCTAssertEqual(results.argb?.2, 0xFF, "opaque alpha")
        XCTAssertEqual(results.nv12?.0, .nv12)
        XCTAssertEqual(results.nv12?.1, Size(width: 640, height: 480))
    }

    private final class Results: @unchecked Sendable {
        var argb: (PixelFormat, String?, UInt8)?
        var nv12: (PixelFormat, Size)?
    }

    /// A mode change while capturing is followed: frames go on at the new size and show the
    /// new buffer; the run does not end. The sequence leases the mapped framebuffer (no copy):
    /// a frame held across the change still reads the old framebuffer, at its old size.
    static func modeChange(_ screen: Screen) async throws {
        let display = try TestDisplay()
        try display.showPattern(width: 640, height: 480)
        let source = ScreenSource(screen: try current(screen), frameRate: FrameRate(15))
        defer { source.release() }
        let frames = source.frameSequence(bufferSize: 4)
        try source.start()
        var iterator = frames.makeAsyncIterator()
        var seen: [Size] = []
        var lastTimestamp: UInt64 = 0
        var copies = 0
        var held: VideoFrameBuffer?
        func next() async throws -> (Size, Bool) {
            guard let buffer = try await iterator.next() else { throw TestDisplayError.failed("capture ended: \(seen)") }
            if !buffer.isLeased { copies += 1 }
            held = held ?? buffer
            return buffer.withFrame { frame in
                XCTAssertGreaterThan(frame.timestamp.nanoseconds, lastTimestamp)
                lastTimestamp = frame.timestamp.nanoseconds
                seen.append(frame.format.size)
                return (frame.format.size, ScreenCheck.firstMismatch(frame, screenWidth: frame.width, screenHeight: frame.height) == nil)
            }
        }
        var before = false
        for _ in 0..<30 where !before { before = try await next() == (Size(width: 640, height: 480), true) }
        XCTAssertTrue(before, "the 640x480 pattern is captured first")
        try display.showPattern(width: 800, height: 600)
        var after = false
        for _ in 0..<45 where !after { after = try await next() == (Size(width: 800, height: 600), true) }
        XCTAssertTrue(after, "after the modeset the 800x600 pattern is captured: \(seen)")
        for _ in 0..<5 {
            let (size, matches) = try await next()
            XCTAssertEqual(size, Size(width: 800, height: 600))
            XCTAssertTrue(matches, "frames after the mode change show the new pattern")
        }
        XCTAssertTrue(source.isCapturing)
        source.stop()
        let sizes = seen.reduce(into: [Size]()) { if $0.last != $1 { $0.append($1) } }
        print("mode change: frame sizes in order \(sizes.map { "\($0.width)x\($0.height)" }), \(seen.count) frames; sequence leased \(frames.leasedFrames), copied \(frames.copiedFrames)")
        XCTAssertEqual(copies, 0, "every frame is the mapped framebuffer on lease, none a copy")
        XCTAssertGreaterThanOrEqual(frames.leasedFrames, seen.count)
        XCTAssertEqual(frames.copiedFrames, 0)
        // The first frame, held across the change and the stop, still reads its own framebuffer.
        let first = try XCTUnwrap(held)
        XCTAssertTrue(first.isLeased, "a held frame keeps its lease after stop")
        first.withFrame { frame in
            XCTAssertEqual(frame.format.size, sizes.first)
            XCTAssertEqual(frame.plane(0).bytes.count, frame.format.bufferSizes.first ?? -1, "the old framebuffer is still mapped")
        }
        first.release()
        XCTAssertEqual(sizes.first, Size(width: 640, height: 480))
        XCTAssertEqual(sizes.last, Size(width: 800, height: 600))
    }

    /// Without CAP_SYS_ADMIN and while another process is DRM master, a grab is
    /// `.permissionDenied` naming the remedy — no frame is written; once nobody else is master,
    /// the same unprivileged user becomes master itself and the grab works.
    static func unprivileged(_ screen: Screen) throws {
        try Rig.run("chmod 0666 \(screen.card)")
        defer { Rig.shell("chmod 0600 \(screen.card)") }
        let output = "/tmp/unprivileged-\(getpid()).raw"
        let command = "setpriv --reuid=65534 --regid=65534 --clear-groups \(Rig.tool) capture screen:0 --frames 2 --output \(output) --json"
        do {
            let display = try TestDisplay()
            try display.showPattern(width: 640, height: 480)
            let denied = Rig.shell(command)
            print("unprivileged, another master: exit \(denied.status)\n\(denied.output)")
            XCTAssertEqual(denied.status, 1)
            XCTAssertTrue(denied.output.contains("\"code\" : \"permissionDenied\""), denied.output)
            XCTAssertTrue(denied.output.contains("setcap cap_sys_admin+ep"), "names the narrow remedy: \(denied.output)")
            XCTAssertTrue(denied.output.contains("DRM master"), denied.output)
            XCTAssertFalse(FileManager.default.fileExists(atPath: output), "no frames were written")
        }
        usleep(200_000)
        let allowed = Rig.shell(command)
        XCTAssertEqual(allowed.status, 0, "with no other master the user becomes master: \(allowed.output) \(allowed.errors)")
        XCTAssertTrue(allowed.output.contains("\"framesWritten\" : 2"), allowed.output)
        Rig.shell("rm -f \(output)")
    }

    /// The cursor plane is blended in when asked, and only then.
    static func cursor(_ screen: Screen) throws {
        let display = try TestDisplay()
        try display.showPattern(width: 640, height: 480)
        try display.setCursor(colour: 0xFF00FF, x: 100, y: 120)
        defer { display.hideCursor() }
        usleep(200_000)
        let shown = try current(screen)
        XCTAssertNotNil(shown.cursorPlaneID, "\(shown.driver) has a cursor plane")
        let inside: (Int, Int) -> UInt32? = { x, y in (100..<164).contains(x) && (120..<184).contains(y) ? 0xFF00FF : nil }
        let with = ScreenSource(screen: shown, showsCursor: true)
        defer { with.release() }
        XCTAssertNil(try with.grabFrame { ScreenCheck.firstMismatch($0, screenWidth: 640, screenHeight: 480, override: inside) },
                     "the magenta 64x64 cursor at (100, 120) is blended over the pattern")
        let without = ScreenSource(screen: shown)
        defer { without.release() }
        XCTAssertNil(try without.grabFrame { ScreenCheck.firstMismatch($0, screenWidth: 640, screenHeight: 480) },
                     "without the overlay the grab is the primary plane only")
    }
}

/// Records the timestamps a screen capture delivers, on the capture thread (no pixel checks
/// here: under emulation they would hold up the thread and skew the rate; the frames of
/// `grabFrame` and of the mode-change run are checked whole).
final class ScreenFrameRecorder: VideoFrameConsumer, @unchecked Sendable {
    private let lock = NSLock()
    private var timestamps: [UInt64] = []

    init() { timestamps.reserveCapacity(256) }

    func consumeFrame(_ frame: VideoFrame) { lock.withLock { timestamps.append(frame.timestamp.nanoseconds) } }

    var results: (count: Int, timestamps: [UInt64]) { lock.withLock { (timestamps.count, timestamps) } }
}
