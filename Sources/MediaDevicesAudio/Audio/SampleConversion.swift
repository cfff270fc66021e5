import MediaDevicesCore
/// Converts interleaved samples between the sample formats, as a sound card's plug layer does:
/// integers scale to -1...1 floats by 2^15 or 2^31, floats are clipped and rounded back (NaN
/// becomes 0).
/// Allocation-free: audio threads and the bus call it on ring regions.
package enum SampleConversion {
    /// Converts `count` samples at `source` in `from` to `to` at `destination`.
    package static func convert(_ source: UnsafeRawPointer, _ from: SampleFormat,
                               to destination: UnsafeMutableRawPointer, _ to: SampleFormat, count: Int) {
        if from == to {
            destination.copyMemory(from: source, byteCount: count * from.bytesPerSample)
            return
        }
        switch (from, to) {
        case (.s16LE, .floatLE):
            let s = source.assumingMemoryBound(to: Int16.self), d = destination.assumingMemoryBound(to: Float.self)
            for i in 0..<count { d[i] = Float(s[i]) * (1 / 32768) }
        case (.floatLE, .s16LE):
            let s = source.assumingMemoryBound(to: Float.self), d = destination.assumingMemoryBound(to: Int16.self)
            for i in 0..<count { d[i] = int16(s[i]) }
        case (.s32LE, .floatLE):
            let s = source.assumingMemoryBound(to: Int32.self), d = destination.assumingMemoryBound(to: Float.self)
            for i in 0..<count { d[i] = Float(Double(s[i]) * (1 / 2147483648.0)) }
        case (.floatLE, .s32LE):
            let s = source.assumingMemoryBound(to: Float.self), d = destination.assumingMemoryBound(to: Int32.self)
            for i in 0..<count { d[i] = int32(s[i]) }
        case (.s16LE, .s32LE):
            let s = source.assumingMemoryBound(to: Int16.self), d = destination.assumingMemoryBound(to: Int32.self)
            for i in 0..<count { d[i] = Int32(s[i]) << 16 }
        case (.s32LE, .s16LE):
            let s = source.assumingMemoryBound(to: Int32.self), d = destination.assumingMemoryBound(to: Int16.self)
            for i in 0..<count { d[i] = Int16(truncatingIfNeeded: s[i] >> 16) }
        default:
            break
        }
    }

    /// A float sample as a 16-bit integer, clipped and rounded.
    @inline(__always)
    package static func int16(_ value: Float) -> Int16 {
        guard !value.isNaN else { return 0 }
        // Clip, then round half away from zero by truncating ±0.5 (cvttss2si: no libm call).
        let scaled = Swift.min(Swift.max(value * 32768, -32768), 32767)
        return Int16(scaled + (scaled < 0 ? -0.5 : 0.5))
    }

    /// A float sample as a 32-bit integer, clipped and rounded.
    @inline(__always)
    package static func int32(_ value: Float) -> Int32 {
        guard !value.isNaN else { return 0 }
        let scaled = Swift.min(Swift.max(Double(value) * 2147483648.0, -2147483648.0), 2147483647.0)
        return Int32(scaled + (scaled < 0 ? -0.5 : 0.5))
    }
}
