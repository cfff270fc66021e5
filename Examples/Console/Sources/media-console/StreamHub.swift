#if canImport(Glibc)
import Glibc
#endif
import Hummingbird
import MediaDevices

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
    /// The last stop under way for each camera (each waits for the one before it): the camera is
    /// busy until it is done.
    private var stops: [String: Task<Void, Never>] = [:]
    private var nextViewer: UInt64 = 0
    /// The most captures running at once; a viewer asking for one more gets 503.
    let maxCaptures: Int

    init(maxCaptures: Int) { self.maxCaptures = maxCaptures }

    /// The captures running now and their viewers (`GET /api/status`).
    func running() -> [(key: StreamKey, viewers: Int)] {
        captures.filter { $0.value.isRunning }.map { ($0.key, $0.value.viewerCount) }.sorted { $0.key.description < $1.key.description }
    }

    /// Joins the capture for `key`, starting it through `makeSource` if none runs (once any
    /// capture of that camera being stopped has let go of it); returns the viewer's JPEG parts
    /// (bounded: the oldest is dropped when the viewer falls behind).
    func join(_ key: StreamKey, makeSource: () throws -> (source: VideoSource, name: String)) async throws -> AsyncStream<ByteBuffer> {
        var joined: SharedCapture?
        while true {
            if let existing = captures[key] {
                if existing.isRunning { joined = existing; break }
                captures[key] = nil
                release(existing, camera: key.camera)   // one that ended by itself (a camera unplugged)
            }
            guard let stopping = stops[key.camera] else { break }
            await stopping.value   // the device is busy until then; another viewer may start it meanwhile
            if stops[key.camera] == stopping { stops[key.camera] = nil }
        }
        let capture: SharedCapture
        if let joined {
            capture = joined
        } else {
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
        release(capture, camera: key.camera)
        say("stopped \(key) (no viewers)")
    }

    /// Stops and releases `capture` off the cooperative pool, after any stop of the same camera
    /// before it (`join` waits for the last before it opens the camera again).
    private func release(_ capture: SharedCapture, camera: String) {
        let previous = stops[camera]
        let stop = Task {
            await previous?.value
            await capture.stop()
        }
        stops[camera] = stop
        // Give glibc's free arena memory back to the system once the capture has ended. The
        // frame buffers go back without it; this returns the few MB glibc keeps (six 4K
        // captures at six rates, release: RSS 39 -> 233 -> 41 MB with it, 39 -> 318 -> 44 without).
        Task {
            await stop.value
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
