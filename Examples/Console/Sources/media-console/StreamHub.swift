#if canImport(Glibc)
import Glibc
#endif
import Hummingbird
import MediaDevices
import Synchronization

/// What a viewer asks to see: one camera in one format, parsed (so `fps=120`, `120/1`, `240/2`
/// and `120.0` are one key). Viewers asking the same share a capture.
struct StreamKey: Hashable, Sendable, CustomStringConvertible {
    let camera: String
    let pixelFormat: PixelFormat?
    let width: Int?
    let height: Int?
    let frameRate: FrameRate?

    var description: String {
        "\(camera) \(pixelFormat.map { "\($0)" } ?? "any") \(width.map(String.init) ?? "?")x\(height.map(String.init) ?? "?") @ \(frameRate.map { "\($0.framesPerSecond)" } ?? "any") fps"
    }
}

/// The captures being streamed: one per `StreamKey`, started by its first viewer and stopped
/// when its last viewer leaves.
actor StreamHub {
    private var captures: [StreamKey: SharedCapture] = [:]
    private var nextViewer: UInt64 = 0
    /// The most captures running at once; a viewer asking for one more gets 503.
    let maxCaptures: Int

    init(maxCaptures: Int) { self.maxCaptures = maxCaptures }

    /// The captures running now and their viewers (`GET /api/status`).
    func running() -> [(key: StreamKey, viewers: Int)] {
        captures.filter { $0.value.isRunning }.map { ($0.key, $0.value.viewerCount) }.sorted { $0.key.description < $1.key.description }
    }

    /// Joins the capture for `key`, starting it through `makeSource` if none runs; returns the
    /// viewer's JPEG parts (bounded: the oldest is dropped when the viewer falls behind).
    func join(_ key: StreamKey, makeSource: () throws -> (source: any VideoCapturer, name: String)) throws -> AsyncStream<ByteBuffer> {
        let capture: SharedCapture
        if let running = captures[key], running.isRunning {
            capture = running
        } else {
            captures[key]?.stop()   // one that ended by itself (a camera unplugged): release it
            captures[key] = nil
            guard captures.values.filter(\.isRunning).count < maxCaptures else {
                throw HTTPError(.serviceUnavailable, message: "media-console: \(maxCaptures) captures run already (--max-captures); watch one of them or try again later")
            }
            let (source, name) = try makeSource()
            capture = try SharedCapture(source: source, name: name)
            captures[key] = capture
            say("started \(key)")
        }
        nextViewer += 1
        let viewer = nextViewer
        let (stream, continuation) = AsyncStream<ByteBuffer>.makeStream(bufferingPolicy: .bufferingNewest(SharedCapture.viewerQueue))
        continuation.onTermination = { [weak self] _ in
            Task { await self?.leave(key, viewer: viewer, capture: capture) }
        }
        if !capture.add(viewer, continuation) { continuation.finish() }
        return stream
    }

    /// The statistics of a running capture of `camera` (any format) and its viewer count; nil
    /// when the console streams nothing from it.
    func statistics(camera: String) -> (CaptureStatistics, Int)? {
        for (key, capture) in captures where key.camera == camera && capture.isRunning {
            return (capture.statistics, capture.viewerCount)
        }
        return nil
    }

    /// Removes a viewer; stops and releases the capture when it was the last.
    private func leave(_ key: StreamKey, viewer: UInt64, capture: SharedCapture) {
        capture.remove(viewer)
        guard capture.viewerCount == 0, captures[key] === capture else { return }
        captures[key] = nil
        capture.stop()
        say("stopped \(key) (no viewers)")
        // Give glibc's free arena memory back to the system once the reader has ended. The
        // frame buffers go back without it; this returns the few MB glibc keeps (six 4K
        // captures at six rates, release: RSS 39 -> 233 -> 41 MB with it, 39 -> 318 -> 44 without).
        Task {
            try? await Task.sleep(for: .seconds(1))
            #if canImport(Glibc)
            // glibc's malloc_trim, which its Swift module does not export.
            if let symbol = dlsym(nil, "malloc_trim") {
                _ = unsafeBitCast(symbol, to: (@convention(c) (Int) -> Int32).self)(0)
            }
            #endif
        }
    }
}

/// One capture and its viewers: a task reads the source's frames, makes each one multipart
/// part (the camera's own JPEG when it gives MJPEG, else the library's I420 compressed by
/// libjpeg-turbo) and hands that one buffer to every viewer's bounded queue.
final class SharedCapture: Sendable {
    /// Parts a viewer may have waiting; the oldest goes when a newer one arrives.
    static let viewerQueue = 2
    /// Frames in a row a viewer may miss before it counts as stalled and is dropped.
    static let stallLimit = 60

    private struct Viewer { let continuation: AsyncStream<ByteBuffer>.Continuation; var missed = 0 }
    private let viewers = Mutex<[UInt64: Viewer]>([:])
    /// Set once the reader has finished every viewer: a viewer joining after it gets none.
    private let ended = Mutex(false)
    private let source: any VideoCapturer

    /// Initializes and starts `source` (released again if that fails), and its reader.
    init(source: any VideoCapturer, name: String) throws {
        self.source = source
        try source.initialize()
        let negotiated = source.captureSettings?.format.pixelFormat
        let passthrough = negotiated == .mjpeg || negotiated == .jpeg
        let frames: VideoFrames
        do {
            frames = passthrough ? source.frames(bufferSize: 2) : try source.frames(bufferSize: 2, output: OutputFormat(.yu12))
            try source.start()
        } catch {
            source.release()
            throw error
        }
        Task { [self] in
            var encoder: JPEGEncoder?
            do {
                for try await frame in frames {
                    let part: ByteBuffer
                    if passthrough {
                        part = frame.withUnsafeBytes { SharedCapture.part(jpeg: UnsafeRawBufferPointer(rebasing: $0.prefix(frame.bytesUsed > 0 ? frame.bytesUsed : $0.count))) }
                    } else {
                        if encoder == nil { encoder = try JPEGEncoder(device: name) }
                        part = try frame.withFrame { image in try encoder!.encode(image, SharedCapture.part(jpeg:)) }
                    }
                    frame.release()
                    broadcast(part)
                }
            } catch {
                say("\(name): \(error)")
            }
            let last = ended.withLock { ended in
                ended = true
                return viewers.withLock { all in defer { all.removeAll() }; return all.values.map(\.continuation) }
            }
            for continuation in last { continuation.finish() }
        }
    }

    /// Whether frames still flow (a camera unplugged ends its capture).
    var isRunning: Bool { source.isCapturing }

    /// The source's statistics for this run.
    var statistics: CaptureStatistics { source.statistics }

    /// How many viewers it has.
    var viewerCount: Int { viewers.withLock { $0.count } }

    /// Adds a viewer; false when the capture has already ended (then no part will come).
    func add(_ id: UInt64, _ continuation: AsyncStream<ByteBuffer>.Continuation) -> Bool {
        ended.withLock { ended in
            if !ended { viewers.withLock { $0[id] = Viewer(continuation: continuation) } }
            return !ended
        }
    }

    /// Removes a viewer (nothing when it is already gone).
    func remove(_ id: UInt64) { _ = viewers.withLock { $0.removeValue(forKey: id) } }

    /// Stops the source (the reader ends with its sequence) and releases it.
    func stop() {
        source.stop()
        source.release()
    }

    /// One `multipart/x-mixed-replace` part holding `jpeg`.
    static func part(jpeg: UnsafeRawBufferPointer) -> ByteBuffer {
        let header = "--\(MJPEGStream.boundary)\r\nContent-Type: image/jpeg\r\nContent-Length: \(jpeg.count)\r\n\r\n"
        var buffer = ByteBufferAllocator().buffer(capacity: header.utf8.count + jpeg.count + 2)
        buffer.writeString(header)
        buffer.writeBytes(jpeg)
        buffer.writeString("\r\n")
        return buffer
    }

    /// Gives `part` to every viewer (outside the lock: finishing a stream runs its termination
    /// handler); a viewer that missed `stallLimit` frames in a row is dropped.
    private func broadcast(_ part: ByteBuffer) {
        let targets = viewers.withLock { all in all.map { ($0.key, $0.value.continuation) } }
        var stalled: [AsyncStream<ByteBuffer>.Continuation] = []
        for (id, continuation) in targets {
            let missed: Bool
            switch continuation.yield(part) {
            case .dropped: missed = true
            default: missed = false
            }
            let drop = viewers.withLock { all -> Bool in
                guard var viewer = all[id] else { return false }
                viewer.missed = missed ? viewer.missed + 1 : 0
                if viewer.missed >= SharedCapture.stallLimit { all[id] = nil; return true }
                all[id] = viewer
                return false
            }
            if drop { stalled.append(continuation) }
        }
        for continuation in stalled {
            say("dropped a stalled viewer")
            continuation.finish()
        }
    }
}
