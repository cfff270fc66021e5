import MediaDevicesCore
import Synchronization

/// Voice processing for calls: echo cancellation with the played signal as reference, noise
/// suppression and automatic gain (see ``VoiceProcessing``), through WebRTC's audio processing
/// module or speexdsp (``VoiceProcessingLibrary``). What iOS's voice-processing I/O unit does for
/// `AVAudioEngine`, for one format on both sides.
///
/// The render thread hands it what it plays (``processRender(_:frames:)``), the capture thread what it
/// captured (``processCapture(_:frames:delay:)``, in place) with the delay from one to the other.
/// Both take any number of frames: the libraries work on 10 ms blocks, so the capture comes out one block
/// late, and later by what the library delays (``latency``). The played frames wait on a time
/// line (`EchoReferenceLine`) and both libraries run on the capture thread, each captured block
/// with the played block aligned to it, so a capture thread that falls behind, or either side's
/// xrun, moves nothing out of line: the driver stamps both sides with the device's times and a
/// side that jumps re-aligns at the next block. Allocation-free
/// per call once made, except the call after ``processing`` changed (the libraries switch their
/// parts then). One render thread and one capture thread; ``processing`` may be set from any thread
/// and takes effect at the next capture block.
// @unchecked Sendable: made for two threads at once: the capture side's fields are the capture
// thread's, the render side hands blocks over the lock-free `line`, `requested` is an atomic.
public final class VoiceProcessor: @unchecked Sendable {
    /// The format of both sides' samples (interleaved).
    public let format: AudioFormat
    /// The options it was made with.
    public let options: VoiceProcessingOptions
    /// Frames in one block (10 ms).
    public let blockFrames: Int
    private let engine: any VoiceEngine
    private let requested: Atomic<UInt8>
    private var applied: UInt8
    private let blockSamples: Int
    private let captureIn: UnsafeMutablePointer<Int16>
    private let captureOut: UnsafeMutablePointer<Int16>
    private var captureFill = 0
    private let renderBlock: UnsafeMutablePointer<Int16>
    private let referenceBlock: UnsafeMutablePointer<Int16>
    private let line: EchoReferenceLine
    /// Frames handed to `processRender(_:frames:)` so far: the time line of the public calls.
    private let renderedFrames = Atomic<Int>(0)
    /// The recording time, in frames, of the capture block being filled.
    private var captureBlockTime: Double = 0
    /// A gap came before the next block begun / before the block being filled.
    private var captureAfterGap = false
    private var blockAfterGap = false
    private let blocks = Atomic<Int>(0)
    private let unreferenced = Atomic<Int>(0)

    /// The formats it takes: 8000, 16000, 32000 or 48000 Hz (the rates the libraries run at);
    /// 1 or 2 channels (speexdsp: 1); `S16_LE` or `FLOAT_LE`.
    public static let sampleRates = [8000, 16000, 32000, 48000]

    /// Makes a processor for `format` with `options.processing` on. Throws
    /// ``/MediaDevicesCore/MediaDevicesError/Code/unsupportedFormat`` naming what it takes for any
    /// other rate, channel count or sample format.
    public convenience init(format: AudioFormat, options: VoiceProcessingOptions = VoiceProcessingOptions()) throws(MediaDevicesError) {
        try self.init(format: format, options: options, referenceSeconds: 2)
    }

    /// Makes a processor whose reference line holds `referenceSeconds` of played frames: the
    /// lead, both devices' delays and what the capture device may hold while the capture
    /// thread is behind (the driver passes its capture buffer + 2 s).
    init(format: AudioFormat, options: VoiceProcessingOptions, referenceSeconds: Double) throws(MediaDevicesError) {
        try Self.check(format, options: options)
        self.format = format
        self.options = options
        blockFrames = format.sampleRate / 100
        blockSamples = blockFrames * format.channels
        engine = try Self.makeEngine(format: format, options: options)
        try engine.apply(options.processing)
        applied = options.processing.rawValue
        requested = Atomic(options.processing.rawValue)
        captureIn = .allocate(capacity: blockSamples)
        captureOut = .allocate(capacity: blockSamples)
        renderBlock = .allocate(capacity: blockSamples)
        referenceBlock = .allocate(capacity: blockSamples)
        referenceBlock.initialize(repeating: 0, count: blockSamples)
        // After a gap a side re-aligns at once; without one, a side whose stamps stray more
        // than 6 ms for 200 ms (the emulator's stamps stray for tens of ms under load while
        // the frames run on) re-aligns then.
        line = EchoReferenceLine(channels: format.channels, capacityFrames: Int(referenceSeconds * Double(format.sampleRate)),
                                 tolerance: Double(format.sampleRate) * 0.006, confirmFrames: format.sampleRate / 5)
        captureIn.initialize(repeating: 0, count: blockSamples)
        captureOut.initialize(repeating: 0, count: blockSamples)
        renderBlock.initialize(repeating: 0, count: blockSamples)
    }

    /// Throws ``/MediaDevicesCore/MediaDevicesError/Code/unsupportedFormat``, naming what it takes,
    /// when `format` is not one of them.
    @discardableResult
    package static func check(_ format: AudioFormat, options: VoiceProcessingOptions) throws(MediaDevicesError) -> AudioFormat {
        let maximumChannels = options.library == .speexDSP ? 1 : 2
        guard sampleRates.contains(format.sampleRate), (1...maximumChannels).contains(format.channels), format.sampleFormat != .s32LE else {
            throw MediaDevicesError(.unsupportedFormat, device: nil, operation: "create voice processor",
                                    detail: "\(options.library) voice processing takes 8000, 16000, 32000 or 48000 Hz, \(maximumChannels == 1 ? "1 channel" : "1 or 2 channels"), S16_LE or FLOAT_LE; asked for \(format) (initialize the side at such a format: the driver converts the device's)")
        }
        return format
    }

    deinit {
        captureIn.deallocate()
        captureOut.deallocate()
        renderBlock.deallocate()
        referenceBlock.deallocate()
    }

    /// The processors that run; set from any thread, applied at the next capture block.
    public var processing: VoiceProcessing {
        get { VoiceProcessing(rawValue: requested.load(ordering: .acquiring)) }
        set { requested.store(newValue.rawValue, ordering: .releasing) }
    }

    /// What the processing adds to the capture delay, in frames, with the processors that run
    /// now: one block (10 ms, the time a captured frame waits for its block to fill) and the
    /// library's own delay (WebRTC at 48 kHz: echo 8 ms, noise 6 ms more; speexdsp: 10 ms).
    package var latencyFrames: Int {
        blockFrames + engine.delayFrames(for: VoiceProcessing(rawValue: requested.load(ordering: .acquiring)))
    }

    /// What the processing adds to the capture delay with the processors that run now: one block
    /// (10 ms, the time a captured frame waits for its block to fill) and the library's own delay
    /// (WebRTC at 48 kHz: echo 8 ms, noise 6 ms more, 34 ms with all on; speexdsp: 10 ms).
    public var latency: Duration { .nanoseconds(Int64(latencyFrames) * 1_000_000_000 / Int64(format.sampleRate)) }

    /// Capture blocks processed so far.
    package var processedBlocks: Int { blocks.load(ordering: .relaxed) }

    /// What the echo canceller measured (WebRTC; nil for speexdsp or before it measured).
    public var echoMetrics: EchoMetrics? { engine.echoMetrics }

    /// Times the played frames jumped from where the ones before ended (an underrun, a device
    /// restarted or switched): the capture re-aligned with them at the next block.
    package var renderJumps: Int { line.renderJumps }
    /// Times the captured frames jumped from where the ones before ended (an overrun: frames the
    /// capture thread lost by falling behind; a device restarted or switched): re-aligned at once.
    package var captureJumps: Int { line.captureJumps }
    /// Diagnostics, capture thread (or after it stopped): how far each side's last stamp lay
    /// from where the reference line placed it, in milliseconds.
    package var lastStampDeviations: (render: Double, capture: Double) {
        let (render, capture) = line.lastDeviations
        return (render * 1000 / Double(format.sampleRate), capture * 1000 / Double(format.sampleRate))
    }
    /// Capture blocks processed with nothing played at their time: the render side stopped, has
    /// not started, or switched and not yet played, so the echo canceller had no reference and
    /// passed the block on (paused; noise suppression and gain went on). Rising while the
    /// render side plays means the reference does not reach the processor.
    package var blocksWithoutReference: Int { unreferenced.load(ordering: .relaxed) }

    /// Played frames dropped from the reference because the capture side fell further behind
    /// than the line holds (2 s, or the capture device's buffer + 2 s in a driver).
    package var droppedReferenceFrames: Int { line.dropped }

    /// Render thread: `frames` frames at `samples` (in ``format``) are being played; they are the
    /// echo reference. Use with ``processCapture(_:frames:delay:)``.
    public func processRender(_ samples: UnsafeRawPointer, frames: Int) {
        let start = renderedFrames.load(ordering: .relaxed)
        processRender(samples, frames: frames, time: Double(start), afterGap: false)
        renderedFrames.store(start + frames, ordering: .relaxed)
    }

    /// Capture thread: processes `frames` captured frames at `samples` (in ``format``) in place;
    /// they come out ``latency`` late. `delay` is the time from the ``processRender(_:frames:)`` of a played
    /// frame to the ``processCapture(_:frames:delay:)`` of the capture holding its echo: the render device's
    /// delay plus the capture device's; at least 40 ms with ``VoiceProcessingLibrary/webRTC`` and 8
    /// ms with ``VoiceProcessingLibrary/speexDSP`` (the reference is taken that far ahead of its
    /// echo, and is not there yet with less).
    public func processCapture(_ samples: UnsafeMutableRawPointer, frames: Int, delay: Duration) {
        let (seconds, attoseconds) = delay.components
        let delayFrames = (max(0, Double(seconds) + Double(attoseconds) / 1e18) * Double(format.sampleRate)).rounded()
        processCapture(samples, frames: frames, time: Double(renderedFrames.load(ordering: .relaxed)) - delayFrames - Double(frames), afterGap: false)
    }

    /// Render thread: `frames` played frames at `samples`, the first heard at `time` (in frames
    /// of the clock the capture side's times are on); `afterGap`: the device did not play all
    /// it was given before (the line re-aligns at once).
    func processRender(_ samples: UnsafeRawPointer, frames: Int, time: Double, afterGap: Bool) {
        let channels = format.channels, isFloat = format.sampleFormat == .floatLE
        var frame = 0
        while frame < frames {
            let take = min(frames - frame, blockFrames)
            Self.load(samples, from: frame * channels, count: take * channels, isFloat: isFloat, into: renderBlock)
            line.append(renderBlock, frames: take, time: time + Double(frame), afterGap: afterGap && frame == 0)
            frame += take
        }
    }

    /// Render thread: the render run ended at `time` (the render side's clock, in frames) and
    /// its device dropped what it held: frames handed over before and heard from `time` on were
    /// never played, and are no reference (see `EchoReferenceLine.cut(at:)`).
    func renderStopped(at time: Double) {
        line.cut(at: time)
    }

    /// Capture thread: processes `frames` captured frames at `samples` in place, the first
    /// recorded at `time` (the render side's clock, in frames); `afterGap`: the device lost
    /// frames before these (the line re-aligns at once).
    func processCapture(_ samples: UnsafeMutableRawPointer, frames: Int, time: Double, afterGap: Bool) {
        if afterGap { captureAfterGap = true }
        let wanted = requested.load(ordering: .acquiring)
        if wanted != applied {
            // A library that refuses leaves the processors as they were; asked again next block.
            if (try? engine.apply(VoiceProcessing(rawValue: wanted))) != nil { applied = wanted }
        }
        let channels = format.channels, isFloat = format.sampleFormat == .floatLE
        var frame = 0
        while frame < frames {
            if captureFill == 0 {
                captureBlockTime = time + Double(frame)
                blockAfterGap = captureAfterGap
                captureAfterGap = false
            }
            let take = min(frames - frame, blockFrames - captureFill)
            let offset = captureFill * channels, start = frame * channels, count = take * channels
            Self.load(samples, from: start, count: count, isFloat: isFloat, into: captureIn + offset)
            Self.store(captureOut + offset, count: count, isFloat: isFloat, into: samples, at: start)
            frame += take
            captureFill += take
            if captureFill == blockFrames {
                // The reference is taken whatever runs, so the line never backs up.
                let played = line.take(into: referenceBlock, frames: blockFrames, time: captureBlockTime + Double(engine.referenceLeadFrames), afterGap: blockAfterGap)
                if played == 0 { unreferenced.add(1, ordering: .relaxed) }
                if applied != 0 { engine.processCapture(captureIn, reference: referenceBlock) }
                captureOut.update(from: captureIn, count: blockSamples)
                blocks.add(1, ordering: .relaxed)
                captureFill = 0
            }
        }
    }

    /// Copies `count` samples from `source` (16-bit or float) at sample `start` into `block`.
    @inline(__always)
    private static func load(_ source: UnsafeRawPointer, from start: Int, count: Int, isFloat: Bool, into block: UnsafeMutablePointer<Int16>) {
        if isFloat {
            let floats = source.assumingMemoryBound(to: Float.self) + start
            for index in 0..<count { block[index] = SampleConversion.int16(floats[index]) }
        } else {
            block.update(from: source.assumingMemoryBound(to: Int16.self) + start, count: count)
        }
    }

    /// Copies `count` samples from `block` into `destination` (16-bit or float) at sample `start`.
    @inline(__always)
    private static func store(_ block: UnsafePointer<Int16>, count: Int, isFloat: Bool, into destination: UnsafeMutableRawPointer, at start: Int) {
        if isFloat {
            let floats = destination.assumingMemoryBound(to: Float.self) + start
            for index in 0..<count { floats[index] = Float(block[index]) / 32768 }
        } else {
            (destination.assumingMemoryBound(to: Int16.self) + start).update(from: block, count: count)
        }
    }
}
