import MediaDevicesCore
/// Changes the channel count of interleaved float frames, allocation-free:
///
/// - to mono: the average of all channels (stereo → mono is (L + R) / 2, so a tone on both
///   channels keeps its level);
/// - from mono: the one channel copied to every channel;
/// - any other pair (4 → 2, 2 → 6, 5.1 → stereo, …): channel i goes to channel i, for i below
///   the smaller count; extra output channels are silent and extra input channels are dropped.
///   No surround downmix matrix: MediaDevices does not know the devices' channel positions.
package enum ChannelMixer {
    /// Mixes `frames` frames of `from` channels at `source` into `to` channels at `destination`
    /// (which must not overlap `source` unless the counts are equal).
    package static func mix(_ source: UnsafePointer<Float>, channels from: Int,
                           into destination: UnsafeMutablePointer<Float>, channels to: Int, frames: Int) {
        if from == to {
            destination.update(from: source, count: frames * from)
        } else if to == 1 {
            let scale = 1 / Float(from)
            for frame in 0..<frames {
                var sum: Float = 0
                let base = frame * from
                for channel in 0..<from { sum += source[base + channel] }
                destination[frame] = sum * scale
            }
        } else if from == 1 {
            for frame in 0..<frames {
                let value = source[frame], base = frame * to
                for channel in 0..<to { destination[base + channel] = value }
            }
        } else {
            let common = min(from, to)
            for frame in 0..<frames {
                let input = frame * from, output = frame * to
                for channel in 0..<common { destination[output + channel] = source[input + channel] }
                for channel in common..<to { destination[output + channel] = 0 }
            }
        }
    }
}
