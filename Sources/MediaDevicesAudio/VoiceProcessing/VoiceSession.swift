import MediaDevicesCore
/// One `VoiceProcessor` as the driver's audio threads run it: the capture thread processes
/// what it writes into the bus (at the capture's bus format, the processor's), the render
/// thread hands what it takes from the bus (at the render's bus format, converted to the
/// processor's when they differ) as the reference. Every buffer is made here; the audio
/// threads allocate nothing.
// @unchecked Sendable: made before the audio threads use it; then its render parts are the render thread's and its capture parts the capture thread's.
final class VoiceSession: @unchecked Sendable {
    let processor: VoiceProcessor
    /// Render bus format → processor format; nil when they are equal.
    private let renderConverter: AudioConverter?
    /// The render bus format this session takes (nil: none yet; render is not fed).
    let renderFormat: AudioFormat?
    private let scratch: UnsafeMutableRawPointer
    private let scratchFrames = 4096
    private let silence: UnsafeMutableRawPointer
    private let silenceFrames = 1024
    /// The times of what `renderConverter` gives out (the render thread's).
    private var renderClock = ConvertedClock()

    init(processor: VoiceProcessor, renderFormat: AudioFormat?) throws(MediaDevicesError) {
        self.processor = processor
        self.renderFormat = renderFormat
        if let renderFormat, renderFormat != processor.format {
            renderConverter = try AudioConverter(from: renderFormat, to: processor.format, chunkFrames: 1024)
        } else {
            renderConverter = nil
        }
        scratch = .allocate(byteCount: scratchFrames * processor.format.bytesPerFrame, alignment: 16)
        let silenceBytes = silenceFrames * max(processor.format.bytesPerFrame, renderFormat?.bytesPerFrame ?? 0)
        silence = .allocate(byteCount: silenceBytes, alignment: 16)
        silence.initializeMemory(as: UInt8.self, repeating: 0, count: silenceBytes)
    }

    deinit {
        scratch.deallocate()
        silence.deallocate()
    }

    /// `nanoseconds` of the monotonic clock in frames at the processor's rate.
    private func frames(_ nanoseconds: Int64) -> Double { Double(nanoseconds) * Double(processor.format.sampleRate) / 1e9 }

    /// Capture thread: `bytes` of captured frames at the capture's bus format, the first
    /// recorded at `time` (monotonic nanoseconds; `afterGap`: frames were lost before it),
    /// processed and handed to `store` piece by piece.
    func processCapture(_ source: UnsafeRawPointer, bytes: Int, time: Int64, afterGap: Bool, store: (UnsafeRawPointer, Int) -> Void) {
        let frameBytes = processor.format.bytesPerFrame
        let start = frames(time)
        var done = 0
        while done < bytes {
            let piece = min(bytes - done, scratchFrames * frameBytes)
            scratch.copyMemory(from: source + done, byteCount: piece)
            processor.processCapture(scratch, frames: piece / frameBytes, time: start + Double(done / frameBytes), afterGap: afterGap && done == 0)
            store(scratch, piece)
            done += piece
        }
    }

    /// Render thread: `bytes` of frames at the render's bus format, taken from the bus to play,
    /// the first heard at `time` (monotonic nanoseconds; `afterGap`: the device did not play
    /// all it was given before).
    func processRender(_ source: UnsafeRawPointer, bytes: Int, time: Int64, afterGap: Bool = false) {
        guard let renderFormat, bytes > 0 else { return }
        let frames = bytes / renderFormat.bytesPerFrame
        guard let renderConverter else {
            processor.processRender(source, frames: frames, time: self.frames(time), afterGap: afterGap)
            return
        }
        // What the converter gives out now went in its delay earlier.
        let outputRate = Double(processor.format.sampleRate)
        renderClock.input(at: time, duration: Double(frames) * 1e9 / Double(renderFormat.sampleRate), delay: -renderConverter.delayFrames * 1e9 / outputRate, afterGap: afterGap)
        var gap = afterGap
        renderConverter.convert(source, frames: frames) { converted, count in
            processor.processRender(converted, frames: count, time: renderClock.next * outputRate / 1e9, afterGap: gap)
            renderClock.output(Double(count) * 1e9 / outputRate)
            gap = false
        }
    }

    /// Render thread: the render run ended at `time` (monotonic nanoseconds); what its device
    /// still held was dropped, never heard.
    func renderStopped(at time: Int64) {
        processor.renderStopped(at: frames(time))
    }

    /// Render thread: `frames` frames of silence played in place of what the bus lacked, the
    /// first heard at `time` (monotonic nanoseconds).
    func processRenderSilence(frames: Int, time: Int64) {
        guard let renderFormat else { return }
        let frameNanoseconds = 1e9 / Double(renderFormat.sampleRate)
        var done = 0
        while done < frames {
            let piece = min(frames - done, silenceFrames)
            processRender(silence, bytes: piece * renderFormat.bytesPerFrame, time: time + Int64(Double(done) * frameNanoseconds))
            done += piece
        }
    }
}
