/// The echo reference for a canceller that takes the played and the captured block together
/// (speexdsp): the render thread appends what it hands to the device, the capture thread takes
/// the block that was handed `delayFrames` before the capture block, as WebRTC's APM does with
/// `set_stream_delay_ms`. Lock-free (one `AudioRingBuffer`), allocation-free once made.
final class EchoReferenceLine: @unchecked Sendable {
    private let ring: AudioRingBuffer
    private let blockSamples: Int
    private let channels: Int

    /// A line for blocks of `blockFrames` frames of `channels` 16-bit samples, holding up to
    /// `maximumDelayFrames` of delay.
    init(blockFrames: Int, channels: Int, maximumDelayFrames: Int) {
        self.channels = channels
        blockSamples = blockFrames * channels
        ring = AudioRingBuffer(minimumCapacity: (maximumDelayFrames + 4 * blockFrames) * channels * 2)
    }

    /// Render thread: appends one played block (dropped when the capture side has stopped taking them).
    func append(_ block: UnsafePointer<Int16>) {
        ring.write(block, count: blockSamples * 2, granularity: blockSamples * 2)
    }

    /// Capture thread: fills `reference` with the block played `delayFrames` before the capture
    /// block now processed; silence for what was not played (yet, or ever).
    func take(into reference: UnsafeMutablePointer<Int16>, delayFrames: Int) {
        let frameBytes = channels * 2
        let wanted = (blockSamples + max(0, delayFrames) * channels) * 2
        let maximumWanted = ring.capacity - blockSamples * 2
        let fill = ring.availableToRead
        if fill > min(wanted, maximumWanted) {
            ring.read(count: fill - min(wanted, maximumWanted), granularity: frameBytes) { _, _ in }
        }
        let missing = max(0, min(wanted, maximumWanted) - fill)
        let silent = min(blockSamples * 2, missing - missing % frameBytes)
        if silent > 0 { UnsafeMutableRawPointer(reference).initializeMemory(as: UInt8.self, repeating: 0, count: silent) }
        let got = ring.read(into: UnsafeMutableRawPointer(reference) + silent, count: blockSamples * 2 - silent, granularity: frameBytes)
        let short = blockSamples * 2 - silent - got
        if short > 0 { (UnsafeMutableRawPointer(reference) + silent + got).initializeMemory(as: UInt8.self, repeating: 0, count: short) }
    }
}
