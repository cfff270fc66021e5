import MediaDevicesCore
import Foundation
import Glibc

/// Writes a RIFF/WAVE file: PCM 16- or 32-bit (format tag 1) or IEEE float (format tag 3),
/// interleaved, little-endian. The sizes in the header are patched when the file is closed.
public final class WAVWriter {
    /// The file's path.
    public let path: String
    /// The samples' format.
    public let format: AudioFormat
    /// Frames written so far.
    public private(set) var framesWritten = 0
    private var file: AtomicFile?

    /// Starts a file for `path` and writes a header for `format`. The file appears at `path`,
    /// whole, when ``close()`` returns (`AtomicFile`: written beside it and renamed, mode 0644 less
    /// the umask); a failed write removes what was written. A missing or read-only folder is a
    /// clear ``/MediaDevicesCore/MediaDevicesError`` here.
    public init(path: String, format: AudioFormat) throws(MediaDevicesError) {
        self.path = path
        self.format = format
        file = try AtomicFile(path: path, operation: "write WAV")
        try writeHeader(dataBytes: 0)
    }

    deinit { try? close() }

    private func writeHeader(dataBytes: Int) throws(MediaDevicesError) {
        var header: [UInt8] = []
        func u32(_ value: Int) { withUnsafeBytes(of: UInt32(truncatingIfNeeded: value).littleEndian) { header.append(contentsOf: $0) } }
        func u16(_ value: Int) { withUnsafeBytes(of: UInt16(truncatingIfNeeded: value).littleEndian) { header.append(contentsOf: $0) } }
        header.append(contentsOf: Array("RIFF".utf8)); u32(36 + dataBytes)
        header.append(contentsOf: Array("WAVEfmt ".utf8)); u32(16)
        u16(format.sampleFormat == .floatLE ? 3 : 1); u16(format.channels); u32(format.sampleRate)
        u32(format.sampleRate * format.bytesPerFrame); u16(format.bytesPerFrame); u16(format.sampleFormat.bytesPerSample * 8)
        header.append(contentsOf: Array("data".utf8)); u32(dataBytes)
        try header.withUnsafeBufferPointer { (buffer) throws(MediaDevicesError) in try write(UnsafeRawBufferPointer(buffer)) }
    }

    private func write(_ bytes: UnsafeRawBufferPointer) throws(MediaDevicesError) {
        guard let file else { throw MediaDevicesError(.invalidState, device: nil, operation: "write \(path)", detail: "The WAV file is closed") }
        try file.write(bytes)
    }

    /// Appends interleaved samples already in ``format`` (whole frames).
    public func write(raw bytes: UnsafeRawBufferPointer) throws(MediaDevicesError) {
        try write(bytes)
        framesWritten += bytes.count / format.bytesPerFrame
    }

    /// Appends interleaved float samples, converting to the file's sample format.
    public func write(_ samples: [Float]) throws(MediaDevicesError) {
        guard !samples.isEmpty else { return }
        var converted = [UInt8](repeating: 0, count: samples.count * format.sampleFormat.bytesPerSample)
        samples.withUnsafeBytes { source in
            converted.withUnsafeMutableBytes { SampleConversion.convert(source.baseAddress!, .floatLE, to: $0.baseAddress!, format.sampleFormat, count: samples.count) }
        }
        try converted.withUnsafeBufferPointer { (buffer) throws(MediaDevicesError) in try write(raw: UnsafeRawBufferPointer(buffer)) }
    }

    /// Patches the header's sizes, closes the file and moves it to ``path``. After a failed
    /// write nothing is left at ``path`` (or what was there before stays).
    public func close() throws(MediaDevicesError) {
        guard let file else { return }
        defer { file.discard(); self.file = nil }
        guard let stream = file.stream else { return }  // a write failed: the file is gone
        let dataBytes = framesWritten * format.bytesPerFrame
        if dataBytes % 2 == 1 { try [UInt8(0)].withUnsafeBufferPointer { (pad) throws(MediaDevicesError) in try write(UnsafeRawBufferPointer(pad)) } }
        guard fseek(stream, 0, SEEK_SET) == 0 else { throw MediaDevicesError.fromFileErrno(errno, path: path, operation: "fseek") }
        try writeHeader(dataBytes: dataBytes)
        try file.commit()
    }
}

/// A RIFF/WAVE file read into memory: PCM 16/32-bit, IEEE float, and the same inside
/// WAVE_FORMAT_EXTENSIBLE.
package struct WAVFile: Sendable {
    /// The samples' format.
    package let format: AudioFormat
    /// The interleaved sample bytes, in ``format``.
    package let data: [UInt8]

    /// Frames in the file.
    package var frames: Int { data.count / format.bytesPerFrame }

    /// Reads `path`; throws ``/MediaDevicesCore/MediaDevicesError/Code/unsupportedFormat`` for
    /// other encodings, ``/MediaDevicesCore/MediaDevicesError/Code/io`` for broken files.
    package init(path: String) throws(MediaDevicesError) {
        guard let contents = FileManager.default.contents(atPath: path) else {
            throw MediaDevicesError(.notFound, device: nil, operation: "read \(path)", detail: "Cannot read \(path); check the path and its permissions")
        }
        try self.init(bytes: [UInt8](contents), name: path)
    }

    /// Parses WAV bytes (`name` appears in errors).
    package init(bytes: [UInt8], name: String = "WAV data") throws(MediaDevicesError) {
        func broken(_ why: String) -> MediaDevicesError {
            MediaDevicesError(.io, device: nil, operation: "read \(name)", detail: "Not a valid WAV file: \(why)")
        }
        func u32(_ at: Int) -> Int { Int(bytes[at]) | Int(bytes[at + 1]) << 8 | Int(bytes[at + 2]) << 16 | Int(bytes[at + 3]) << 24 }
        func u16(_ at: Int) -> Int { Int(bytes[at]) | Int(bytes[at + 1]) << 8 }
        guard bytes.count >= 12, bytes[0..<4].elementsEqual("RIFF".utf8), bytes[8..<12].elementsEqual("WAVE".utf8) else {
            throw broken("no RIFF/WAVE header")
        }
        var offset = 12
        var format: AudioFormat?
        var data: [UInt8]?
        while offset + 8 <= bytes.count {
            let id = String(decoding: bytes[offset..<offset + 4], as: UTF8.self)
            let size = u32(offset + 4)
            let body = offset + 8
            guard body + size <= bytes.count || id == "data" else { throw broken("chunk \(id) runs past the end") }
            if id == "fmt " {
                guard size >= 16 else { throw broken("fmt chunk too short") }
                var tag = u16(body)
                let channels = u16(body + 2), rate = u32(body + 4), bits = u16(body + 14)
                if tag == 0xFFFE, size >= 26 { tag = u16(body + 24) }  // extensible: the sub-format GUID's first bytes
                let sampleFormat: SampleFormat
                switch (tag, bits) {
                case (1, 16): sampleFormat = .s16LE
                case (1, 32): sampleFormat = .s32LE
                case (3, 32): sampleFormat = .floatLE
                default:
                    throw MediaDevicesError(.unsupportedFormat, device: nil, operation: "read \(name)",
                                            detail: "WAV encoding \(tag) with \(bits)-bit samples is not supported; use 16- or 32-bit PCM or 32-bit float (e.g. `ffmpeg -i IN -c:a pcm_s16le OUT.wav`)")
                }
                guard channels > 0, rate > 0 else { throw broken("zero channels or rate") }
                format = AudioFormat(sampleRate: rate, channels: channels, sampleFormat: sampleFormat)
            } else if id == "data" {
                let end = min(bytes.count, body + size)
                data = Array(bytes[body..<end])
            }
            offset = body + size + (size & 1)
        }
        guard let format else { throw broken("no fmt chunk") }
        guard let data else { throw broken("no data chunk") }
        self.format = format
        self.data = Array(data.prefix(data.count - data.count % format.bytesPerFrame))
    }

    /// The samples as interleaved floats.
    package func floatSamples() -> [Float] {
        let count = data.count / format.sampleFormat.bytesPerSample
        guard count > 0 else { return [] }
        var result = [Float](repeating: 0, count: count)
        data.withUnsafeBytes { source in
            result.withUnsafeMutableBytes { SampleConversion.convert(source.baseAddress!, format.sampleFormat, to: $0.baseAddress!, .floatLE, count: count) }
        }
        return result
    }
}
