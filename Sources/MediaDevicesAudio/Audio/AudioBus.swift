import MediaDevicesCore
import Dispatch
import Synchronization

/// The audio bus between an ``AudioDriver`` and the application, as `OTAudioBus` is between an
/// `OTAudioDevice` and the SDK: the driver's capture side writes what it records into it and its
/// render side reads what to play from it (the driver makes the bus and sets its formats). The
/// application takes captured samples with ``readCaptureData(into:)-(UnsafeMutableBufferPointer<Int16>)``
/// and supplies samples to play with ``writeRenderData(_:)-(UnsafeBufferPointer<Int16>)``.
///
/// Each direction is a lock-free single-producer / single-consumer `AudioRingBuffer` holding
/// samples in the stream's format; Int16 and Float variants convert on the way in or out. No
/// method allocates, locks or logs, so both ends may be real-time threads. Each direction has
/// one writer and one reader at a time. An application thread may block in
/// ``waitForCaptureData(samples:timeout:)`` until the capture side delivers (woken once per
/// delivered period, not polling).
public final class AudioBus: Sendable {
    /// Captured samples: written by the capture side, read by the application.
    package let captureRing: AudioRingBuffer
    /// Samples to play: written by the application, read by the render side.
    package let renderRing: AudioRingBuffer
    private let captureFormatCode = Atomic<UInt64>(0)
    private let renderFormatCode = Atomic<UInt64>(0)
    private let overflowSamples = Atomic<Int>(0)
    private let underflowSamples = Atomic<Int>(0)
    /// Set by an application thread about to block in `waitForCaptureData`; the capture side
    /// clears it and signals `captureArrived` (at most one signal per wait).
    private let captureWaiting = Atomic<Bool>(false)
    private let captureArrived = DispatchSemaphore(value: 0)
    /// The driver's voice processing: captured frames pass through it on their way in, frames
    /// taken to play are its echo reference (see `AudioDriver.setVoiceProcessing`).
    let voice = VoiceLink()
    /// When the capture ring's frames were recorded: the capture side's last word on it, which
    /// ``AudioDriver/capturedChunks(frames:)`` turns into each chunk's timestamp.
    let captureTime = CaptureTimeAnchor()

    /// Creates a bus whose rings hold `capacityBytes` each (rounded up to a power of two;
    /// 1 MiB is 2.7 s of 48 kHz stereo float).
    package init(capacityBytes: Int = 1 << 20) {
        captureRing = AudioRingBuffer(minimumCapacity: capacityBytes)
        renderRing = AudioRingBuffer(minimumCapacity: capacityBytes)
    }

    /// The format of captured samples in the bus (set when the capture side initializes).
    public var captureFormat: AudioFormat? { Self.decode(captureFormatCode.load(ordering: .acquiring)) }
    /// The format the render side plays (set when the render side initializes).
    public var renderFormat: AudioFormat? { Self.decode(renderFormatCode.load(ordering: .acquiring)) }

    /// Sets the format of the capture direction (the driver does when its capture side
    /// initializes; a custom driver or a test sets it itself). Not while the direction is in use.
    package func setCaptureFormat(_ format: AudioFormat) { captureFormatCode.store(Self.encode(format), ordering: .releasing) }
    /// Sets the format of the render direction; see ``setCaptureFormat(_:)``.
    package func setRenderFormat(_ format: AudioFormat) { renderFormatCode.store(Self.encode(format), ordering: .releasing) }

    /// Captured samples the application has not taken yet.
    public var captureSamplesAvailable: Int {
        guard let format = captureFormat else { return 0 }
        return captureRing.availableToRead / format.sampleFormat.bytesPerSample
    }
    /// Room for samples to play, in samples.
    public var renderSamplesFree: Int {
        guard let format = renderFormat else { return 0 }
        return renderRing.availableToWrite / format.sampleFormat.bytesPerSample
    }
    /// Samples to play that the render side has not taken yet.
    public var renderSamplesQueued: Int {
        guard let format = renderFormat else { return 0 }
        return renderRing.availableToRead / format.sampleFormat.bytesPerSample
    }

    /// Captured samples dropped because the application did not read them in time (the ring was
    /// full): the bus-level overrun count.
    public var droppedCaptureSamples: Int { overflowSamples.load(ordering: .relaxed) }
    /// Samples the render side wanted but the application had not written (played as silence,
    /// or left to the device as an underrun): the bus-level underrun count.
    public var missingRenderSamples: Int { underflowSamples.load(ordering: .relaxed) }

    // MARK: Device side (the audio threads; custom drivers may call these too)

    /// Capture side: stores captured interleaved samples; returns how many fit (the rest are
    /// dropped and counted in ``droppedCaptureSamples``).
    @discardableResult
    package func writeCaptureData(_ samples: UnsafeBufferPointer<Int16>) -> Int {
        defer { wakeCaptureWaiter() }
        anchorCaptureNow(samples: samples.count)
        return write(captureRing, format: captureFormat, samples.baseAddress.map(UnsafeRawPointer.init), .s16LE, count: samples.count, counting: true)
    }

    /// Capture side: stores captured interleaved float samples; see
    /// ``writeCaptureData(_:)-(UnsafeBufferPointer<Int16>)``.
    @discardableResult
    package func writeCaptureData(_ samples: UnsafeBufferPointer<Float>) -> Int {
        defer { wakeCaptureWaiter() }
        anchorCaptureNow(samples: samples.count)
        return write(captureRing, format: captureFormat, samples.baseAddress.map(UnsafeRawPointer.init), .floatLE, count: samples.count, counting: true)
    }

    /// Render side: takes up to `buffer.count` samples to play; returns how many it got (a short
    /// count is counted in ``missingRenderSamples``).
    @discardableResult
    package func readRenderData(into buffer: UnsafeMutableBufferPointer<Int16>) -> Int {
        read(renderRing, format: renderFormat, buffer.baseAddress.map(UnsafeMutableRawPointer.init), .s16LE, count: buffer.count, counting: true)
    }

    /// Render side: takes up to `buffer.count` float samples to play; see
    /// ``readRenderData(into:)-(UnsafeMutableBufferPointer<Int16>)``.
    @discardableResult
    package func readRenderData(into buffer: UnsafeMutableBufferPointer<Float>) -> Int {
        read(renderRing, format: renderFormat, buffer.baseAddress.map(UnsafeMutableRawPointer.init), .floatLE, count: buffer.count, counting: true)
    }

    /// The drivers' own path: raw frames in the stream's format, the first recorded at `time`
    /// (monotonic nanoseconds: the voice processing's alignment); `afterGap`: the device lost
    /// frames before these (an overrun, a restart).
    func writeCaptureBytes(_ source: UnsafeRawPointer, count: Int, frameBytes: Int, sampleBytes: Int, time: Int64, afterGap: Bool = false) {
        if let session = voice.session {
            session.processCapture(source, bytes: count, time: time, afterGap: afterGap) { processed, bytes in
                storeCaptureBytes(processed, count: bytes, frameBytes: frameBytes, sampleBytes: sampleBytes)
            }
            // What the processing gave out so far ends where the input ends (its block delay,
            // at most 10 ms, is not taken off).
            let rate = captureSampleRate
            if rate > 0 {
                captureTime.store(position: captureRing.bytesWritten, time: time + Int64(count / frameBytes) * 1_000_000_000 / Int64(rate))
            }
        } else {
            captureTime.store(position: captureRing.bytesWritten, time: time)
            storeCaptureBytes(source, count: count, frameBytes: frameBytes, sampleBytes: sampleBytes)
        }
    }

    /// The capture format's rate, straight from its code (no `AudioFormat` made: decoding one
    /// reads `SampleFormat.allCases`, an allocation in debug builds, on the audio thread); 0 unset.
    private var captureSampleRate: Int {
        let code = captureFormatCode.load(ordering: .acquiring)
        return code >> 63 == 1 ? Int(code & 0xffff_ffff) : 0
    }

    /// The public write path, which has no device time: the `samples` handed over now end now.
    private func anchorCaptureNow(samples: Int) {
        guard let format = captureFormat, format.sampleRate > 0, format.channels > 0 else { return }
        captureTime.store(position: captureRing.bytesWritten,
                          time: Int64(MonotonicClock.now()) - Int64(samples / format.channels) * 1_000_000_000 / Int64(format.sampleRate))
    }

    /// When the captured frame the application reads next was recorded (monotonic ns), from the
    /// capture side's last anchor; nil before anything was captured. The reader's side.
    func nextCaptureReadTime() -> Int64? {
        guard let format = captureFormat else { return nil }
        return captureTime.time(atPosition: captureRing.bytesRead, bytesPerSecond: format.bytesPerFrame * format.sampleRate)
    }

    private func storeCaptureBytes(_ source: UnsafeRawPointer, count: Int, frameBytes: Int, sampleBytes: Int) {
        let written = captureRing.write(source, count: count, granularity: frameBytes)
        if written < count { overflowSamples.add((count - written) / sampleBytes, ordering: .relaxed) }
        wakeCaptureWaiter()
    }

    /// After a capture write (and when a capture run ends): wakes the application thread blocked
    /// in `waitForCaptureData`, if one is. A fence and a flag load when none is (no system call);
    /// one futex wake when one is.
    func wakeCaptureWaiter() {
        // Orders the ring's new write position before the flag's load; the waiter orders its
        // flag store before its look at the ring the same way, so one of the two sees the other.
        atomicMemoryFence(ordering: .sequentiallyConsistent)
        if captureWaiting.load(ordering: .relaxed), captureWaiting.exchange(false, ordering: .acquiringAndReleasing) {
            captureArrived.signal()
        }
    }

    /// The drivers' own path: returns bytes read; a short read is counted as missing. The first
    /// frame is heard at `time` (monotonic nanoseconds: the voice processing's reference);
    /// `afterGap`: the device did not play all it was given before.
    func readRenderBytes(into destination: UnsafeMutableRawPointer, count: Int, frameBytes: Int, sampleBytes: Int, countShortfall: Bool,
                         time: Int64, afterGap: Bool = false) -> Int {
        let got = renderRing.read(into: destination, count: count, granularity: frameBytes)
        if got < count && countShortfall { underflowSamples.add((count - got) / sampleBytes, ordering: .relaxed) }
        if let session = voice.session {
            session.processRender(destination, bytes: got, time: time, afterGap: afterGap)
            // The silence played for what is missing is reference too.
            if got < count && countShortfall, let format = session.renderFormat {
                session.processRenderSilence(frames: (count - got) / frameBytes, time: time + Int64(got / frameBytes) * 1_000_000_000 / Int64(format.sampleRate))
            }
        }
        return got
    }

    /// The render thread, when a render run ended (stopped, switched, failed): what the device
    /// held and dropped was never heard, so the voice processing takes no reference from it.
    func renderRunEnded() {
        voice.session?.renderStopped(at: Int64(MonotonicClock.now()))
    }

    /// Counts samples the render side missed that `readRenderBytes` did not (a converting side);
    /// the silence played for them is heard from `time` (monotonic nanoseconds).
    func countMissingRender(samples: Int, time: Int64) {
        if samples > 0 { underflowSamples.add(samples, ordering: .relaxed) }
        if samples > 0, let session = voice.session, let format = session.renderFormat {
            session.processRenderSilence(frames: samples / format.channels, time: time)
        }
    }

    /// The render threads' period: fills `buffer` with up to `periodBytes` from the render ring
    /// and returns how many bytes to play. Short of a period, it pads with silence
    /// (`fillsSilence`, the shortfall counted) or returns what there is, 0 when starved. The
    /// period is heard from `time` (monotonic nanoseconds).
    func renderPeriod(into buffer: UnsafeMutableRawPointer, periodBytes: Int, format: AudioFormat, fillsSilence: Bool, time: Int64, afterGap: Bool) -> Int {
        let got = readRenderBytes(into: buffer, count: periodBytes, frameBytes: format.bytesPerFrame,
                                  sampleBytes: format.sampleFormat.bytesPerSample, countShortfall: fillsSilence, time: time, afterGap: afterGap)
        guard got < periodBytes, fillsSilence else { return got }
        (buffer + got).initializeMemory(as: UInt8.self, repeating: 0, count: periodBytes - got)
        return periodBytes
    }

    // MARK: Application side

    /// Application: takes up to `buffer.count` captured samples (whole frames); returns how many.
    @discardableResult
    public func readCaptureData(into buffer: UnsafeMutableBufferPointer<Int16>) -> Int {
        read(captureRing, format: captureFormat, buffer.baseAddress.map(UnsafeMutableRawPointer.init), .s16LE, count: buffer.count, counting: false)
    }

    /// Application: takes up to `buffer.count` captured samples as floats; returns how many.
    @discardableResult
    public func readCaptureData(into buffer: UnsafeMutableBufferPointer<Float>) -> Int {
        read(captureRing, format: captureFormat, buffer.baseAddress.map(UnsafeMutableRawPointer.init), .floatLE, count: buffer.count, counting: false)
    }

    /// Application: blocks the calling thread until at least `samples` captured samples are
    /// waiting (pass 1 for "anything new"), or `timeout` passes; returns whether they are. The
    /// thread sleeps until the capture side writes (it wakes once per delivered period, where a
    /// polling loop would wake on its own schedule), so a reading thread costs one wake-up per
    /// period. One thread at a time, the capture direction's reader; not from async code (it
    /// blocks the thread: use ``AudioDriver/capturedChunks(frames:)`` there).
    ///
    /// ```swift
    /// while driver.isCapturing {
    ///     guard driver.bus.waitForCaptureData(samples: 1, timeout: .milliseconds(100)) else { continue }
    ///     let got = driver.bus.readCaptureData(into: buffer)
    ///     …
    /// }
    /// ```
    public func waitForCaptureData(samples: Int, timeout: Duration) -> Bool {
        // The deadline is read from the clock only when the thread is about to sleep.
        var deadline: DispatchTime?
        while captureSamplesAvailable < samples {
            captureWaiting.store(true, ordering: .relaxed)
            atomicMemoryFence(ordering: .sequentiallyConsistent)
            if captureSamplesAvailable >= samples {
                withdrawCaptureWait()
                return true
            }
            if deadline == nil {
                deadline = DispatchTime.now() + .nanoseconds(Int(timeout.nanosecondCount))
            }
            if captureArrived.wait(timeout: deadline!) == .timedOut {
                withdrawCaptureWait()
                return captureSamplesAvailable >= samples
            }
        }
        return true
    }

    /// Takes back a wait the capture side may have answered meanwhile: if it already cleared the
    /// flag, its signal is on the way and is consumed here, so the next wait does not return early.
    private func withdrawCaptureWait() {
        if !captureWaiting.exchange(false, ordering: .acquiringAndReleasing) { captureArrived.wait() }
    }

    /// Application: queues samples to play (whole frames); returns how many fit.
    @discardableResult
    public func writeRenderData(_ samples: UnsafeBufferPointer<Int16>) -> Int {
        write(renderRing, format: renderFormat, samples.baseAddress.map(UnsafeRawPointer.init), .s16LE, count: samples.count, counting: false)
    }

    /// Application: queues float samples to play; returns how many fit.
    @discardableResult
    public func writeRenderData(_ samples: UnsafeBufferPointer<Float>) -> Int {
        write(renderRing, format: renderFormat, samples.baseAddress.map(UnsafeRawPointer.init), .floatLE, count: samples.count, counting: false)
    }

    // MARK: Conversion through the rings

    private func write(_ ring: AudioRingBuffer, format: AudioFormat?, _ source: UnsafeRawPointer?, _ sourceFormat: SampleFormat,
                       count: Int, counting: Bool) -> Int {
        guard let format, let source, count > 0 else { return 0 }
        let ringBytes = format.sampleFormat.bytesPerSample, inBytes = sourceFormat.bytesPerSample
        let written = ring.write(count: count * ringBytes, granularity: format.bytesPerFrame) { region, offset in
            SampleConversion.convert(source + offset / ringBytes * inBytes, sourceFormat,
                                     to: region.baseAddress!, format.sampleFormat, count: region.count / ringBytes)
        } / ringBytes
        if counting && written < count { overflowSamples.add(count - written, ordering: .relaxed) }
        return written
    }

    private func read(_ ring: AudioRingBuffer, format: AudioFormat?, _ destination: UnsafeMutableRawPointer?, _ destinationFormat: SampleFormat,
                      count: Int, counting: Bool) -> Int {
        guard let format, let destination, count > 0 else { return 0 }
        let ringBytes = format.sampleFormat.bytesPerSample, outBytes = destinationFormat.bytesPerSample
        let got = ring.read(count: count * ringBytes, granularity: format.bytesPerFrame) { region, offset in
            SampleConversion.convert(region.baseAddress!, format.sampleFormat,
                                     to: destination + offset / ringBytes * outBytes, destinationFormat, count: region.count / ringBytes)
        } / ringBytes
        if counting && got < count { underflowSamples.add(count - got, ordering: .relaxed) }
        return got
    }

    private static func encode(_ format: AudioFormat) -> UInt64 {
        let kind = UInt64(SampleFormat.allCases.firstIndex(of: format.sampleFormat)!)
        return 1 << 63 | kind << 48 | UInt64(format.channels & 0xffff) << 32 | UInt64(UInt32(truncatingIfNeeded: format.sampleRate))
    }

    private static func decode(_ code: UInt64) -> AudioFormat? {
        guard code >> 63 == 1 else { return nil }
        return AudioFormat(sampleRate: Int(code & 0xffff_ffff), channels: Int((code >> 32) & 0xffff),
                           sampleFormat: SampleFormat.allCases[Int((code >> 48) & 0xff)])
    }
}
