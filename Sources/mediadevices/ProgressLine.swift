import Dispatch
import Foundation
import Glibc
import MediaDevices

/// The one-line progress report `capture` and `record` redraw on standard error while they run
/// (`\r` and the line again, as ffmpeg's `frame=  123 fps= 30 …`), only when standard error is
/// a terminal: tests, pipes and log files see nothing. The line is made on a timer of its own
/// twice a second, never per frame or period, so capture pays nothing for it.
// @unchecked Sendable: `drawn` is read and written only under `lock`; the timer and `line` are Sendable.
final class ProgressLine: @unchecked Sendable {
    /// Whether the line is shown: standard error is a terminal.
    static var isShown: Bool { isatty(STDERR_FILENO) != 0 }

    private let timer: any DispatchSourceTimer
    private let lock = NSLock()
    private var drawn = 0

    /// Starts redrawing `line()` every `interval` when standard error is a terminal; `nil` otherwise.
    static func start(every interval: DispatchTimeInterval = .milliseconds(500), _ line: @escaping @Sendable () -> String) -> ProgressLine? {
        guard isShown else { return nil }
        return ProgressLine(interval: interval, line)
    }

    private init(interval: DispatchTimeInterval, _ line: @escaping @Sendable () -> String) {
        timer = DispatchSource.makeTimerSource(queue: .global())
        timer.schedule(deadline: .now() + interval, repeating: interval)
        timer.setEventHandler { [weak self] in self?.draw(line()) }
        timer.resume()
    }

    private func draw(_ text: String) {
        lock.lock()
        defer { lock.unlock() }
        // Pad over a longer line drawn before.
        let padding = String(repeating: " ", count: max(0, drawn - text.count))
        FileHandle.standardError.write(Data(("\r" + text + padding).utf8))
        drawn = text.count
    }

    /// Stops redrawing and clears the line, so what the command prints next starts on a clean one.
    func finish() {
        timer.cancel()
        lock.lock()
        defer { lock.unlock() }
        if drawn > 0 { FileHandle.standardError.write(Data(("\r" + String(repeating: " ", count: drawn) + "\r").utf8)) }
        drawn = 0
    }

    deinit { timer.cancel() }
}

/// `capture`'s progress line: `frame=   123 fps= 30.0 drop=0 time=00:00:04.10`.
enum CaptureProgress {
    /// The line for `written` frames `elapsed` seconds after the start, with the capturer's drops.
    static func line(written: Int, elapsed: Double, statistics: CaptureStatistics) -> String {
        let drops = statistics.droppedFrames + statistics.queueDroppedFrames + statistics.corruptFrames
        // Under 80 columns, so that `\r` redraws one line; the kinds of drop only once there are some.
        let kinds = drops == 0 ? "" : " (\(statistics.droppedFrames) driver, \(statistics.queueDroppedFrames) queue, \(statistics.corruptFrames) corrupt)"
        return String(format: "frame=%6d fps=%5.1f drop=%d%@ time=%@",
                      written, elapsed > 0 ? Double(written) / elapsed : 0, drops, kinds, clock(elapsed))
    }

    /// `HH:MM:SS.ss`, as ffmpeg prints time.
    static func clock(_ seconds: Double) -> String {
        let whole = Int(seconds)
        return String(format: "%02d:%02d:%05.2f", whole / 3600, whole / 60 % 60, seconds - Double(whole / 60 * 60))
    }
}

/// `record`'s progress line: `time=00:00:04.10 peak= -12.3 dBFS xruns=0`, and the sizes it needs.
enum RecordProgress {
    /// The line after `seconds` recorded, with the peak since the last line (0…1) and the xruns.
    static func line(seconds: Double, peak: Float, xruns: Int) -> String {
        let decibels = AudioLevel.decibels(peak)
        let level = decibels.isFinite ? String(format: "%6.1f dBFS", decibels) : "  -inf dBFS"
        return "time=\(CaptureProgress.clock(seconds)) peak=\(level) xruns=\(xruns)"
    }

    /// The largest magnitude (0…1) among interleaved `samples` of `format`, converted to floats by
    /// the library's `SampleConversion` into `scratch` (made once, at least one float a sample):
    /// no allocation.
    static func peak(_ samples: UnsafeRawBufferPointer, _ format: SampleFormat, scratch: UnsafeMutableBufferPointer<Float>) -> Float {
        let count = min(samples.count / format.bytesPerSample, scratch.count)
        guard count > 0, let source = samples.baseAddress, let floats = scratch.baseAddress else { return 0 }
        SampleConversion.convert(source, format, to: UnsafeMutableRawPointer(floats), .floatLE, count: count)
        var largest: Float = 0
        for value in UnsafeBufferPointer(rebasing: scratch[0..<count]) { largest = max(largest, abs(value)) }
        return min(largest, 1)
    }

    /// The most frames of `format` a WAV file holds (its sizes are 32-bit): where a recording
    /// without `--seconds` stops at the latest.
    static func wavFrameLimit(_ format: AudioFormat) -> Int {
        (Int(UInt32.max) - 36 - 1) / format.bytesPerFrame
    }
}
