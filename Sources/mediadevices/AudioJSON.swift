import MediaDevices
import MediaDevicesCommandLine

/// An audio device in `list --json` (under `audio.inputs` / `audio.outputs`).
struct AudioDeviceJSON: Encodable {
    let index: Int
    let name: String
    let description: String
    let uniqueID: String
    let direction: String
    let isDefault: Bool
    let backend: String
    let card: Int?
    let device: Int?
    /// `AudioDevice.group` (`null`: none).
    let group: String?
    init(index: Int, _ device: AudioDevice) {
        self.index = index
        name = device.name
        description = device.description
        uniqueID = device.uniqueID
        direction = device.direction.rawValue
        isDefault = device.isDefault
        backend = device.backend.rawValue
        card = device.card
        self.device = device.deviceNumber
        group = device.group
    }
}

/// The `audio` section of `list --json`.
struct AudioListJSON: Encodable {
    let inputs: [AudioDeviceJSON]
    let outputs: [AudioDeviceJSON]
    let skipped: [ErrorJSON.Body]
}

/// An audio format in JSON.
struct AudioFormatJSON: Encodable {
    let sampleRate: Int
    let channels: Int
    let sampleFormat: String
    init(_ format: AudioFormat) {
        sampleRate = format.sampleRate
        channels = format.channels
        sampleFormat = format.sampleFormat.rawValue
    }
}

/// A closed range in JSON.
struct RangeJSON: Encodable {
    let min: Int
    let max: Int
    init(_ range: ClosedRange<Int>) { min = range.lowerBound; max = range.upperBound }
}

/// One direction's capabilities in `formats --json` (under `audioFormats`).
struct AudioCapabilitiesJSON: Encodable {
    let direction: String
    let backend: String
    let sampleRates: RangeJSON?
    let standardSampleRates: [Int]?
    let channels: RangeJSON?
    let sampleFormats: [String]?
    let nativeFormat: AudioFormatJSON?
    let error: ErrorJSON.Body?
    init(device: AudioDevice, _ result: Result<AudioFormatCapabilities, MediaDevicesError>) {
        direction = device.direction.rawValue
        backend = device.backend.rawValue
        switch result {
        case .success(let caps):
            sampleRates = RangeJSON(caps.sampleRates)
            standardSampleRates = caps.standardSampleRates
            channels = RangeJSON(caps.channels)
            sampleFormats = caps.sampleFormats.map(\.rawValue)
            nativeFormat = caps.nativeFormat.map(AudioFormatJSON.init)
            error = nil
        case .failure(let failure):
            sampleRates = nil; standardSampleRates = nil; channels = nil; sampleFormats = nil; nativeFormat = nil
            error = ErrorJSON(failure).error
        }
    }
}

/// What `record --json` and `play --json` print.
struct AudioRunJSON: Encodable {
    let device: String
    let direction: String
    /// The file's format: the one asked for, which the bus carries.
    let format: AudioFormatJSON
    /// The format the device ran at (differs from `format` when the audio thread converted).
    let deviceFormat: AudioFormatJSON
    let periodFrames: Int
    let bufferFrames: Int
    let file: String
    let frames: Int
    let seconds: Double
    let statistics: AudioStatistics

    /// What `side` (started and stopped on `device`) did, `frames` of it in `file`.
    init(_ side: AudioDriverSide, device: AudioDevice, file: String, frames: Int) {
        let format = side.format!
        self.device = device.uniqueID
        direction = device.direction.rawValue
        self.format = AudioFormatJSON(format)
        deviceFormat = AudioFormatJSON(side.deviceFormat ?? format)
        periodFrames = side.periodFrames ?? 0
        bufferFrames = side.bufferFrames ?? 0
        self.file = file
        self.frames = frames
        seconds = format.duration(frames: frames).inSeconds
        statistics = side.statistics
    }
}

/// What `duplex --json` prints: the processed capture (as `record --json`), what was played
/// (as `play --json`), and the voice processing (`null` with `--voice-processing none`).
struct DuplexRunJSON: Encodable {
    let capture: AudioRunJSON
    let render: AudioRunJSON
    /// Seconds from the bus to the speaker, as the driver estimates it.
    let renderDelay: Double
    let voiceProcessing: VoiceProcessingJSON?

    /// The voice processor's setting and what it measured.
    struct VoiceProcessingJSON: Encodable {
        /// The processors, `echo`, `noise`, `gain`.
        let processing: [String]
        /// `webrtc` or `speexdsp`.
        let library: String
        /// Seconds the processing delays the capture.
        let latency: Double
        let processedBlocks: Int
        /// Echo return loss and its enhancement (dB), and the echo delay found (seconds), when
        /// the echo canceller runs.
        let echoReturnLoss: Double?
        let echoReturnLossEnhancement: Double?
        let echoDelay: Double?
    }
}
