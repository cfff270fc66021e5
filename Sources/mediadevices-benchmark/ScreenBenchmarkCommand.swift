import ArgumentParser
import Foundation
import MediaDevices
import MediaDevicesCommandLine

/// `mediadevices-benchmark screen`: what a full-screen grab plus conversion to NV12 costs per
/// frame, against a plain memcpy of the same framebuffer and `ffmpeg -f kmsgrab`, measured in
/// the same run. In the rig: see the DocC article ScreensAndBackends ("Screens (DRM/KMS)"). On an X11 screen: CPU per
/// grabbed frame against `ffmpeg -f x11grab` (`X11ScreenBenchmark`). On a portal screen: CPU
/// per delivered frame against `gst-launch-1.0 pipewiresrc` (`PortalScreenBenchmark`). On every
/// backend, then: the `frames()` sequence read on the capture executor against a consumer
/// callback, CPU and wake-ups per frame in the same process (`SequenceBenchmark`; KMS also
/// exporting DMA-BUF, the way its frames are lent to sequences). The environment variable
/// `MEDIADEVICES_TIMING` says how the CPU figures were timed (`scripts/benchmark.sh` sets it for an
/// instruction-timed rig boot; native time otherwise).
struct ScreenBenchmarkCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "screen",
        abstract: "Time a screen grab + NV12 conversion per frame against memcpy and ffmpeg -f kmsgrab (X11: CPU against ffmpeg -f x11grab; portal: against gst-launch-1.0 pipewiresrc).")

    @OptionGroup var backendOption: ScreenBackendOption

    @Argument(help: "`screen:N`, a connector name or uniqueID. Default: the first screen.")
    var screen: String = "screen:0"

    @Option(help: "Frames to time in each measurement.")
    var frames: Int = 100

    @Option(help: "The conversion target: NV12, I420 or ARGB.")
    var format: String = "NV12"

    @Flag(name: .customLong("no-ffmpeg"), help: "Skip the ffmpeg -f kmsgrab (X11: x11grab; portal: gst-launch-1.0 pipewiresrc) comparison.")
    var noFFmpeg = false

    @Flag(help: "Print the figures as JSON.")
    var json = false

    func validate() throws {
        if frames < 2 { throw ValidationError("--frames must be at least 2") }
        guard let pixelFormat = OutputFormat.pixelFormat(parsing: format), OutputFormat.producibleFormats.contains(pixelFormat) else {
            throw ValidationError("--format takes NV12, I420 or ARGB")
        }
    }

    struct Figures: Encodable {
        let screen: String
        let framebuffer: String
        let width: Int
        let height: Int
        let frames: Int
        let output: String
        /// Grab only (GETCRTC + the mapped pointer), ms per frame.
        let grabMilliseconds: Double
        /// Grab + conversion, ms per frame.
        let grabAndConvertMilliseconds: Double
        /// memcpy of the same visible framebuffer bytes, ms per frame.
        let memcpyMilliseconds: Double
        let ratioToMemcpy: Double
        /// ffmpeg -f kmsgrab + hwdownload + conversion, ms per frame (startup subtracted), when it works.
        let ffmpegMilliseconds: Double?
        let ratioToFFmpeg: Double?
        let ffmpegError: String?
        /// The sequence on the capture executor against the callback, mapped (the sequence leases the mapping).
        let sequence: SequenceBenchmark.Figures?
        /// The same exporting DMA-BUF (the sequence leases the framebuffer), when the driver exports.
        let dmaBufSequence: SequenceBenchmark.Figures?
        let dmaBufError: String?
    }

    /// How the CPU figures were timed, for the sequence rows.
    static var timing: String { ProcessInfo.processInfo.environment["MEDIADEVICES_TIMING"] ?? "native time" }

    /// The sequence against the callback on `screen` captured as `make` makes its source.
    static func sequenceFigures(frames: Int, _ make: () -> ScreenSource) throws -> SequenceBenchmark.Figures {
        let source = make()
        defer { source.release() }
        try source.initialize()
        return try SequenceBenchmark(source: source, name: source.screen.uniqueID, frames: frames).run()
    }

    func run() throws {
        try reportingErrors(json: json) {
            let name = screen.hasPrefix("screen") ? screen : "screen:\(screen)"
            let target = try DeviceSelection.resolveScreen(name, backend: backendOption.backend)
            let output = OutputFormat(OutputFormat.pixelFormat(parsing: format)!)
            if target.backend == .x11 { return try runX11(target, output: output) }
            if target.backend == .portal { return try runPortal(target, output: output) }
            let source = ScreenSource(screen: target)
            defer { source.release() }
            try source.initialize()
            let converter = try FrameConverter(output: output, device: target.uniqueID)

            // Warm up: maps the framebuffer, sizes the converter's buffers.
            let size = try source.grabFrame { frame in try converter.convert(frame) { _ in frame.format.size } }
            let grab = try time(frames) { _ = try source.grabFrame { $0.bytesUsed } }
            let grabConvert = try time(frames) { try source.grabFrame { frame in try converter.convert(frame) { _ in } } }
            let copy = try source.grabFrame { frame -> Double in
                let bytes = frame.plane(0).bytes
                let target = UnsafeMutableRawPointer.allocate(byteCount: bytes.count, alignment: 64)
                defer { target.deallocate() }
                return time(frames) { target.copyMemory(from: bytes.baseAddress!, byteCount: bytes.count) }
            }
            let ffmpeg = noFFmpeg ? (nil, "skipped") : kmsgrab(target, output: output)
            let framebuffer = source.framebuffer?.description ?? "?"
            source.release()
            // Paced at 30 fps, every deadline grabbed (KMS has no damage).
            let sequence = try Self.sequenceFigures(frames: frames) { ScreenSource(screen: target, frameRate: FrameRate(30)) }
            var dmaBuf: SequenceBenchmark.Figures?
            var dmaBufError: String?
            do {
                dmaBuf = try Self.sequenceFigures(frames: frames) { ScreenSource(screen: target, frameRate: FrameRate(30), exportsDMABuf: true) }
            } catch {
                dmaBufError = "\(error)"
            }
            let figures = Figures(screen: target.uniqueID, framebuffer: framebuffer,
                                  width: size.width, height: size.height, frames: frames, output: output.pixelFormat.name,
                                  grabMilliseconds: grab, grabAndConvertMilliseconds: grabConvert, memcpyMilliseconds: copy,
                                  ratioToMemcpy: grabConvert / copy, ffmpegMilliseconds: ffmpeg.0,
                                  ratioToFFmpeg: ffmpeg.0.map { grabConvert / $0 }, ffmpegError: ffmpeg.0 == nil ? ffmpeg.1 : nil,
                                  sequence: sequence, dmaBufSequence: dmaBuf, dmaBufError: dmaBufError)
            if json { printJSON(figures); return }
            print("screen \(figures.screen): \(figures.framebuffer)")
            print(String(format: "grab only (zero-copy)            %8.3f ms/frame", grab))
            print(String(format: "grab + %@ conversion           %8.3f ms/frame  = %.2f x memcpy", output.pixelFormat.name, grabConvert, figures.ratioToMemcpy))
            print(String(format: "memcpy of the framebuffer        %8.3f ms/frame  (%.0f MB/s)", copy,
                         Double(size.width * size.height * 4) / copy / 1000))
            if let kms = ffmpeg.0 {
                print(String(format: "ffmpeg -f kmsgrab → %@          %8.3f ms/frame  (ours: %.2f x ffmpeg)", output.pixelFormat.name, kms, grabConvert / kms))
            } else {
                print("ffmpeg -f kmsgrab: \(ffmpeg.1 ?? "failed")")
            }
            print("sequence vs callback, mapped framebuffer at 30 fps (the sequence leases the mapping, as the callback reads it):")
            SequenceBenchmark.lines(sequence, timing: Self.timing).forEach { print("  " + $0) }
            if let dmaBuf {
                print("sequence vs callback, exporting DMA-BUF at 30 fps (the sequence leases the framebuffer):")
                SequenceBenchmark.lines(dmaBuf, timing: Self.timing).forEach { print("  " + $0) }
            } else {
                print("sequence vs callback, exporting DMA-BUF: not measured: \(dmaBufError ?? "?")")
            }
        }
    }

    /// The X11 figures: CPU per frame, ours against ffmpeg -f x11grab.
    private func runX11(_ target: Screen, output: OutputFormat) throws {
        var figures = try X11ScreenBenchmark(screen: target, frames: frames, output: output, runsFFmpeg: !noFFmpeg).run()
        // At 60 fps, every deadline grabbed (unchanged pictures delivered again).
        let sequence = try Self.sequenceFigures(frames: frames) { ScreenSource(screen: target, frameRate: FrameRate(60), skipsUnchangedFrames: false) }
        figures.sequence = sequence
        if json { printJSON(figures); return }
        print("screen \(figures.screen): \(figures.width)x\(figures.height), CPU per frame (user + system, all threads), \(frames) frames")
        for row in figures.rows {
            let what = row.what.padding(toLength: 20, withPad: " ", startingAt: 0)
            if let theirs = row.ffmpegMilliseconds, let ratio = row.ratioToFFmpeg {
                print(String(format: "%@ ours %8.3f ms   ffmpeg -f x11grab %8.3f ms   ours = %.2f x ffmpeg",
                             what, row.oursMilliseconds, theirs, ratio))
            } else {
                print(String(format: "%@ ours %8.3f ms   ffmpeg -f x11grab: %@", what, row.oursMilliseconds, row.ffmpegError ?? "failed"))
            }
        }
        print(String(format: "still screen at 60 fps: %d deadlines skipped (no DAMAGE), %.1f µs CPU each (the capture thread sleeps on the X connection, waking once a second; no frame, no round trip)",
                     figures.skippedGrabs, figures.cpuPerSkippedGrabMicroseconds))
        print("sequence vs callback at 60 fps, every deadline grabbed (the sequence leases the shared segment):")
        SequenceBenchmark.lines(sequence, timing: Self.timing).forEach { print("  " + $0) }
    }

    /// The portal figures: CPU per delivered frame of a changing screen, ours against
    /// `gst-launch-1.0 pipewiresrc` on the same portal.
    private func runPortal(_ target: Screen, output: OutputFormat) throws {
        var figures = try PortalScreenBenchmark(screen: target, frames: frames, output: output, runsGStreamer: !noFFmpeg).run()
        // Paced at 60 fps, above the moving picture's rate: each new picture is a frame.
        let sequence = try Self.sequenceFigures(frames: frames) { ScreenSource(screen: target, frameRate: FrameRate(60)) }
        figures.sequence = sequence
        if json { printJSON(figures); return }
        print("screen \(figures.screen): \(figures.width)x\(figures.height), CPU per delivered frame (user + system, all threads), \(frames) frames")
        for row in figures.rows {
            let what = row.what.padding(toLength: 20, withPad: " ", startingAt: 0)
            let ours = String(format: "%@ ours %8.3f ms (%d frames; %d deadlines without a new picture)", what, row.oursMilliseconds,
                              row.oursFrames, row.oursUnchangedGrabs)
            if let theirs = row.gstreamerMilliseconds, let ratio = row.ratioToGStreamer {
                print(ours + String(format: "   gst-launch-1.0 pipewiresrc %8.3f ms   ours = %.2f x gst", theirs, ratio))
            } else {
                print(ours + "   gst-launch-1.0 pipewiresrc: \(row.gstreamerError ?? "failed")")
            }
        }
        print("sequence vs callback at 60 fps pacing of a moving picture (the sequence leases the PipeWire buffer):")
        SequenceBenchmark.lines(sequence, timing: Self.timing).forEach { print("  " + $0) }
    }

    /// Milliseconds per call of `body`, over `count` calls.
    private func time(_ count: Int, _ body: () throws -> Void) rethrows -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        for _ in 0..<count { try body() }
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6 / Double(count)
    }

    /// ffmpeg's kmsgrab on the same card, downloading and converting to the same format:
    /// wall time of `frames` + 10 frames minus that of 10 frames (startup cancels out).
    private func kmsgrab(_ screen: Screen, output: OutputFormat) -> (Double?, String?) {
        let pixelFormat = ["NV12": "nv12", "YU12": "yuv420p"][output.pixelFormat.name] ?? "bgra"
        func run(_ count: Int) -> (Double?, String?) {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["ffmpeg", "-hide_banner", "-nostdin", "-loglevel", "warning", "-device", screen.card,
                                 "-f", "kmsgrab", "-framerate", "1000", "-i", "-",
                                 "-vf", "hwdownload,format=bgr0,format=\(pixelFormat)", "-frames:v", "\(count)", "-f", "null", "-"]
            let errors = Pipe()
            process.standardError = errors
            process.standardOutput = FileHandle.nullDevice
            let start = DispatchTime.now().uptimeNanoseconds
            do { try process.run() } catch { return (nil, "could not run ffmpeg: \(error)") }
            let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6
            guard process.terminationStatus == 0 else {
                // kmsgrab's own messages say why (bochs: PRIME export, ENOSYS); else the last lines.
                let lines = message.split(separator: "\n")
                let own = lines.filter { $0.contains("kmsgrab") }
                return (nil, "failed (exit \(process.terminationStatus)): \((own.isEmpty ? Array(lines.suffix(3)) : own).joined(separator: " / "))")
            }
            return (elapsed, nil)
        }
        let short = run(10)
        guard let base = short.0 else { return short }
        let long = run(frames + 10)
        guard let total = long.0 else { return long }
        return (max(total - base, 0) / Double(frames), nil)
    }
}
