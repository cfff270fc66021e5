import Dispatch
import Foundation
import MediaDevices
import MediaDevicesCommandLine
import Synchronization

/// Streams frames from a camera to nothing: the library's own cost per frame, for the capture
/// CPU benchmark to set beside `mediadevices capture` (which also copies every frame into the
/// writes every frame out). `callback`: a consumer sees each frame on the capture thread;
/// `sequence`: a task reads leased frames from `frames(bufferSize:)` on Swift's global executor;
/// `executor`: the same task with the source's `captureExecutor` as its preference, so it runs
/// on the capture thread; `converted`: a `frames(bufferSize:output:)` sequence converting on the
/// capture thread (for an MJPEG stream, the library's decoded frames), read there too (on the
/// `captureExecutor`, as the step-by-step capture of the DocC article CamerasAndFormats reads); `callback-converted`: a
/// `ConvertingConsumer` converting to the same output in the callback, the reference the
/// converted sequence is compared with. The camera is a V4L2 node, or a PipeWire camera node
/// named `pipewire:SERIAL` (the callback, sequence and converted paths); or a screen
/// (`screen:N`, grabbed at every deadline whether it changed or not, at `fps`; its size is its own).
struct StreamOnly {
    enum Path: String, CaseIterable {
        case callback, sequence, executor, converted
        case callbackConverted = "callback-converted"

        /// Whether the frames reach the benchmark through a consumer callback (else a sequence).
        var isCallback: Bool { self == .callback || self == .callbackConverted }
    }

    var device: String
    var width: Int
    var height: Int
    var fps: Int
    var frames: Int
    var path: Path
    /// What the camera streams.
    var pixelFormat: PixelFormat = .yuyv
    /// What the `converted` path converts to.
    var output: PixelFormat = .nv12
    /// The size the converting paths scale to (`nil`: the stream's).
    var outputSize: Size?
    /// Decode each MJPEG frame whole, then scale (`OutputFormat.jpegScaledDecoding` off).
    var wholeDecode = false

    /// Seconds a benchmark run of `frames` frames at `fps` may take before it counts as failed:
    /// long enough for a stream whose processing is slower than the camera (1080p MJPEG decoded
    /// under emulation keeps up with about a third of its 30 fps), since the figure is CPU per
    /// frame, not frame rate.
    static func timeLimit(frames: Int, fps: Int) -> Double {
        30 + 4 * Double(frames) / Double(fps)
    }

    func run() throws {
        // A `pipewire:` name streams through the camera's PipeWire node, anything else directly
        // over V4L2 (never the automatic rule's fallback to PipeWire: a row measures one route).
        let isScreen = device.hasPrefix("screen")
        let backend: DeviceBackendName? = device.hasPrefix("pipewire:") ? .pipewire : isScreen ? nil : .v4l2
        let opened = try OpenedCapturer(device, request: FormatRequest(pixelFormat: pixelFormat, size: Size(width: width, height: height),
                                                                       frameRate: FrameRate(fps)), backend: backend)
        guard opened.camera != nil || isScreen else { throw BenchmarkError("stream needs a camera (a /dev/video node or pipewire:SERIAL) or a screen (screen:N)") }
        let source = opened.capturer
        defer { source.release() }
        try source.initialize()
        // The main thread sleeps until the last frame arrives (no polling: its wake-ups would be
        // counted as the library's CPU).
        let counter = CountingConsumer(target: frames)
        let reader = SequenceRecorder(capacity: frames)
        let sequence: VideoFrames?
        let request = OutputFormat(output, size: outputSize, jpegScaledDecoding: !wholeDecode)
        switch path {
        case .callback: source.consumer = counter; sequence = nil
        case .callbackConverted: source.consumer = try ConvertingConsumer(output: request, consumer: counter); sequence = nil
        case .sequence, .executor: sequence = source.frameSequence(bufferSize: 16)
        case .converted: sequence = try source.frameSequence(bufferSize: 16, output: request)
        }
        try source.start()
        if let sequence { reader.drain(sequence, executor: path == .sequence ? nil : opened.captureExecutor, timing: false) }
        let limit = DispatchTime.now() + Self.timeLimit(frames: frames, fps: fps)
        _ = path.isCallback ? counter.done.wait(timeout: limit) : reader.full.wait(timeout: limit)
        func received() -> Int { path.isCallback ? counter.count : reader.count }
        source.stop()
        if !path.isCallback { reader.finished.wait() }
        guard received() >= frames else {
            throw BenchmarkError("only \(received()) of \(frames) frames arrived from \(opened.name)")
        }
        // For the benchmark's tools.log: whether the readers' frames were leased or copied. The
        // sequence counts leases and the copies made when a lease was refused; a frame its source
        // could not lend at all (a screen, a PipeWire buffer with no mapping of the library's
        // own) is copied without being counted there, so the rest of what was read is that.
        let statistics = source.statistics
        print("\(path.rawValue): \(received()) frames read" + (sequence.map {
            ", \($0.leasedFrames) on lease, \($0.copiedFrames) copied (lease refused), "
                + "\(max(0, received() - $0.leasedFrames - $0.copiedFrames)) copied (not lendable)"
        } ?? "")
              + ", \(statistics.scaledDecodeFrames) decoded scaled (last at \(statistics.lastDecodeScale?.description ?? "1"))")
    }
}

/// Counts frames, nothing else; signals `done` at the `target`-th.
// @unchecked Sendable: its state is an atomic and a semaphore, both thread-safe.
final class CountingConsumer: VideoFrameConsumer, @unchecked Sendable {
    private let received = Atomic<Int>(0)
    private let target: Int
    let done = DispatchSemaphore(value: 0)
    init(target: Int) { self.target = target }
    var count: Int { received.load(ordering: .relaxed) }
    func consumeFrame(_ frame: VideoFrame) {
        if received.add(1, ordering: .relaxed).newValue == target { done.signal() }
    }
}
