import ArgumentParser
import Dispatch
import Foundation
import MediaDevices

/// `mediadevices capture DEVICE`: capture N frames to a file and print the statistics.
struct CaptureCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "capture",
        abstract: "Capture frames to a file (Y4M where the format allows it, else raw frames).")

    @Argument(help: "A device path, an index from `list`, a uniqueID, `testpattern`, `testpattern:noise`, or `screen:N` (a screen from `screens`).")
    var device: String

    @Option(help: "Pixel format as a fourcc or name (YUYV, NV12, YU12/I420, MJPG, …). Default: the first raw format.")
    var format: String?

    @Option(help: "Frame size WxH. Default: 640x480 or the nearest offered.")
    var size: String?

    @Option(help: "Frame rate (30, 30000/1001, 29.97): the best rate at or below it is chosen.")
    var fps: String?

    @Option(help: "Number of frames to write.")
    var frames: Int = 30

    @Option(help: "Output file.")
    var output: String

    @Option(help: "Driver buffers to request (at least 3).")
    var buffers: Int = 4

    @Option(help: "Frames that may wait for the disk before the oldest is dropped (and counted).")
    var queue: Int = 16

    @Option(help: "Give up after this many seconds without all frames (default: 10 s plus twice the expected duration).")
    var timeout: Double?

    @Option(help: "Screens only: capture this region, X,Y,WxH (e.g. 0,0,640x480).")
    var region: String?

    @Flag(help: "Screens only: blend the cursor plane's image in.")
    var cursor = false

    @Flag(help: "Print the result as JSON (see README for the shape).")
    var json = false

    func validate() throws {
        if let format, PixelFormat(named: format) == nil { throw ValidationError("unknown pixel format '\(format)'") }
        if let size, Size(parsing: size) == nil { throw ValidationError("--size takes WxH, e.g. 640x480") }
        if let fps, FrameRate(parsing: fps) == nil { throw ValidationError("--fps takes a positive number or fraction, e.g. 30 or 30000/1001") }
        if frames < 1 { throw ValidationError("--frames must be at least 1") }
        if let region, Rect(parsingRegion: region) == nil { throw ValidationError("--region takes X,Y,WxH, e.g. 0,0,640x480") }
    }

    func run() throws {
        try reportingErrors(json: json) {
            let request = FormatRequest(pixelFormat: format.flatMap(PixelFormat.init(named:)),
                                        size: size.flatMap(Size.init(parsing:)), frameRate: fps.flatMap(FrameRate.init(parsing:)))
            let capturer: any VideoCapturer
            var adjustments: () -> [FormatAdjustment]
            let deviceName: String
            let selection = try DeviceSelection.resolve(device)
            switch selection {
            case .camera(let camera):
                let source = CameraSource(device: camera, request: request, bufferCount: buffers)
                (capturer, adjustments, deviceName) = (source, { source.negotiation?.adjustments ?? [] }, camera.path)
            case .testPattern(let pattern):
                let source = TestPatternSource(pattern: pattern, request: request)
                (capturer, adjustments, deviceName) = (source, { source.negotiation?.adjustments ?? [] }, "testpattern")
            case .screen(let screen):
                let source = ScreenSource(screen: screen, frameRate: request.frameRate ?? ScreenSource.defaultFrameRate,
                                          region: region.flatMap(Rect.init(parsingRegion:)), showsCursor: cursor)
                (capturer, adjustments, deviceName) = (source, { [] }, screen.uniqueID)
            }
            defer { capturer.release() }
            try capturer.initialize()
            var settings = capturer.captureSettings!
            // Screens give their framebuffer format (XRGB8888…): converted to the --format asked
            // for, or to I420 for a .y4m file, at one size even across mode changes.
            var conversion: OutputFormat?
            if case .screen = selection {
                let size = request.size ?? settings.format.size
                if let pixelFormat = request.pixelFormat {
                    conversion = OutputFormat(pixelFormat, size: size)
                } else if output.hasSuffix(".y4m") {
                    conversion = OutputFormat(.yu12, size: size)
                }
                if let conversion {
                    settings.format = VideoFormat(pixelFormat: conversion.pixelFormat, width: size.width, height: size.height)
                }
            }
            let writer = try FrameFileWriter(path: output, format: settings.format, frameRate: settings.frameRate)
            // Frames are written from the bounded `frames` sequence, off the capture thread, so a
            // slow disk shows up as counted queue drops instead of starving the driver of buffers.
            let frames = try conversion.map { try capturer.frames(bufferSize: queue, output: $0) } ?? capturer.frames(bufferSize: queue)
            let sink = FileSink(writer: writer, limit: self.frames)
            try capturer.start()
            sink.drain(frames)
            let expected = Double(self.frames) / (settings.frameRate?.framesPerSecond.doubleValue ?? 30)
            let limit = timeout ?? (10 + 2 * expected)
            let finished = sink.done.wait(timeout: .now() + limit) == .success
            capturer.stop()
            sink.finished.wait()
            try writer.close()
            if let failure = sink.failure { throw failure }
            guard finished, writer.framesWritten == self.frames else {
                throw MediaDevicesError(.timeout, device: deviceName, operation: "capture",
                                        detail: "Only \(writer.framesWritten) of \(self.frames) frames arrived in \(limit) s; check the device, or raise --timeout")
            }
            report(device: deviceName, settings: settings, adjustments: adjustments(), writer: writer,
                   statistics: capturer.statistics)
        }
    }

    private func report(device: String, settings: CaptureSettings, adjustments: [FormatAdjustment],
                        writer: FrameFileWriter, statistics: CaptureStatistics) {
        if json {
            struct Output: Encodable {
                let device: String
                let format: VideoFormatJSON
                let frameRate: FractionJSON?
                let adjustments: [AdjustmentJSON]
                let output: String
                let container: String
                let framesWritten: Int
                let statistics: CaptureStatistics
            }
            printJSON(Output(device: device, format: VideoFormatJSON(settings.format),
                             frameRate: settings.frameRate.map { FractionJSON($0.framesPerSecond) },
                             adjustments: adjustments.map(AdjustmentJSON.init), output: writer.path,
                             container: writer.container.rawValue, framesWritten: writer.framesWritten, statistics: statistics))
            return
        }
        for adjustment in adjustments { print("adjusted \(adjustment)") }
        print("wrote \(writer.framesWritten) frames of \(settings.format) @ \(settings.frameRate?.description ?? "unknown rate") to \(writer.path) (\(writer.container.rawValue))")
        print(String(format: "delivered %d, dropped %d (driver) + %d (queue), measured %.2f fps, capture delay mean %.0f µs, max %.0f µs",
                     statistics.deliveredFrames, statistics.droppedFrames, statistics.queueDroppedFrames,
                     statistics.measuredFrameRate, statistics.meanCaptureDelayMicroseconds, statistics.maxCaptureDelayMicroseconds))
        if writer.container == .raw, let name = ffmpegName(settings.format.pixelFormat) {
            print("play: ffplay -f rawvideo -pixel_format \(name) -video_size \(settings.format.width)x\(settings.format.height) \(writer.path)")
        }
    }

    /// FFmpeg's name for the raw formats it can play back.
    private func ffmpegName(_ format: PixelFormat) -> String? {
        let names: [PixelFormat: String] = [
            .yuyv: "yuyv422", .uyvy: "uyvy422", .yvyu: "yvyu422", .nv12: "nv12", .nv21: "nv21", .nv16: "nv16",
            .nv12m: "nv12", .grey: "gray", .rgb24: "rgb24", .bgr24: "bgr24", .xbgr32: "bgr0", .abgr32: "bgra",
            .xrgb32: "0rgb", .argb32: "argb", .rgb565: "rgb565le",
        ]
        return names[format]
    }
}

/// Writes the first `limit` frames of a `frames` sequence to a file, on a task of its own.
/// Signals `done` when it has them all or capture ended, and `finished` when the task is over.
final class FileSink: @unchecked Sendable {
    let writer: FrameFileWriter
    let limit: Int
    let done = DispatchSemaphore(value: 0)
    let finished = DispatchSemaphore(value: 0)
    private(set) var failure: MediaDevicesError?

    init(writer: FrameFileWriter, limit: Int) {
        self.writer = writer
        self.limit = limit
    }

    /// Starts writing from `frames`.
    func drain(_ frames: VideoFrames) {
        Task.detached { [self] in
            do {
                for try await buffer in frames where writer.framesWritten < limit {
                    try buffer.withFrame { try writer.write($0) }
                    if writer.framesWritten == limit { done.signal() }
                }
            } catch {
                failure = error as? MediaDevicesError
                    ?? MediaDevicesError(.io, device: nil, operation: "capture", detail: "\(error)")
            }
            if writer.framesWritten < limit { done.signal() }
            finished.signal()
        }
    }
}
