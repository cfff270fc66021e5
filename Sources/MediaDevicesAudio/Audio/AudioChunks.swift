import MediaDevicesCore
/// One block of captured audio from ``AudioDriver/capturedChunks(frames:)``: interleaved float
/// samples (−1…1) at the capture format's rate and channels, with its level.
public struct AudioChunk: Sendable {
    /// The capture format (the samples here are floats, whatever the device's sample format).
    public let format: AudioFormat
    /// Interleaved float samples, `frames × format.channels` of them.
    public let samples: [Float]
    /// Where the chunk starts in the stream, in frames since capture started.
    public let startFrame: Int
    /// The chunk's peak and RMS per channel.
    public let level: AudioLevel
    /// When the chunk's first sample was recorded, on the monotonic clock video frames are
    /// stamped with (`VideoFrame.timestamp`), so the two subtract directly. ALSA: from the
    /// device's timestamp of its last position update (`snd_pcm_htimestamp`); PulseAudio and
    /// PipeWire: the time the period was read less the stream's latency
    /// (`pa_stream_get_latency`). Chunk to chunk it advances at the sample rate. The article
    /// "Audio and the driver" (Timestamps) says what each backend's time means and how far to
    /// trust it.
    public let timestamp: MonotonicInstant

    /// Frames in the chunk (the last chunk of a run may be short).
    public var frames: Int { samples.count / max(format.channels, 1) }
}

/// The sequence ``AudioDriver/capturedChunks(frames:)`` returns.
struct AudioChunks: AsyncSequence, Sendable {
    /// A chunk of captured samples.
    typealias Element = AudioChunk
    /// What the sequence throws: the capture side's failure.
    typealias Failure = MediaDevicesError
    let side: AudioDriverSide
    let bus: AudioBus
    let framesPerChunk: Int

    /// The iterator; iterate from one task.
    struct AsyncIterator: AsyncIteratorProtocol {
        /// What the iterator throws: the capture side's failure.
        typealias Failure = MediaDevicesError
        let side: AudioDriverSide
        let bus: AudioBus
        let framesPerChunk: Int
        private var buffer: [Float] = []
        private var position = 0

        init(side: AudioDriverSide, bus: AudioBus, framesPerChunk: Int) {
            self.side = side
            self.bus = bus
            self.framesPerChunk = framesPerChunk
        }

        /// The next chunk; `nil` once the side stopped and the bus is drained (a last chunk may
        /// be short); throws the side's failure. This is what `for try await` calls, so a
        /// `catch` after the loop gets a ``/MediaDevicesCore/MediaDevicesError``.
        mutating func next(isolation actor: isolated (any Actor)?) async throws(MediaDevicesError) -> AudioChunk? {
            guard let format = bus.captureFormat else { return nil }
            let wanted = framesPerChunk * format.channels
            let pause = Duration.nanoseconds(Int64(Double(framesPerChunk) / Double(Swift.max(format.sampleRate, 1)) * 0.5e9))
            while true {
                // Read the run's state before the bus: a side that stopped has nothing more to add.
                let running = side.isStarted
                let available = bus.captureSamplesAvailable
                if available >= wanted || (!running && available > 0) {
                    return take(Swift.min(available, wanted), format: format)
                }
                if !running {
                    if let failure = side.endError { throw failure }
                    return nil
                }
                if Task.isCancelled { return nil }
                try? await Task.sleep(for: pause)
            }
        }

        /// The next chunk, as ``next(isolation:)``.
        mutating func next() async throws(MediaDevicesError) -> AudioChunk? { try await next(isolation: nil) }

        private mutating func take(_ count: Int, format: AudioFormat) -> AudioChunk {
            let whole = count / format.channels * format.channels
            // The time of the first frame read, from the capture side's anchor; a bus nobody
            // stamped (never) or the clock now less what is waiting.
            let nanoseconds = bus.nextCaptureReadTime()
                ?? Int64(MonotonicClock.now()) - Int64(count / format.channels) * 1_000_000_000 / Int64(Swift.max(format.sampleRate, 1))
            if buffer.count != whole { buffer = [Float](repeating: 0, count: whole) }
            // Mutating the buffer copies it only if the application still holds the last chunk.
            let got = buffer.withUnsafeMutableBufferPointer { bus.readCaptureData(into: $0) }
            if got < buffer.count { buffer.removeLast(buffer.count - got) }
            let level = buffer.withUnsafeBufferPointer { AudioLevel(samples: $0, channels: format.channels) }
            let chunk = AudioChunk(format: format, samples: buffer, startFrame: position, level: level,
                                   timestamp: MonotonicInstant(nanoseconds: UInt64(Swift.max(0, nanoseconds))))
            position += got / format.channels
            return chunk
        }
    }

    /// Makes the iterator.
    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(side: side, bus: bus, framesPerChunk: framesPerChunk) }
}

extension AudioDriver {
    /// The captured audio as an asynchronous sequence of chunks of `frames` frames (default:
    /// 10 ms at the capture rate, the blocks call SDKs work in). Make it after
    /// ``initializeCapture(device:format:options:)-igqs`` and iterate it while capturing.
    ///
    /// It reads the bus's capture direction, so use either this or
    /// ``AudioBus/readCaptureData(into:)-(UnsafeMutableBufferPointer<Float>)``, not both. It ends
    /// when the capture side stops, after the samples already captured, and throws the side's
    /// error (a ``/MediaDevicesCore/MediaDevicesError``) when the run failed; it also ends when the
    /// reading task is cancelled. Iterate it from one task.
    ///
    /// The sequence looks at the bus every half chunk (it does not wake the audio thread or make
    /// it signal anyone: the audio thread stays allocation-free), so a chunk arrives at most half
    /// a chunk after the device delivered its last sample. A chunk's samples are reused for the
    /// next chunk when the application no longer holds them (no allocation per chunk then, apart
    /// from the level).
    ///
    /// ```swift
    /// try driver.startCapture()
    /// for try await chunk in driver.capturedChunks() {   // 10 ms each
    ///     encoder.encode(chunk.samples)
    /// }
    /// ```
    public func capturedChunks(frames: Int? = nil) -> some AsyncSequence<AudioChunk, MediaDevicesError> & Sendable {
        let rate = captureFormat?.sampleRate ?? 48000
        return AudioChunks(side: capture, bus: bus, framesPerChunk: max(1, frames ?? rate / 100))
    }
}
