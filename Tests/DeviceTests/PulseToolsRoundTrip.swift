import Foundation
import MediaDevices
import XCTest
import TestSupport

/// The reference round trip: PulseAudio's own `pacat` into a sink and `parec` from its monitor,
/// with `--latency-msec` requests (which make them ask with `PA_STREAM_ADJUST_LATENCY`), fed and
/// drained as `AudioToneRun` feeds and drains an `AudioDriver`: silence, then a tone, never more
/// than three periods queued in pacat's input pipe (as AudioToneRun keeps three in the bus).
/// Measures from writing the tone's first sample into the pipe to reading it from parec, and
/// keeps `seconds` of what parec gave from there on, so the tone can be checked as ours is.
struct PulseToolsRoundTrip {
    let sink: String
    let rate = 48000
    let channels = 2

    /// One measurement: the round trip and the tone as it came back.
    struct Result {
        /// Seconds, or nil when the tone never came back within the timeout.
        let roundTrip: Double?
        /// parec's samples from the tone's first sample on, interleaved floats (as
        /// `AudioToneRun.Result.captured`): empty when the tone never came back.
        let captured: [Float]
    }

    /// Plays `lead` seconds of silence, then the tone until `seconds` of it came back (or
    /// `timeout` passed).
    func measure(playbackLatencyMilliseconds: Int, recordLatencyMilliseconds: Int, periodFrames: Int,
                 lead: Double = 0.5, seconds: Double = 0.6, timeout: Double = 5) throws -> Result {
        let arguments = ["--raw", "--format=s16le", "--rate=\(rate)", "--channels=\(channels)"]
        let player = Process(), recorder = Process()
        player.executableURL = URL(fileURLWithPath: "/usr/bin/pacat")
        player.arguments = arguments + ["--device=\(sink)", "--latency-msec=\(playbackLatencyMilliseconds)"]
        recorder.executableURL = URL(fileURLWithPath: "/usr/bin/parec")
        recorder.arguments = arguments + ["--device=\(sink).monitor", "--latency-msec=\(recordLatencyMilliseconds)"]
        let input = Pipe(), output = Pipe()
        player.standardInput = input
        recorder.standardOutput = output
        try recorder.run()
        do { try player.run() } catch { recorder.terminate(); recorder.waitUntilExit(); throw error }
        defer {
            try? input.fileHandleForWriting.close()
            player.terminate(); recorder.terminate()
            player.waitUntilExit(); recorder.waitUntilExit()
        }
        let arrival = ToneArrival(descriptor: output.fileHandleForReading.fileDescriptor, keeping: Int(seconds * Double(rate)) * channels)
        let reader = Thread { arrival.watch() }
        reader.start()
        defer { arrival.finish() }

        let writeEnd = input.fileHandleForWriting.fileDescriptor
        var sine = SineGenerator(frequency: AudioToneRun.frequency, amplitude: AudioToneRun.amplitude, sampleRate: rate)
        var floats = [Float](repeating: 0, count: periodFrames * channels)
        var chunk = [Int16](repeating: 0, count: periodFrames * channels)
        let start = Date()
        while Date().timeIntervalSince(start) < lead + timeout {
            if arrival.isComplete { break }
            var queued: Int32 = 0
            _ = ioctl(writeEnd, UInt(FIONREAD), &queued)
            if Int(queued) < 3 * chunk.count * 2 {
                if Date().timeIntervalSince(start) >= lead {
                    floats.withUnsafeMutableBufferPointer { sine.fill($0, channels: channels) }
                    for index in chunk.indices { chunk[index] = Int16(floats[index] * 32767) }
                    arrival.toneWritten(at: Date())
                }
                let written = chunk.withUnsafeBytes { write(writeEnd, $0.baseAddress, $0.count) }
                guard written == chunk.count * 2 else {
                    XCTFail("pacat's input pipe: wrote \(written) of \(chunk.count * 2) bytes (errno \(errno))")
                    return Result(roundTrip: nil, captured: [])
                }
                continue
            }
            usleep(1000)
        }
        return Result(roundTrip: arrival.roundTrip, captured: arrival.captured)
    }
}

/// Reads parec's output on a thread of its own, notes when the first tone sample arrives and
/// keeps `keeping` samples from that one on.
private final class ToneArrival: @unchecked Sendable {
    private let descriptor: Int32
    private let keeping: Int
    private let lock = NSLock()
    private var onset: Date?
    private var arrived: Date?
    private var kept: [Float] = []
    private var finished = false

    init(descriptor: Int32, keeping: Int) {
        self.descriptor = descriptor
        self.keeping = keeping
        kept.reserveCapacity(keeping)
    }

    /// Whether the tone came back and `keeping` samples of it are kept.
    var isComplete: Bool { lock.withLock { kept.count >= keeping } }

    /// The samples kept so far.
    var captured: [Float] { lock.withLock { kept } }

    /// The first call marks the tone's onset (before its first sample goes into the pipe).
    func toneWritten(at date: Date) {
        lock.withLock { if onset == nil { onset = date } }
    }

    var roundTrip: Double? {
        lock.withLock { arrived.flatMap { arrived in onset.map { arrived.timeIntervalSince($0) } } }
    }

    func finish() { lock.withLock { finished = true } }

    func watch() {
        var bytes = [UInt8](repeating: 0, count: 8192)
        var carry: UInt8?
        let threshold = Int16(AudioToneRun.amplitude * 0.3 * 32767)
        while !lock.withLock({ finished || kept.count >= keeping }) {
            var ready = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&ready, 1, 100) > 0 else { continue }
            let count = bytes.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { return }
            let now = Date()
            var index = 0
            var pending = carry
            lock.withLock {
                while index < count {
                    guard let low = pending else { pending = bytes[index]; index += 1; continue }
                    let sample = Int16(bitPattern: UInt16(low) | UInt16(bytes[index]) << 8)
                    pending = nil
                    index += 1
                    if arrived == nil, onset != nil, abs(Int(sample)) > Int(threshold) { arrived = now }
                    if arrived != nil && kept.count < keeping { kept.append(Float(sample) / 32768) }
                }
            }
            carry = pending
        }
    }
}
