/// One `VoiceProcessor` as the driver's audio threads run it: the capture thread processes
/// what it writes into the bus (at the capture's bus format, the processor's), the render
/// thread hands what it takes from the bus (at the render's bus format, converted to the
/// processor's when they differ) as the reference. Every buffer is made here; the audio
/// threads allocate nothing.
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

    init(processor: VoiceProcessor, renderFormat: AudioFormat?) throws {
        self.processor = processor
        self.renderFormat = renderFormat
        renderConverter = try renderFormat.flatMap { $0 == processor.format ? nil : try AudioConverter(from: $0, to: processor.format, chunkFrames: 1024) }
        scratch = .allocate(byteCount: scratchFrames * processor.format.bytesPerFrame, alignment: 16)
        let silenceBytes = silenceFrames * max(processor.format.bytesPerFrame, renderFormat?.bytesPerFrame ?? 0)
        silence = .allocate(byteCount: silenceBytes, alignment: 16)
        silence.initializeMemory(as: UInt8.self, repeating: 0, count: silenceBytes)
    }

    deinit {
        scratch.deallocate()
        silence.deallocate()
    }

    /// Capture thread: `bytes` of captured frames at the capture's bus format, processed with
    /// `delay` (seconds from render tap to capture tap) and handed to `store` piece by piece.
    func processCapture(_ source: UnsafeRawPointer, bytes: Int, delay: Double, store: (UnsafeRawPointer, Int) -> Void) {
        let frameBytes = processor.format.bytesPerFrame
        var done = 0
        while done < bytes {
            let piece = min(bytes - done, scratchFrames * frameBytes)
            scratch.copyMemory(from: source + done, byteCount: piece)
            processor.processCapture(scratch, frames: piece / frameBytes, delay: delay)
            store(scratch, piece)
            done += piece
        }
    }

    /// Render thread: `bytes` of frames at the render's bus format, taken from the bus to play.
    func processRender(_ source: UnsafeRawPointer, bytes: Int) {
        guard let renderFormat, bytes > 0 else { return }
        let frames = bytes / renderFormat.bytesPerFrame
        guard let renderConverter else {
            processor.processRender(source, frames: frames)
            return
        }
        let processor = self.processor
        renderConverter.convert(source, frames: frames) { converted, count in processor.processRender(converted, frames: count) }
    }

    /// Render thread: `frames` frames of silence played in place of what the bus lacked.
    func processRenderSilence(frames: Int) {
        guard let renderFormat else { return }
        var left = frames
        while left > 0 {
            let piece = min(left, silenceFrames)
            processRender(silence, bytes: piece * renderFormat.bytesPerFrame)
            left -= piece
        }
    }
}
