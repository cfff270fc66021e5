import Foundation
import Hummingbird
import MediaDevices
import Synchronization

/// One capture and its viewers. The source's capture thread makes each frame one
/// `multipart/x-mixed-replace` part — the camera's own JPEG when it gives MJPEG, else the
/// library's `JPEGEncoder` — and hands that one buffer to every viewer's bounded queue. The
/// encoding never runs on Swift's cooperative pool (which serves HTTP: four 4K captures encoded
/// there kept `/api/status` waiting 2–20 s), and the capture thread never waits for a viewer: one
/// that is behind loses its oldest part, and after `stallLimit` in a row it is dropped.
final class SharedCapture: VideoFrameConsumer, Sendable {
    /// Parts a viewer may have waiting; the oldest goes when a newer one arrives.
    static let viewerQueue = 2
    /// Frames in a row a viewer may miss before it counts as stalled and is dropped.
    static let stallLimit = 60
    /// The JPEG quality of encoded frames (1–100).
    static let quality = 80

    private struct Viewer { let continuation: AsyncStream<ByteBuffer>.Continuation; var missed = 0 }
    /// The viewers, and whether the capture has ended (then a viewer joining gets no part).
    private struct Viewers {
        var all: [UInt64: Viewer] = [:]
        var ended = false
    }
    private let viewers = Mutex(Viewers())
    private let source: VideoSource
    /// The camera, as errors name it.
    private let name: String
    /// Compresses raw frames; `nil` when the camera gives JPEGs. `nonisolated(unsafe)`: an encoder
    /// is for one thread at a time, and only `consumeFrame` uses it, which the source calls from
    /// its capture thread one frame at a time.
    nonisolated(unsafe) private let encoder: JPEGEncoder?

    /// Initializes `source`, makes this capture its consumer and starts it (released again if
    /// that fails).
    init(source: VideoSource, name: String) throws(MediaDevicesError) {
        self.source = source
        self.name = name
        try source.initialize()
        let negotiated = source.captureSettings?.format.pixelFormat
        do {
            encoder = negotiated == .mjpeg || negotiated == .jpeg ? nil : try JPEGEncoder(quality: Self.quality, device: name)
        } catch {
            source.release()
            throw error
        }
        source.consumer = self
        do {
            try source.start()
        } catch {
            source.consumer = nil
            source.release()
            throw error
        }
    }

    /// Whether frames still flow to viewers (a camera unplugged, or a frame that could not be
    /// encoded, ends the capture).
    var isRunning: Bool { source.isCapturing && !viewers.withLock { $0.ended } }

    /// The source's statistics for this run.
    var statistics: CaptureStatistics { source.statistics }

    /// How many viewers it has.
    var viewerCount: Int { viewers.withLock { $0.all.count } }

    /// Adds a viewer; false when the capture has already ended (then no part will come).
    func add(_ id: UInt64, _ continuation: AsyncStream<ByteBuffer>.Continuation) -> Bool {
        viewers.withLock { viewers in
            if !viewers.ended { viewers.all[id] = Viewer(continuation: continuation) }
            return !viewers.ended
        }
    }

    /// Removes a viewer (nothing when it is already gone).
    func remove(_ id: UInt64) { _ = viewers.withLock { $0.all.removeValue(forKey: id) } }

    /// Stops the source and releases it on a thread of its own, and returns when that is done:
    /// stopping joins the capture thread, which may be in the middle of encoding a 4K frame, and
    /// that wait is not for the cooperative pool.
    func stop() async {
        let source = self.source
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            Thread.detachNewThread {
                source.stop()
                source.release()
                source.consumer = nil   // it held this capture
                done.resume()
            }
        }
    }

    /// On the capture thread: the frame as one part, for every viewer. Nothing is encoded while
    /// no one watches.
    func consumeFrame(_ frame: VideoFrame) {
        guard viewers.withLock({ !$0.all.isEmpty }) else { return }
        let part: ByteBuffer
        do {
            if let encoder {
                part = try encoder.encode(frame, Self.part(jpeg:))
            } else {
                let bytes = frame.plane(0).bytes
                let used = frame.bytesUsed > 0 ? min(frame.bytesUsed, bytes.count) : bytes.count
                part = Self.part(jpeg: UnsafeRawBufferPointer(start: bytes.baseAddress, count: used))
            }
        } catch {
            say("\(name): \(error)")
            end()
            return
        }
        broadcast(part)
    }

    /// The capture ended (stopped, or the camera went): every viewer's stream ends.
    func captureDidStop(error: MediaDevicesError?) {
        if let error { say("\(name): \(error)") }
        end()
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

    /// Gives `part` to every viewer's queue (a yield never waits: a full queue drops its oldest);
    /// a viewer that missed `stallLimit` parts in a row is dropped, its stream finished outside
    /// the lock (finishing runs its termination handler). Index loops: nothing allocated per frame.
    private func broadcast(_ part: ByteBuffer) {
        var stalled: [(id: UInt64, continuation: AsyncStream<ByteBuffer>.Continuation)] = []
        viewers.withLock { viewers in
            var index = viewers.all.startIndex
            while index != viewers.all.endIndex {
                let (id, viewer) = viewers.all[index]
                var missed = 0
                if case .dropped = viewer.continuation.yield(part) { missed = viewer.missed + 1 }
                viewers.all.values[index].missed = missed
                if missed >= Self.stallLimit { stalled.append((id, viewer.continuation)) }
                viewers.all.formIndex(after: &index)
            }
            var gone = 0
            while gone < stalled.count {
                viewers.all[stalled[gone].id] = nil
                gone += 1
            }
        }
        var index = 0
        while index < stalled.count {
            say("dropped a stalled viewer")
            stalled[index].continuation.finish()
            index += 1
        }
    }

    /// Ends every viewer's stream; a viewer joining after gets none.
    private func end() {
        let last = viewers.withLock { viewers in
            viewers.ended = true
            defer { viewers.all.removeAll() }
            return viewers.all.values.map(\.continuation)
        }
        for continuation in last { continuation.finish() }
    }
}
