#if PipeWire
import MediaDevicesCore
import CPipeWire
import Glibc

/// One PipeWire camera run's capture loop, a step at a time, as `CameraPump` is a V4L2
/// camera's: sleep in the stream's data loop (`PipeWireCapture.wait`: its graph cycles run
/// here, so one thread wakes per frame, in one system call), which also wakes for the stream's
/// main loop (state changes, renegotiation, the node going away) and the run's wake-up event (a
/// stop, a give-back, or a job of the ``CaptureExecutor``); deliver the newest buffer, lendable to
/// sequences (`leases`) when it is in a mapping of our own (memfd, DMA-BUF, and plain memory in
/// PipeWire's shared pool, mapped a second time: `cpw_mapping_alias`), and give back the
/// buffers whose leases ended. The capture thread steps it in a loop, running the executor's
/// jobs between steps; a reader on that executor whose sequence is empty steps it too, instead
/// of suspending (`CaptureExecutor.stepForReader`): a sequence read there costs what a consumer
/// callback does. Allocates nothing per frame (the frame's format is made again only when the
/// stride or size changes; no generic collection calls such as `first`, which allocate in debug
/// builds).
// @unchecked Sendable: made on the capture thread and used by that thread alone.
final class PipeWireCameraPump: CaptureExecutor.Loop, @unchecked Sendable {
    private let capture: PipeWireCapture
    private let negotiated: VideoFormat
    private let lending: PipeWireLending
    private let wake: WakeUpEvent
    private let shouldStop: () -> Bool
    private let delivery: FrameDelivery
    private let label: String
    private var format: VideoFormat
    private var locations: [(buffer: Int, offset: Int)]
    private var sequence: UInt32 = 0
    private var formatID = LendableBuffer.newFormatID()
    /// The failure that ended the loop; `nil` while it runs, and when it was asked to stop.
    private(set) var failure: MediaDevicesError?

    init(capture: PipeWireCapture, format: VideoFormat, leases: PipeWireBufferLeases, wake: WakeUpEvent,
         shouldStop: @escaping () -> Bool, delivery: FrameDelivery, label: String) {
        self.capture = capture
        negotiated = format
        self.format = format
        locations = format.planeLocations
        lending = PipeWireLending(capture: capture, leases: leases)
        self.wake = wake
        self.shouldStop = shouldStop
        self.delivery = delivery
        self.label = label
    }

    /// Steps until asked to stop (returns `nil`) or until the stream fails (returns the error),
    /// running the executor's jobs after each step; `attached` is called once they come to this
    /// thread. Closes the stream before the leases learn the run is over (the stream lets every
    /// lent buffer go first, leaving its mapping to them).
    func run(attached: () -> Void) -> MediaDevicesError? {
        defer { lending.close() }
        capture.watch(wake.descriptor)
        delivery.executor.drive(self, wake: wake, attached: attached)
        return failure
    }

    /// Waits for the stream (or a wake-up) and delivers at most one frame. `.leave` once asked
    /// to stop or after a failure (`failure` then says which), and from then on.
    func step() -> CaptureExecutor.Step {
        // Before anything here can give the held buffer back or remove it.
        lending.lendIfStillLeased()
        if failure != nil || shouldStop() { return .leave }
        // Buffers given back since the last step (from this thread, no wake-up was signalled).
        lending.returnGivenBack()
        let ready = capture.wait(timeoutMilliseconds: 1000)
        if ready.contains(.watched) {
            // A stop (seen at the next step), a job of the executor (run by whoever steps next:
            // the capture loop runs it, a reader suspends for it), or a give-back: every
            // give-back signals after setting its mark.
            wake.reset()
            lending.returnGivenBack()
            if shouldStop() { return .leave }
        }
        let (picture, isNew) = ready.contains(.buffer) ? capture.newest() : (cpw_frame(), false)
        do {
            if ready.contains(.loop) {
                try capture.iterate(timeoutMilliseconds: 0)
                if let change = capture.renegotiation() { logRenegotiation(change) }
            }
            try capture.throwIfEnded()
        } catch {
            return leave(error)
        }
        guard isNew, let data = picture.data else {
            if let stalled = delivery.stall(device: label) { return leave(stalled) }
            return .stepped
        }
        deliver(picture, data: data)
        return .stepped
    }

    private func deliver(_ picture: cpw_frame, data: UnsafeRawPointer) {
        let taken = MonotonicInstant.now
        let (timestamp, captureDelay) = Self.captureTime(pts: picture.pts, taken: taken)
        if Int(picture.width) != format.width || Int(picture.height) != format.height
            || (picture.stride > 0 && (format.bytesPerRow.isEmpty || Int(picture.stride) != format.bytesPerRow[0])) {
            format = Self.layout(of: picture, pixelFormat: negotiated.pixelFormat, colorimetry: negotiated.colorimetry)
            locations = format.planeLocations
            formatID = LendableBuffer.newFormatID()
        }
        let size = Int(picture.size)
        let bytes = UnsafeRawBufferPointer(start: data, count: size)
        let planeCount = format.pixelFormat.isCompressed ? 1 : min(format.bytesPerRow.count, 3)
        func plane(_ index: Int) -> FramePlane {
            guard index < planeCount, index < locations.count, locations[index].offset < size else { return .empty }
            let offset = locations[index].offset
            return FramePlane(bytes: UnsafeRawBufferPointer(rebasing: bytes[offset...]), bytesPerRow: format.bytesPerRow[index])
        }
        let orientation = VideoOrientation(rotationDegrees: Int(Self.rotation(picture.transform))) ?? .up
        let (frameFormat, number, planes) = (format, sequence, (plane(0), plane(1), plane(2)))
        lending.deliver(picture, formatID: formatID) { lendable in
            delivery.deliver(VideoFrame(format: frameFormat, timestamp: timestamp, sequence: number, orientation: orientation,
                                        captureDelay: captureDelay, planeCount: planeCount, bytesUsed: size,
                                        plane0: planes.0, plane1: planes.1, plane2: planes.2, dmaBuf: nil, lendable: lendable))
        }
        sequence &+= 1
    }

    /// How far before its arrival a buffer's own time may lie and still be taken as a capture
    /// time on the monotonic clock.
    static let plausibleCaptureAge: UInt64 = 2_000_000_000

    /// A frame's timestamp and capture delay: the buffer's `pts` (SPA's V4L2 source puts the
    /// driver's timestamp there, its libcamera source the sensor's, both on CLOCK_MONOTONIC)
    /// when it reads as an instant of that clock up to `plausibleCaptureAge` before `taken`;
    /// otherwise (no header, a producer counting from zero, another clock) `taken`, the time the
    /// buffer came out of the stream, with no delay.
    static func captureTime(pts: Int64, taken: MonotonicInstant) -> (MonotonicInstant, Duration) {
        guard pts > 0, UInt64(pts) <= taken.nanoseconds, taken.nanoseconds - UInt64(pts) <= plausibleCaptureAge else { return (taken, .zero) }
        return (MonotonicInstant(nanoseconds: UInt64(pts)), .nanoseconds(Int64(taken.nanoseconds - UInt64(pts))))
    }

    /// Tells the operator that the producer or the graph renegotiated the running stream: its
    /// buffers were replaced (frames held on lease keep theirs). Rare; never per frame.
    private func logRenegotiation(_ change: cpw_negotiations) {
        delivery.log(.notice, "PipeWire renegotiated the stream; its buffers were replaced",
                     ["formats": "\(change.formats)", "buffersAdded": "\(change.buffers_added)",
                      "buffersRemoved": "\(change.buffers_removed)", "frames": "\(sequence)"])
    }

    private func leave(_ error: MediaDevicesError) -> CaptureExecutor.Step {
        failure = error
        return .leave
    }

    /// The frame layout of `picture`: its size (narrowed to what a row holds when the stride
    /// is shorter than the announced width), and its stride for plane 0 with the other planes'
    /// strides derived as V4L2 derives them (packed when the producer gave none).
    private static func layout(of picture: cpw_frame, pixelFormat: PixelFormat, colorimetry: Colorimetry) -> VideoFormat {
        let packed = VideoFormat(pixelFormat: pixelFormat, width: Int(picture.width), height: Int(picture.height), colorimetry: colorimetry)
        guard picture.stride > 0, let layout = pixelFormat.layout, !layout.isCompressed else { return packed }
        let first = Int(picture.stride)
        // A producer whose rows are shorter than its format's width says (libcamera through
        // PipeWire 0.3.65 announces the 640 asked for and sends vimc's 636-pixel rows): the
        // rows are the truth, so the width is what one row holds.
        var width = Int(picture.width)
        while width > 1 && layout.planes[0].minimumBytesPerRow(width: width) > first { width -= 1 }
        let strides = layout.planes.map { $0.bytesPerRow(luminanceBytesPerRow: first, luminance: layout.planes[0]) }
        let size = zip(layout.planes, strides).map { $0.rows(height: Int(picture.height)) * $1 }.reduce(0, +)
        return VideoFormat(pixelFormat: pixelFormat, width: width, height: Int(picture.height),
                           bytesPerRow: strides, bufferSizes: [size], colorimetry: colorimetry)
    }

    /// The rotation PipeWire's VideoTransform meta gives (SPA_META_TRANSFORMATION_90 and so on,
    /// read as WebRTC reads them: the rotation that shows the picture upright; the flipped ones
    /// count as their rotation).
    private static func rotation(_ transform: UInt32) -> UInt32 { (transform & 3) * 90 }
}
#endif
