import ArgumentParser
import Dispatch
import Foundation
import MediaDevices
import MediaDevicesCommandLine

/// `capture --audio DEVICE`: the microphone captured beside the camera into one file.
struct CaptureAudioOptions: ParsableArguments {
    @Option(help: "With a .mkv or .nut --output: also capture this audio input (an index from `list`, a uniqueID, an ALSA PCM name such as hw:Loopback,1,0, or pulse:NAME) into the same file, as 32-bit float PCM, both streams timestamped by the capture on the monotonic clock.")
    var audio: String?

    @Option(name: .customLong("audio-rate"), help: "With --audio: sample rate in Hz (the nearest the device takes is used).")
    var audioRate: Int = 48000

    @Option(name: .customLong("audio-channels"), help: "With --audio: channels.")
    var audioChannels: Int = 2

    func validate() throws {
        if audioRate <= 0 || audioChannels <= 0 { throw ValidationError("--audio-rate and --audio-channels must be positive") }
    }
}

extension CaptureCommand {
    /// `--output FILE.mkv` or `.nut`: the camera's frames as they come (raw or MJPEG) and, with
    /// `--audio`, the microphone's samples, muxed by libavformat with the capture's timestamps
    /// (both less one start instant), until `--frames` frames are written. Reports the A/V
    /// offset at the start and the audio clock's drift.
    func captureAudioAndVideo(container: AVFileMuxer.Container) throws {
        let opened = try OpenedCapturer(device, request: formatOptions.request, buffers: buffers,
                                        screenRegion: region.flatMap(Rect.init(parsing:)), showsCursor: cursor,
                                        backend: backendOption.backend, portal: backendOption.portalOptions)
        let (capturer, deviceName) = (opened.capturer, opened.name)
        defer { capturer.release() }
        try capturer.initialize()
        try controlOptions.apply(to: opened)
        let settings = capturer.captureSettings!
        var driver: AudioDriver?
        var input: AudioDevice?
        if let name = audioOptions.audio {
            let device = try AudioDeviceArgument.resolve(name, direction: .input)
            let made = AudioDriver()
            // 10 ms periods, 16 of them: a file wants no overrun more than low latency (the
            // timestamps come from the device, whatever the buffer).
            try made.initializeCapture(device: device, format: AudioFormat(sampleRate: audioOptions.audioRate, channels: audioOptions.audioChannels,
                                                                           sampleFormat: .floatLE),
                                       options: AudioStreamOptions(periodFrames: max(64, audioOptions.audioRate / 100), periods: 16))
            (driver, input) = (made, device)
        }
        defer { driver?.capture.terminate() }
        // Chunks carry floats: the file stores them as f32le at the rate and channels the device took.
        let audioFormat = driver?.captureFormat.map { AudioFormat(sampleRate: $0.sampleRate, channels: $0.channels, sampleFormat: .floatLE) }
        let muxer = try AVFileMuxer(path: output, container: container, video: settings.format, frameRate: settings.frameRate,
                                    audio: audioFormat, start: .now)
        let sink = FileSink(writer: muxer, limit: frames)
        let interruption = Interruption { sink.done.signal() }
        defer { interruption.finish() }
        // Audio first, so that the first frame has samples beside it; chunks of 10 ms, written
        // from a task of their own as they come.
        let audioDone = DispatchSemaphore(value: 0)
        let audioFailure = FailureBox()
        if let driver {
            let chunks = driver.capturedChunks()
            try driver.startCapture()
            Task.detached {
                do {
                    for try await chunk in chunks { try muxer.write(chunk) }
                } catch {
                    audioFailure.set(error as? MediaDevicesError ?? MediaDevicesError(.io, device: nil, operation: "capture --audio", detail: "\(error)"))
                    sink.done.signal()
                }
                audioDone.signal()
            }
        } else {
            audioDone.signal()
        }
        let sequence = capturer.frameSequence(bufferSize: queue)
        try capturer.start()
        sink.drain(sequence, executor: offThread ? nil : opened.captureExecutor)
        let expected = Double(frames) / (settings.frameRate?.framesPerSecond.doubleValue ?? 30)
        let limit = timeout ?? (10 + 2 * expected)
        let finished = sink.done.wait(timeout: .now() + limit) == .success
        capturer.stop()
        sink.finished.wait()
        driver?.stopCapture()  // the chunk sequence ends after what was captured
        audioDone.wait()
        try muxer.close()
        if let failure = sink.failure ?? audioFailure.value { throw failure }
        if let failure = driver?.capture.endError { throw failure }
        let figures = muxer.syncFigures
        let report = AVCaptureReport(device: deviceName, audioDevice: input?.uniqueID, format: VideoFormatJSON(settings.format),
                                     frameRate: settings.frameRate.map { FractionJSON($0.framesPerSecond) },
                                     audioFormat: audioFormat.map { "\($0)" }, output: output, container: container.rawValue,
                                     sync: figures, audioOverruns: driver?.capture.statistics.xruns, statistics: capturer.statistics)
        if interruption.interruptingSignal != nil {
            report.print(json: json)
            try interruption.exitIfInterrupted("capture: stopped after \(figures.videoFrames) of \(frames) frames, all in \(output)")
        }
        guard finished, figures.videoFrames == frames else {
            throw MediaDevicesError(.timeout, device: deviceName, operation: "capture",
                                    detail: "Only \(figures.videoFrames) of \(frames) frames arrived in \(limit) s; check the device, or raise --timeout")
        }
        report.print(json: json)
    }
}

/// The first failure of the audio task, read by the main thread after it ended.
private final class FailureBox: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: MediaDevicesError?
    var value: MediaDevicesError? { lock.withLock { stored } }
    func set(_ error: MediaDevicesError) { lock.withLock { if stored == nil { stored = error } } }
}

/// What `capture` prints after an audio-and-video file: the streams and the sync figures.
private struct AVCaptureReport: Encodable {
    let device: String
    let audioDevice: String?
    let format: VideoFormatJSON
    let frameRate: FractionJSON?
    let audioFormat: String?
    let output: String
    let container: String
    let sync: AVSyncFigures
    /// The microphone's overruns (samples lost before they were read: a gap in the audio, which
    /// the drift then counts).
    let audioOverruns: Int?
    let statistics: CaptureStatistics

    func print(json: Bool) {
        if json { printJSON(self); return }
        Swift.print("wrote \(sync.videoFrames) frames of \(format.name) \(format.width)x\(format.height)\(audioFormat.map { " and \(sync.audioFrames) audio frames of \($0)" } ?? "") to \(output) (\(container))")
        Swift.print(String(format: "delivered %d, dropped %d (driver) + %d (queue) + %d (corrupt), measured %.2f fps",
                           statistics.deliveredFrames, statistics.droppedFrames, statistics.queueDroppedFrames, statistics.corruptFrames,
                           statistics.measuredFrameRate))
        guard audioDevice != nil else { return }
        let offset = sync.startOffsetMilliseconds.map { String(format: "%+.2f ms (first video frame − first audio sample)", $0) } ?? "unknown (a stream had nothing)"
        let drift = sync.driftMillisecondsPerMinute.map { String(format: "%+.2f ms/min (audio samples against the monotonic clock)", $0) } ?? "unknown (under a second of audio)"
        Swift.print("A/V offset at start \(offset); drift \(drift); audio overruns \(audioOverruns ?? 0)")
        if sync.adjustedTimestamps > 0 { Swift.print("timestamps moved forward to keep a stream increasing: \(sync.adjustedTimestamps)") }
    }
}
