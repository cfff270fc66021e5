import MediaDevicesCore
import CSoxr
import CSpeexDSP

/// The resampling libraries ``AudioResampler`` runs on. Measured against each other by
/// `mediadevices-benchmark audio --resampler` (997 Hz, 44.1 kHz stereo ↔ 48 kHz mono, 10 ms
/// periods): libsoxr is cleaner (THD+N about −134 dB against −113 dB) and cheaper (the library
/// alone 6–9× less CPU), but converts in blocks: 7–18 ms of delay against speexdsp's 1 ms.
/// Both are far past what a call needs (−80 dB; under 0.5 % of a core), so the driver's
/// default is speexdsp, for the delay; pick libsoxr where delay does not matter (recording).
public enum AudioResamplerLibrary: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// libsoxr, the SoX resampler, at its high quality (`SOXR_HQ`: 20-bit precision, linear
    /// phase, passband to 91 % of Nyquist).
    case soxr
    /// speexdsp's resampler (PulseAudio's default) at quality 5 (`SPEEX_RESAMPLER_QUALITY_DESKTOP`):
    /// the default of ``AudioStreamOptions/resampler``.
    case speexDSP = "speexdsp"

    /// `soxr`, `speexdsp`.
    public var description: String { rawValue }
}

/// Rate conversion of interleaved float frames through libsoxr or speexdsp, for one channel
/// count and one pair of rates. Everything is allocated when it is created (and warmed up, so
/// that libsoxr's internal buffers have grown to their size): ``process(_:frames:into:capacity:)``
/// never allocates when given at most ``maximumInputFrames`` frames at a time. One thread at a time.
public final class AudioResampler {
    /// The library.
    public let library: AudioResamplerLibrary
    /// Input frames per second.
    public let inputRate: Int
    /// Output frames per second.
    public let outputRate: Int
    /// Samples per frame.
    public let channels: Int
    /// The most input frames one ``process(_:frames:into:capacity:)`` call takes.
    public let maximumInputFrames: Int
    private var soxr: soxr_t?
    private var speex: OpaquePointer?

    /// Creates a resampler from `inputRate` to `outputRate` for `channels` channels.
    /// Throws ``/MediaDevicesCore/MediaDevicesError/Code/unsupportedFormat`` when the library
    /// refuses the rates or channel count.
    public init(library: AudioResamplerLibrary, inputRate: Int, outputRate: Int, channels: Int, maximumInputFrames: Int = 4096) throws(MediaDevicesError) {
        self.library = library
        self.inputRate = inputRate
        self.outputRate = outputRate
        self.channels = channels
        self.maximumInputFrames = max(1, maximumInputFrames)
        try create()
    }

    deinit { destroy() }

    private func destroy() {
        if let soxr { soxr_delete(soxr) }
        if let speex { speex_resampler_destroy(speex) }
        soxr = nil
        speex = nil
    }

    private func create() throws(MediaDevicesError) {
        let failure = { (detail: String) in
            MediaDevicesError(.unsupportedFormat, device: nil, operation: "create \(self.library) resampler",
                              detail: "\(self.library) cannot convert \(self.inputRate) Hz to \(self.outputRate) Hz with \(self.channels) channel(s): \(detail); ask for a format the device takes")
        }
        guard inputRate > 0, outputRate > 0, channels > 0 else { throw failure("rates and channels must be positive") }
        switch library {
        case .soxr:
            var io = soxr_io_spec(SOXR_FLOAT32_I, SOXR_FLOAT32_I)
            var quality = soxr_quality_spec(UInt(SOXR_HQ), 0)
            var runtime = soxr_runtime_spec(1)
            var error: soxr_error_t?
            let handle = soxr_create(Double(inputRate), Double(outputRate), UInt32(channels), &error, &io, &quality, &runtime)
            guard let handle, error == nil else { throw failure(error.map { String(cString: $0) } ?? "soxr_create failed") }
            soxr = handle
        case .speexDSP:
            var error: Int32 = 0
            let handle = speex_resampler_init(UInt32(channels), UInt32(inputRate), UInt32(outputRate), 5, &error)
            guard let handle, error == 0 else { throw failure(String(cString: speex_resampler_strerror(error))) }
            speex = handle
            speex_resampler_skip_zeros(handle)
        }
        warmUp()
    }

    /// libsoxr grows its FIFOs on first use: run silence through at the largest input size so
    /// that they reach their size here and not on an audio thread. The silence's output is
    /// thrown away; the filter history holds silence, as it does when new.
    private func warmUp() {
        guard soxr != nil else { return }
        let input = UnsafeMutablePointer<Float>.allocate(capacity: maximumInputFrames * channels)
        let outputFrames = maximumOutputFrames
        let output = UnsafeMutablePointer<Float>.allocate(capacity: outputFrames * channels)
        defer { input.deallocate(); output.deallocate() }
        input.initialize(repeating: 0, count: maximumInputFrames * channels)
        for _ in 0..<16 { _ = process(input, frames: maximumInputFrames, into: output, capacity: outputFrames) }
        for _ in 0..<64 where process(input, frames: 0, into: output, capacity: outputFrames).produced > 0 {}
    }

    /// Output room that one call with ``maximumInputFrames`` never fills (the converted frames plus
    /// what the library may hold back from earlier calls).
    public var maximumOutputFrames: Int {
        (maximumInputFrames * outputRate + inputRate - 1) / inputRate + 2048
    }

    /// Converts up to `frames` frames at `input` into at most `capacity` frames at `output`;
    /// returns how many input frames it took and how many output frames it wrote. It takes fewer
    /// than given only when `output` fills up: call again with the rest.
    @inline(__always)
    public func process(_ input: UnsafePointer<Float>, frames: Int, into output: UnsafeMutablePointer<Float>,
                        capacity: Int) -> (consumed: Int, produced: Int) {
        let frames = min(frames, maximumInputFrames)
        if let soxr {
            var consumed = 0, produced = 0
            // A non-nil input with 0 frames means "nothing now"; nil would mean the end.
            _ = soxr_process(soxr, input, frames, &consumed, output, capacity, &produced)
            return (consumed, produced)
        }
        if let speex {
            var consumed = UInt32(frames), produced = UInt32(capacity)
            _ = speex_resampler_process_interleaved_float(speex, input, &consumed, output, &produced)
            return (Int(consumed), Int(produced))
        }
        return (frames, 0)
    }

    /// The delay from input to output, in output frames (the filter's group delay and what is
    /// buffered): added to the device's delay in ``AudioDriver/estimatedCaptureDelay``.
    public var delayFrames: Double {
        if let soxr { return soxr_delay(soxr) }
        if let speex { return Double(speex_resampler_get_output_latency(speex)) }
        return 0
    }

    /// Forgets the signal (a new run starts). Reallocates libsoxr's state: not on an audio thread.
    public func reset() throws(MediaDevicesError) {
        destroy()
        try create()
    }
}
