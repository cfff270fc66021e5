import MediaDevicesCore
import Synchronization

/// Counters and measurements of a capture run.
public struct CaptureStatistics: Sendable, Hashable, Encodable {
    /// Frames handed to consumers.
    public var deliveredFrames: Int = 0
    /// Frames the driver dropped before we saw them, counted from gaps in sequence numbers. A
    /// frame the driver completes after a newer one (uvcvideo can) is not counted once it comes.
    public var droppedFrames: Int = 0
    /// Frames the asynchronous sequences dropped because the application fell behind.
    public var queueDroppedFrames: Int = 0
    /// Delivered frames per second, measured from driver timestamps of the first and last frame.
    public var measuredFrameRate: Double = 0
    /// Mean capture delay (dequeue time minus driver timestamp); seconds in JSON.
    public var meanCaptureDelay: Duration {
        get { meanCaptureDelaySeconds.wrappedValue }
        set { meanCaptureDelaySeconds.wrappedValue = newValue }
    }
    /// Largest capture delay seen; seconds in JSON.
    public var maxCaptureDelay: Duration {
        get { maxCaptureDelaySeconds.wrappedValue }
        set { maxCaptureDelaySeconds.wrappedValue = newValue }
    }
    /// The two delays as stored and coded (a number of seconds in JSON).
    private var meanCaptureDelaySeconds = SecondsCoding(wrappedValue: .zero)
    private var maxCaptureDelaySeconds = SecondsCoding(wrappedValue: .zero)
    /// Frames dropped because they could not be used (a truncated or corrupt JPEG, a short buffer).
    public var corruptFrames: Int = 0
    /// Why the last corrupt frame was dropped.
    public var lastCorruptFrameReason: String?
    /// Screen grabs skipped because nothing had changed since the last frame (X11 damage):
    /// not delivered, not dropped.
    public var unchangedFrames: Int = 0
    /// MJPEG frames decoded at a reduced size inside libjpeg-turbo's inverse DCT (TurboJPEG
    /// scaling), because every converting consumer asked for at most half the picture.
    public var scaledDecodeFrames: Int = 0
    /// The DCT scale of the last MJPEG decode counted here (reduced, or shared), e.g. 3/8.
    public var lastDecodeScale: Fraction?
    /// MJPEG frames decoded once for several converting consumers (sequences with an output,
    /// a ``ConvertingConsumer``), at the largest scale any of them needed.
    public var sharedDecodeFrames: Int = 0
    /// Frames the asynchronous sequences (``VideoSource/frames(bufferSize:)``) handed out as the
    /// driver's own buffer, on lease, all sequences together.
    public var leasedFrames: Int = 0
    /// Frames the sequences copied although the source lends them, because a lease would have
    /// left the driver too few buffers, all sequences together.
    public var copiedFrames: Int = 0
    /// The buffers the driver or producer cycles in this run (V4L2's granted count, the buffers
    /// PipeWire negotiated, the screen's framebuffers), as the last lendable frame found them; 0
    /// where frames are not lent. Leases stop short of leaving the producer two of them.
    public var buffers: Int = 0

    /// Empty statistics.
    package init() {}

    /// The JSON keys: the properties' names (the delays' under their public names).
    private enum CodingKeys: String, CodingKey {
        case deliveredFrames, droppedFrames, queueDroppedFrames, measuredFrameRate
        case meanCaptureDelaySeconds = "meanCaptureDelay", maxCaptureDelaySeconds = "maxCaptureDelay"
        case corruptFrames, lastCorruptFrameReason, unchangedFrames, scaledDecodeFrames, lastDecodeScale
        case sharedDecodeFrames, leasedFrames, copiedFrames, buffers
    }
}

/// The frames a source's sequences hand out leased and copied, counted by the queues as they
/// hand them out (relaxed atomics: no lock of the delivery's per frame).
final class HandOutCounters: Sendable {
    /// Frames handed out on lease.
    let leased = Atomic<Int>(0)
    /// Frames copied although the source lends them.
    let copied = Atomic<Int>(0)
}

/// Accumulates statistics on the capture thread without allocating.
struct StatisticsAccumulator {
    private(set) var statistics = CaptureStatistics()
    private var firstTimestamp = MonotonicInstant(nanoseconds: 0)
    private var lastTimestamp = MonotonicInstant(nanoseconds: 0)
    private var lastSequence: UInt32?
    /// Which of the 63 numbers before `lastSequence` were counted as dropped (bit `n`: the number
    /// `n` before it), so that a frame the driver completes late takes its count back once.
    private var countedMissing: UInt64 = 0
    private var delaySum: Duration = .zero

    /// Forgets the last sequence number (a stream restarted and numbers begin again).
    mutating func restartSequence() { lastSequence = nil; countedMissing = 0 }

    /// Records one delivered frame.
    mutating func record(timestamp: MonotonicInstant, sequence: UInt32, captureDelay: Duration) {
        advance(to: sequence)
        if statistics.deliveredFrames == 0 { firstTimestamp = timestamp }
        lastTimestamp = max(lastTimestamp, timestamp)
        statistics.deliveredFrames += 1
        delaySum += captureDelay
        statistics.meanCaptureDelay = delaySum / statistics.deliveredFrames
        statistics.maxCaptureDelay = max(statistics.maxCaptureDelay, captureDelay)
        if statistics.deliveredFrames > 1, lastTimestamp > firstTimestamp {
            statistics.measuredFrameRate = Double(statistics.deliveredFrames - 1) * 1e9
                / Double(lastTimestamp.nanoseconds - firstTimestamp.nanoseconds)
        }
    }

    /// Records a frame dropped as corrupt, and why.
    mutating func recordCorruptFrame(_ error: MediaDevicesError) {
        statistics.corruptFrames += 1
        statistics.lastCorruptFrameReason = error.description
    }

    /// Records a frame dropped as corrupt before any consumer saw it: its sequence number counts
    /// as seen, so the frame is not also counted as dropped by the driver.
    mutating func recordUnusableFrame(sequence: UInt32, _ error: MediaDevicesError) {
        advance(to: sequence)
        recordCorruptFrame(error)
    }

    /// Takes `sequence` as seen. A number ahead of the newest counts the numbers skipped since as
    /// dropped by the driver; one of those arriving later (uvcvideo completes buffers from an
    /// unbound workqueue, so DQBUF can return a frame after a newer one) takes its count back.
    /// Modulo 2^32 (serial-number arithmetic): 0xFFFFFFFF → 0 is a step of 1, and frames dropped
    /// across the wrap still count. A number further back than the window (63) is a stream whose
    /// numbers began again: no drop, and counting goes on from it.
    private mutating func advance(to sequence: UInt32) {
        guard let last = lastSequence else {
            lastSequence = sequence
            return
        }
        let step = sequence &- last
        if step == 0 { return }
        if step < 1 << 31 {
            if step > 1 { statistics.droppedFrames += Int(step - 1) }
            // Shift the window to the new newest; the numbers skipped are bits 1 ..< step.
            let skipped: UInt64 = step >= 64 ? ~1 : ((1 << UInt64(step)) - 2)
            countedMissing = (step >= 64 ? 0 : countedMissing << UInt64(step)) | skipped
            lastSequence = sequence
            return
        }
        let behind = last &- sequence
        if behind < 64 {
            let bit: UInt64 = 1 << UInt64(behind)
            if countedMissing & bit != 0 {
                countedMissing &= ~bit
                statistics.droppedFrames -= 1
            }
            return
        }
        lastSequence = sequence
        countedMissing = 0
    }

    /// Records `count` deadlines at which the screen had not changed (grabs skipped).
    mutating func recordUnchangedFrames(_ count: Int) { statistics.unchangedFrames += count }

    /// Records an MJPEG frame decoded at `scale`: `reduced` (smaller than the picture), `shared`
    /// (once for several converting consumers).
    mutating func recordDecode(at scale: Fraction, reduced: Bool, shared: Bool) {
        if reduced { statistics.scaledDecodeFrames += 1 }
        if shared { statistics.sharedDecodeFrames += 1 }
        statistics.lastDecodeScale = scale
    }

    /// Records how many buffers the frame's lender cycles.
    mutating func recordBuffers(_ count: Int) { statistics.buffers = count }

    /// Adds frames dropped by a bounded queue.
    mutating func recordQueueDrops(_ count: Int) { statistics.queueDroppedFrames += count }
}
