import MediaDevices

/// What an audio-and-video capture measured of its two clocks: the offset between the streams
/// at the start and how the audio's sample clock drifted from the monotonic clock over the run.
package struct AVSyncFigures: Sendable, Encodable {
    /// The first video frame's capture time.
    package var firstVideo: MonotonicInstant?
    /// The first audio sample's recording time (the first chunk's timestamp).
    package var firstAudio: MonotonicInstant?
    /// The last chunk's timestamp.
    package var lastAudio: MonotonicInstant?
    /// Audio frames received before the last chunk (what the sample clock says passed from the
    /// first chunk to the last).
    package var audioFramesBeforeLast = 0
    /// Audio frames received in all.
    package var audioFrames = 0
    /// The audio sample rate.
    package var sampleRate = 0
    /// Video frames written.
    package var videoFrames = 0
    /// Timestamps moved forward to keep a stream's increasing (a device's time stepping back).
    package var adjustedTimestamps = 0

    package init() {}

    /// Counts a chunk received.
    package mutating func received(_ chunk: AudioChunk) {
        if firstAudio == nil { firstAudio = chunk.timestamp }
        sampleRate = chunk.format.sampleRate
        audioFramesBeforeLast = audioFrames
        lastAudio = chunk.timestamp
        audioFrames += chunk.frames
    }

    /// First video frame's time less the first audio sample's, in milliseconds: positive when
    /// the video starts later. Nil without both.
    package var startOffsetMilliseconds: Double? {
        guard let firstVideo, let firstAudio else { return nil }
        return (Double(firstVideo.nanoseconds) - Double(firstAudio.nanoseconds)) / 1e6
    }

    /// How much faster the audio's sample clock ran than the monotonic clock, in milliseconds
    /// per minute: (samples received ÷ rate − monotonic time elapsed) ÷ elapsed, from the first
    /// chunk's timestamp to the last's. Nil with less than a second of audio.
    package var driftMillisecondsPerMinute: Double? {
        guard let firstAudio, let lastAudio, sampleRate > 0 else { return nil }
        let elapsed = Double(lastAudio.nanoseconds) - Double(firstAudio.nanoseconds)
        guard elapsed >= 1e9 else { return nil }
        let sampled = Double(audioFramesBeforeLast) * 1e9 / Double(sampleRate)
        return (sampled - elapsed) / elapsed * 60_000
    }

    private enum CodingKeys: String, CodingKey {
        case startOffsetMilliseconds, driftMillisecondsPerMinute, videoFrames, audioFrames, sampleRate, adjustedTimestamps
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(startOffsetMilliseconds, forKey: .startOffsetMilliseconds)
        try container.encode(driftMillisecondsPerMinute, forKey: .driftMillisecondsPerMinute)
        try container.encode(videoFrames, forKey: .videoFrames)
        try container.encode(audioFrames, forKey: .audioFrames)
        try container.encode(sampleRate, forKey: .sampleRate)
        try container.encode(adjustedTimestamps, forKey: .adjustedTimestamps)
    }
}
