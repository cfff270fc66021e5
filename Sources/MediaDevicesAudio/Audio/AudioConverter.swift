import MediaDevicesCore
/// Converts interleaved audio from one ``AudioFormat`` to another on an audio thread: sample
/// format to float, channel mix (to mono the average, from mono copied), rate conversion (``AudioResampler``), float to
/// the output sample format. Channels are reduced before the resampler and added after it, so
/// it runs on the smaller count. Every buffer is allocated when it is created;
/// ``convert(_:frames:sink:)`` and ``pull(into:frames:source:)`` allocate nothing. One thread at a time.
public final class AudioConverter {
    /// The format taken in.
    public let input: AudioFormat
    /// The format given out.
    public let output: AudioFormat
    /// The rate converter; nil when the rates are equal.
    package let resampler: AudioResampler?
    /// Input frames converted per step (longer inputs are taken in steps).
    public let chunkFrames: Int
    private let mixedChannels: Int
    private let inputFloats: UnsafeMutablePointer<Float>
    private let mixed: UnsafeMutablePointer<Float>
    private let resampled: UnsafeMutablePointer<Float>
    private let expanded: UnsafeMutablePointer<Float>
    private let converted: UnsafeMutableRawPointer
    private let outputCapacity: Int
    // `pull`: application frames read, and converted frames not yet handed out.
    private let staging: UnsafeMutableRawPointer
    private let pending: UnsafeMutableRawPointer
    private let pendingCapacity: Int
    private var pendingFrames = 0

    /// Creates a converter from `input` to `output`, rates converted with `library`.
    public init(from input: AudioFormat, to output: AudioFormat, library: AudioResamplerLibrary = .speexDSP, chunkFrames: Int = 1024) throws(MediaDevicesError) {
        self.input = input
        self.output = output
        self.chunkFrames = max(16, chunkFrames)
        mixedChannels = min(input.channels, output.channels)
        resampler = input.sampleRate == output.sampleRate ? nil
            : try AudioResampler(library: library, inputRate: input.sampleRate, outputRate: output.sampleRate,
                                 channels: mixedChannels, maximumInputFrames: self.chunkFrames)
        outputCapacity = resampler?.maximumOutputFrames ?? self.chunkFrames
        let widest = max(input.channels, output.channels)
        inputFloats = .allocate(capacity: self.chunkFrames * input.channels)
        mixed = .allocate(capacity: self.chunkFrames * mixedChannels)
        resampled = .allocate(capacity: outputCapacity * mixedChannels)
        expanded = .allocate(capacity: outputCapacity * widest)
        converted = .allocate(byteCount: outputCapacity * output.bytesPerFrame, alignment: 16)
        staging = .allocate(byteCount: self.chunkFrames * input.bytesPerFrame, alignment: 16)
        pendingCapacity = 2 * outputCapacity + 4 * self.chunkFrames
        pending = .allocate(byteCount: pendingCapacity * output.bytesPerFrame, alignment: 16)
    }

    deinit {
        inputFloats.deallocate(); mixed.deallocate(); resampled.deallocate()
        expanded.deallocate(); converted.deallocate(); staging.deallocate(); pending.deallocate()
    }

    /// Output frames per input frame.
    package var ratio: Double { Double(output.sampleRate) / Double(input.sampleRate) }

    /// The converter's own delay in output frames (the resampler's).
    public var delayFrames: Double { resampler?.delayFrames ?? 0 }

    /// Forgets the signal and any frames ``pull(into:frames:source:)`` held (a new run starts). Not
    /// on an audio thread.
    public func reset() throws(MediaDevicesError) {
        try resampler?.reset()
        pendingFrames = 0
    }

    /// Push: converts `frames` frames at `source` and hands the result to `sink(bytes, frames)`,
    /// in steps of at most ``chunkFrames`` input frames (the sink may be called several times, or
    /// not at all while the resampler fills its filter).
    public func convert(_ source: UnsafeRawPointer, frames: Int, sink: (UnsafeRawPointer, Int) -> Void) {
        var done = 0
        while done < frames {
            let step = min(chunkFrames, frames - done)
            SampleConversion.convert(source + done * input.bytesPerFrame, input.sampleFormat,
                                     to: UnsafeMutableRawPointer(inputFloats), .floatLE, count: step * input.channels)
            ChannelMixer.mix(inputFloats, channels: input.channels, into: mixed, channels: mixedChannels, frames: step)
            if let resampler {
                var taken = 0
                repeat {
                    let (consumed, produced) = resampler.process(mixed + taken * mixedChannels, frames: step - taken,
                                                                 into: resampled, capacity: outputCapacity)
                    taken += consumed
                    if produced > 0 { emit(resampled, frames: produced, sink: sink) }
                    if consumed == 0 && produced == 0 { break }
                } while taken < step
            } else {
                emit(mixed, frames: step, sink: sink)
            }
            done += step
        }
    }

    private func emit(_ samples: UnsafeMutablePointer<Float>, frames: Int, sink: (UnsafeRawPointer, Int) -> Void) {
        var floats = samples
        if output.channels > mixedChannels {
            ChannelMixer.mix(samples, channels: mixedChannels, into: expanded, channels: output.channels, frames: frames)
            floats = expanded
        }
        SampleConversion.convert(UnsafeRawPointer(floats), .floatLE, to: converted, output.sampleFormat, count: frames * output.channels)
        sink(UnsafeRawPointer(converted), frames)
    }

    /// Pull: fills `destination` with up to `frames` output frames, reading input frames from
    /// `source(buffer, maximumFrames) -> framesRead` as it needs them (about `frames / ratio`,
    /// more while the resampler fills its filter). Returns the frames written: fewer than asked
    /// only when `source` ran dry. Frames converted beyond `frames` are kept for the next call.
    public func pull(into destination: UnsafeMutableRawPointer, frames: Int,
                     source: (UnsafeMutableRawPointer, Int) -> Int) -> Int {
        let frameBytes = output.bytesPerFrame
        var rounds = 0
        while pendingFrames < frames && rounds < 32 {
            rounds += 1
            // At least 128 frames a step: libsoxr converts in blocks and gives nothing for a
            // trickle; what comes out beyond `frames` waits in `pending`.
            let wanted = max(128, Int(Double(frames - pendingFrames) / ratio) + 1)
            let room = (pendingCapacity - pendingFrames) * input.sampleRate / output.sampleRate - 8
            let ask = min(chunkFrames, wanted, room)
            guard ask > 0 else { break }
            let got = source(staging, ask)
            guard got > 0 else { break }
            convert(staging, frames: got) { bytes, count in
                let fit = min(count, pendingCapacity - pendingFrames)
                (pending + pendingFrames * frameBytes).copyMemory(from: bytes, byteCount: fit * frameBytes)
                pendingFrames += fit
            }
        }
        let handed = min(frames, pendingFrames)
        destination.copyMemory(from: pending, byteCount: handed * frameBytes)
        pendingFrames -= handed
        if pendingFrames > 0 { pending.copyMemory(from: pending + handed * frameBytes, byteCount: pendingFrames * frameBytes) }
        return handed
    }
}
