import MediaDevicesCore
/// How a side asks for its stream: the format, the period (frames moved per wake-up) and the
/// buffer (in periods), and what the render side does when the application falls behind.
public struct AudioStreamOptions: Sendable, Hashable {
    /// Frames per period (ALSA `period_size`, Pulse `minreq`/`fragsize`). The device may adjust it.
    public var periodFrames: Int
    /// Periods in the device buffer (ALSA `buffer_size` / `period_size`, Pulse `tlength`).
    public var periods: Int
    /// Render side: when the bus has less than a period, play silence for the rest (true), or
    /// write nothing and let the device underrun (false; ALSA recovers and counts the xrun).
    public var fillsSilenceOnUnderrun: Bool
    /// When the device does not take the asked format exactly (another rate, channel count or
    /// sample format), run it at the nearest it takes and convert on the audio thread, so the
    /// bus carries the asked format (true, the default); or let the bus carry the device's
    /// format, as adjusted (false: the rate moved to the nearest, other formats refused).
    public var convertsFormat: Bool
    /// The library that converts rates when ``convertsFormat`` needs it (default speexdsp, for
    /// its 1 ms delay; see ``AudioResamplerLibrary`` for the comparison).
    public var resampler: AudioResamplerLibrary
    /// Sound-server streams (PulseAudio, and PipeWire through pipewire-pulse): how long
    /// initializing a side (``AudioDriver/initializeCapture(device:format:options:)-igqs``) waits for the server to accept
    /// the client and then the stream before it fails with
    /// ``/MediaDevicesCore/MediaDevicesError/Code/timeout`` (default 5 s). ALSA devices ignore it.
    /// Raise it where the server may be slow to answer: a heavily loaded or emulated machine, or a
    /// server still starting.
    public var serverTimeout: Duration

    /// Creates options; the defaults are 512-frame periods, 4 of them, filling with silence,
    /// converting to the asked format with speexdsp, and a 5 s sound-server timeout.
    public init(periodFrames: Int = 512, periods: Int = 4, fillsSilenceOnUnderrun: Bool = true,
                convertsFormat: Bool = true, resampler: AudioResamplerLibrary = .speexDSP, serverTimeout: Duration = .seconds(5)) {
        self.periodFrames = periodFrames
        self.periods = periods
        self.fillsSilenceOnUnderrun = fillsSilenceOnUnderrun
        self.convertsFormat = convertsFormat
        self.resampler = resampler
        self.serverTimeout = serverTimeout
    }
}

/// One open stream of a backend (ALSA PCM or PulseAudio stream), configured when a side
/// initializes and run by the side's own thread.
protocol AudioBackendStream: AnyObject, Sendable {
    /// The format the device runs at.
    var format: AudioFormat { get }
    /// The period the device chose, in frames.
    var periodFrames: Int { get }
    /// The buffer the device chose, in frames.
    var bufferFrames: Int { get }
    /// The audio thread: moves periods between the device and the bus (through `port`, which
    /// converts when the bus's format is not the device's) until `shouldStop()` or a wake-up,
    /// or until the device fails; returns the failure.
    func run(port: AudioBusPort, counters: AudioCounters, wake: WakeUpEvent, observer: AudioPeriodObserver?, shouldStop: () -> Bool) -> MediaDevicesError?
    /// Closes the device (after the thread has ended).
    func close()
}

/// Called on the thread that moved the period, after each period, with the number of periods
/// so far: the side's audio thread (ALSA), or the connection's own libpulse thread (PulseAudio
/// and PipeWire through pipewire-pulse, where data moves in libpulse's callbacks). It must not
/// allocate, lock or block (tests use it to count the thread's heap allocations). Calls to the
/// driver from it (``AudioDriver/stopCapture()``, ``AudioDriver/startCapture()``) behave as from the audio thread.
public typealias AudioPeriodObserver = @Sendable (_ periods: Int) -> Void

/// Told when a backend's own work for a period begins (true) and ends (false); see
/// `AudioDriverSide.periodWorkObserver`.
package typealias AudioWorkObserver = @Sendable (_ begins: Bool) -> Void
