import CAVFormat
import Foundation
import MediaDevices
import MediaDevicesAudio
import MediaDevicesVideo

/// Writes a camera's frames and a microphone's samples into one file with libavformat, as they
/// come (no encoding): Matroska (`.mkv`) or NUT (`.nut`), video as rawvideo in the camera's pixel
/// format or its MJPEG frames passed through, audio as PCM (s16le, s32le or f32le).
///
/// Timestamps are the capture's: a frame's ``VideoFrame/timestamp`` and a chunk's
/// ``AudioChunk/timestamp``, both less one ``start`` instant on the monotonic clock, so the two
/// streams line up as they were recorded and a dropped frame leaves a gap, not a shift. A
/// stream's timestamps are kept increasing (a step back is moved just after the last one and
/// counted in ``AVSyncFigures/adjustedTimestamps``). The file is written beside `path` and renamed
/// when ``close()`` succeeds; a failure removes it.
///
/// Thread-safe: the video and the audio side write from threads of their own. libavformat copies
/// each packet and keeps it until the other stream catches up (`av_interleaved_write_frame`):
/// a heap allocation per packet, in the tool, never in a library's capture path.
// @unchecked Sendable: every use of the libavformat context is under `lock`.
package final class AVFileMuxer: @unchecked Sendable {
    /// The file formats.
    package enum Container: String, Sendable {
        /// Matroska (`.mkv`).
        case matroska
        /// NUT (`.nut`), FFmpeg's own.
        case nut
    }

    /// The container a file name asks for (`.mkv`, `.nut`), nil for any other name.
    package static func container(for path: String) -> Container? {
        switch URL(fileURLWithPath: path).pathExtension.lowercased() {
        case "mkv": return .matroska
        case "nut": return .nut
        default: return nil
        }
    }

    /// The path the file appears at.
    package let path: String
    /// The instant both streams' timestamps count from.
    package let start: MonotonicInstant
    private let partialPath: String
    private let lock = NSLock()
    private var context: UnsafeMutablePointer<AVFormatContext>?
    private var packet: UnsafeMutablePointer<AVPacket>?
    private let videoFormat: VideoFormat
    private let audioFormat: AudioFormat?
    private var videoIndex: Int32 = -1, audioIndex: Int32 = -1
    private var videoTimeBase = AVRational(num: 1, den: 1_000_000_000)
    private var audioTimeBase = AVRational(num: 1, den: 1_000_000_000)
    private let frameNanoseconds: Int64
    private var lastVideoPTS: Int64 = .min, lastAudioPTS: Int64 = .min
    private var figures = AVSyncFigures()

    /// Starts a file of `container` at `path` with a video stream of `video` frames at
    /// `frameRate` and, when `audio` is given, an audio stream of `audio` samples; timestamps count
    /// from `start`. Throws `.unsupportedFormat` for a pixel format FFmpeg has no raw name for,
    /// `.io` when libavformat cannot make or open the file.
    package init(path: String, container: Container, video: VideoFormat, frameRate: FrameRate?, audio: AudioFormat?,
                 start: MonotonicInstant) throws(MediaDevicesError) {
        self.path = path
        self.start = start
        videoFormat = video
        audioFormat = audio
        let directory = (path as NSString).deletingLastPathComponent, name = (path as NSString).lastPathComponent
        partialPath = (directory.isEmpty ? "" : directory + "/") + "." + name + ".partial"
        let rate = frameRate?.framesPerSecond
        frameNanoseconds = rate.map { Int64($0.denominator) * 1_000_000_000 / Int64(max($0.numerator, 1)) } ?? 33_333_333
        try Self.loadFFmpeg(path: path)
        var made: UnsafeMutablePointer<AVFormatContext>?
        let status = cav_avformat_alloc_output_context2(&made, nil, container.rawValue, partialPath)
        guard status >= 0, let made else { throw Self.failure(status, path: path, operation: "avformat_alloc_output_context2") }
        context = made
        do throws(MediaDevicesError) {
            videoIndex = try Self.addVideoStream(made, format: video, frameRate: rate, path: path)
            if let audio { audioIndex = try Self.addAudioStream(made, format: audio, path: path) }
            let opened = cav_avio_open(&made.pointee.pb, partialPath, AVIO_FLAG_WRITE)
            guard opened >= 0 else { throw Self.failure(opened, path: path, operation: "avio_open") }
            let header = cav_avformat_write_header(made, nil)
            guard header >= 0 else { throw Self.failure(header, path: path, operation: "avformat_write_header") }
        } catch {
            release(removing: true)
            throw error
        }
        // The muxer may have chosen its own time bases (Matroska: 1 ms) while writing the header.
        videoTimeBase = made.pointee.streams[Int(videoIndex)]!.pointee.time_base
        if audioIndex >= 0 { audioTimeBase = made.pointee.streams[Int(audioIndex)]!.pointee.time_base }
        packet = cav_av_packet_alloc()
    }

    deinit { release(removing: true) }

    /// What the file holds so far: the streams' first instants, the audio the run received, and
    /// the timestamps kept increasing.
    package var syncFigures: AVSyncFigures { lock.withLock { figures } }

    /// Appends one video frame at its capture time.
    package func write(_ frame: VideoFrame) throws(MediaDevicesError) {
        var size = 0
        try FrameFileWriter.forEachRawSpan(of: frame) { (span) throws(MediaDevicesError) in size += span.count }
        lock.lock()
        defer { lock.unlock() }
        guard let context, let packet else { throw closedError() }
        guard cav_av_new_packet(packet, Int32(size)) >= 0 else { throw Self.failure(-ENOMEM, path: path, operation: "av_new_packet") }
        var offset = 0
        try FrameFileWriter.forEachRawSpan(of: frame) { (span) throws(MediaDevicesError) in
            if let base = span.baseAddress { (packet.pointee.data + offset).update(from: base.assumingMemoryBound(to: UInt8.self), count: span.count) }
            offset += span.count
        }
        let nanoseconds = Int64(bitPattern: frame.timestamp.nanoseconds &- start.nanoseconds)
        if figures.firstVideo == nil { figures.firstVideo = frame.timestamp }
        var pts = cav_av_rescale_q(nanoseconds, Self.nanosecond, videoTimeBase)
        if pts <= lastVideoPTS { pts = lastVideoPTS + 1; figures.adjustedTimestamps += 1 }
        lastVideoPTS = pts
        packet.pointee.flags |= AV_PKT_FLAG_KEY  // raw frames and JPEGs stand alone
        try send(packet, stream: videoIndex, pts: pts, duration: cav_av_rescale_q(frameNanoseconds, Self.nanosecond, videoTimeBase), context: context)
        figures.videoFrames += 1
    }

    /// Appends interleaved float samples (`chunk.samples`, of ``AudioChunk/format``'s channels)
    /// recorded from `chunk.timestamp`, stored as the audio track's sample format.
    package func write(_ chunk: AudioChunk) throws(MediaDevicesError) {
        guard let audioFormat, chunk.frames > 0 else { return }
        lock.lock()
        defer { lock.unlock() }
        guard let context, let packet else { throw closedError() }
        let frames = chunk.frames
        let bytes = frames * audioFormat.bytesPerFrame
        guard cav_av_new_packet(packet, Int32(bytes)) >= 0 else { throw Self.failure(-ENOMEM, path: path, operation: "av_new_packet") }
        chunk.samples.withUnsafeBufferPointer { samples in
            SampleConversion.convert(UnsafeRawPointer(samples.baseAddress!), .floatLE, to: UnsafeMutableRawPointer(packet.pointee.data),
                                     audioFormat.sampleFormat, count: frames * audioFormat.channels)
        }
        let nanoseconds = Int64(bitPattern: chunk.timestamp.nanoseconds &- start.nanoseconds)
        figures.received(chunk)
        var pts = cav_av_rescale_q(nanoseconds, Self.nanosecond, audioTimeBase)
        if pts <= lastAudioPTS { pts = lastAudioPTS + 1; figures.adjustedTimestamps += 1 }
        lastAudioPTS = pts
        let duration = Int64(frames) * 1_000_000_000 / Int64(audioFormat.sampleRate)
        packet.pointee.flags |= AV_PKT_FLAG_KEY
        try send(packet, stream: audioIndex, pts: pts, duration: cav_av_rescale_q(duration, Self.nanosecond, audioTimeBase), context: context)
    }

    /// Writes what libavformat still holds and the index, closes the file and moves it to
    /// `path`. Safe to call more than once.
    package func close() throws(MediaDevicesError) {
        lock.lock()
        defer { lock.unlock() }
        guard let context else { return }
        let trailer = cav_av_write_trailer(context)
        let closed = cav_avio_closep(&context.pointee.pb)
        guard trailer >= 0, closed >= 0 else {
            release(removing: true)
            throw Self.failure(trailer < 0 ? trailer : closed, path: path, operation: trailer < 0 ? "av_write_trailer" : "avio_close")
        }
        release(removing: false)
        guard rename(partialPath, path) == 0 else {
            let error = MediaDevicesError.fromFileErrno(errno, path: path, operation: "rename \(partialPath) to \(path)")
            unlink(partialPath)
            throw error
        }
    }

    private static let nanosecond = AVRational(num: 1, den: 1_000_000_000)

    private func send(_ packet: UnsafeMutablePointer<AVPacket>, stream: Int32, pts: Int64, duration: Int64,
                      context: UnsafeMutablePointer<AVFormatContext>) throws(MediaDevicesError) {
        packet.pointee.stream_index = stream
        packet.pointee.pts = pts
        packet.pointee.dts = pts
        packet.pointee.duration = duration
        // Takes the packet's data (and resets the packet) whether it succeeds or not.
        let status = cav_av_interleaved_write_frame(context, packet)
        guard status >= 0 else { throw Self.failure(status, path: path, operation: "av_interleaved_write_frame") }
    }

    /// Frees libavformat's context and packet (the lock held, or from `deinit`/`init`); removes
    /// the partial file when `removing`.
    private func release(removing: Bool) {
        if let context {
            if context.pointee.pb != nil { cav_avio_closep(&context.pointee.pb) }
            cav_avformat_free_context(context)
            self.context = nil
            if removing { unlink(partialPath) }
        }
        cav_av_packet_free(&packet)
    }

    private func closedError() -> MediaDevicesError {
        MediaDevicesError(.invalidState, device: nil, operation: "write \(path)", detail: "The file is already closed")
    }

    private static func addVideoStream(_ context: UnsafeMutablePointer<AVFormatContext>, format: VideoFormat, frameRate: Fraction?,
                                       path: String) throws(MediaDevicesError) -> Int32 {
        guard let stream = cav_avformat_new_stream(context, nil) else { throw failure(-ENOMEM, path: path, operation: "avformat_new_stream") }
        let parameters = stream.pointee.codecpar!
        parameters.pointee.codec_type = AVMEDIA_TYPE_VIDEO
        parameters.pointee.width = Int32(format.width)
        parameters.pointee.height = Int32(format.height)
        if format.pixelFormat.isCompressed {
            guard format.pixelFormat == .mjpeg || format.pixelFormat == .jpeg else {
                throw unsupported(path, "\(format.pixelFormat.name) frames are compressed in a way the file cannot pass through; capture --format MJPG or a raw format")
            }
            parameters.pointee.codec_id = AV_CODEC_ID_MJPEG
            parameters.pointee.format = AV_PIX_FMT_YUVJ422P.rawValue
        } else {
            guard let name = FFmpegNames.pixelFormat(format.pixelFormat) else {
                throw unsupported(path, "FFmpeg has no raw name for \(format.pixelFormat.name); capture --format YUYV, NV12, YU12 or MJPG")
            }
            parameters.pointee.codec_id = AV_CODEC_ID_RAWVIDEO
            parameters.pointee.format = cav_av_get_pix_fmt(name).rawValue
            parameters.pointee.codec_tag = cav_avcodec_pix_fmt_to_codec_tag(cav_av_get_pix_fmt(name))
        }
        stream.pointee.time_base = AVRational(num: 1, den: 1_000_000)
        if let frameRate {
            stream.pointee.avg_frame_rate = AVRational(num: Int32(frameRate.numerator), den: Int32(frameRate.denominator))
        }
        return stream.pointee.index
    }

    private static func addAudioStream(_ context: UnsafeMutablePointer<AVFormatContext>, format: AudioFormat,
                                       path: String) throws(MediaDevicesError) -> Int32 {
        guard let stream = cav_avformat_new_stream(context, nil) else { throw failure(-ENOMEM, path: path, operation: "avformat_new_stream") }
        let parameters = stream.pointee.codecpar!
        parameters.pointee.codec_type = AVMEDIA_TYPE_AUDIO
        switch format.sampleFormat {
        case .s16LE: (parameters.pointee.codec_id, parameters.pointee.format) = (AV_CODEC_ID_PCM_S16LE, AV_SAMPLE_FMT_S16.rawValue)
        case .s32LE: (parameters.pointee.codec_id, parameters.pointee.format) = (AV_CODEC_ID_PCM_S32LE, AV_SAMPLE_FMT_S32.rawValue)
        case .floatLE: (parameters.pointee.codec_id, parameters.pointee.format) = (AV_CODEC_ID_PCM_F32LE, AV_SAMPLE_FMT_FLT.rawValue)
        }
        parameters.pointee.sample_rate = Int32(format.sampleRate)
        cav_av_channel_layout_default(&parameters.pointee.ch_layout, Int32(format.channels))
        parameters.pointee.bits_per_coded_sample = Int32(format.sampleFormat.bytesPerSample * 8)
        parameters.pointee.block_align = Int32(format.bytesPerFrame)
        stream.pointee.time_base = AVRational(num: 1, den: Int32(format.sampleRate))
        return stream.pointee.index
    }

    private static func unsupported(_ path: String, _ detail: String) -> MediaDevicesError {
        MediaDevicesError(.unsupportedFormat, device: nil, operation: "write \(path)", detail: detail)
    }

    /// FFmpeg's libraries loaded (once a process: `cavformat_load`), or `.notFound` naming the
    /// one that is missing.
    private static func loadFFmpeg(path: String) throws(MediaDevicesError) {
        var text = [CChar](repeating: 0, count: 512)
        guard cavformat_load(&text, text.count) != 0 else { return }
        let message = text.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        throw MediaDevicesError(.notFound, device: nil, operation: "dlopen (write \(path))",
                                detail: "FFmpeg's libraries, which write audio-and-video files, could not be loaded: \(message)",
                                remedy: "Install FFmpeg's libavformat (Debian: libavformat59 or its newer name)")
    }

    /// libavformat's failure `status` (a negative AVERROR) as an error naming the call.
    private static func failure(_ status: Int32, path: String, operation: String) -> MediaDevicesError {
        var text = [CChar](repeating: 0, count: 128)
        cav_av_strerror(status, &text, text.count)
        let message = text.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        let errnoValue: Int32? = status < 0 && -status < 4096 ? -status : nil
        return MediaDevicesError(.io, device: nil, operation: "\(operation) (\(path))", errno: errnoValue,
                                 detail: "libavformat could not write the file: \(message)",
                                 remedy: "Check that the directory exists and is writable and that the disk has room")
    }
}
