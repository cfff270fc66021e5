import Foundation
import MediaDevices
import XCTest

/// The reference round trip: PulseAudio's own `pacat` into a sink and `parec` from its monitor,
/// with `--latency-msec` requests (which make them ask with `PA_STREAM_ADJUST_LATENCY`), fed and
/// drained as `AudioToneRun` feeds and drains an `AudioDriver`: silence, then a tone, never more
/// than three periods queued in pacat's input pipe (as AudioToneRun keeps three in the bus).
/// Measures from writing the tone's first sample into the pipe to reading it from parec.
struct PulseToolsRoundTrip {
    let sink: String
    let rate = 48000
    let channels = 2

    /// Seconds, or nil when the tone never came back within `timeout`.
    func measure(playbackLatencyMilliseconds: Int, recordLatencyMilliseconds: Int, periodFrames: Int,
                 lead: Double = 0.5, timeout: Double = 5) throws -> Double? {
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
        let arrival = ToneArrival(descriptor: output.fileHandleForReading.fileDescriptor)
        let reader = Thread { arrival.watch() }
        reader.start()
        defer { arrival.finish() }

        let writeEnd = input.fileHandleForWriting.fileDescriptor
        var sine = SineGenerator(frequency: AudioToneRun.frequency, amplitude: AudioToneRun.amplitude, sampleRate: rate)
        var floats = [Float](repeating: 0, count: periodFrames * channels)
        var chunk = [Int16](repeating: 0, count: periodFrames * channels)
        let start = Date()
        while Date().timeIntervalSince(start) < lead + timeout {
            if let seconds = arrival.roundTrip { return seconds }
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
                    return nil
                }
                continue
            }
            usleep(1000)
        }
        return arrival.roundTrip
    }
}

/// Reads parec's output on a thread of its own and notes when the first tone sample arrives.
private final class ToneArrival: @unchecked Sendable {
    private let descriptor: Int32
    private let lock = NSLock()
    private var onset: Date?
    private var arrived: Date?
    private var finished = false

    init(descriptor: Int32) { self.descriptor = descriptor }

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
        while !lock.withLock({ finished || arrived != nil }) {
            var ready = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&ready, 1, 100) > 0 else { continue }
            let count = bytes.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { return }
            let now = Date()
            var index = 0
            var pending = carry
            while index < count {
                guard let low = pending else { pending = bytes[index]; index += 1; continue }
                let sample = Int16(bitPattern: UInt16(low) | UInt16(bytes[index]) << 8)
                pending = nil
                index += 1
                if abs(Int(sample)) > Int(threshold) {
                    lock.withLock { if onset != nil && arrived == nil { arrived = now } }
                }
            }
            carry = pending
        }
    }
}
