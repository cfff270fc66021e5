import ArgumentParser
import Foundation
import Glibc
import MediaDevices
import MediaDevicesCommandLine
import Synchronization
import TestSupport

/// `mediadevices-benchmark audio`: the audio bus against memcpy, and (with `--latency`) the round
/// trip through snd-aloop with our capture→render forwarding against `arecord | aplay`, and
/// (with `--resampler`) libsoxr against speexdsp, and (with `--cpu SOURCE`) CPU and wake-ups per
/// second of `record` against `arecord`/`parec`.
/// Every figure is a ratio against a reference measured in the same run.
struct AudioBenchmarkCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "audio",
        abstract: "Benchmark the audio ring and bus against memcpy, and round-trip latency through snd-aloop against arecord | aplay.")

    @Option(help: "Megabytes moved per throughput measurement.")
    var megabytes: Int = 256

    @Option(help: "Period sizes in frames (comma-separated).")
    var periods: String = "128,256,1024"

    @Flag(inversion: .prefixedNo, help: "Measure the ring and the bus against memcpy.")
    var bus = true

    @Flag(help: "Also measure round-trip latency through the Loopback card (needs `modprobe snd-aloop` and tools arecord/aplay; both Loopback subdevice pairs 0 and 1 must be free).")
    var latency = false

    @Option(help: "Round trips per period size (the median is reported).")
    var trips: Int = 3

    @Flag(help: "Also compare the resampling libraries (libsoxr against speexdsp): THD+N, delay and CPU per second of audio.")
    var resampler = false

    @Option(help: "Seconds of audio per resampler measurement round (5 rounds; the median is reported).")
    var resamplerSeconds: Int = 20

    @Option(name: .customLong("cpu"), help: "Also measure CPU and wake-ups per second of capture from this source against arecord (an ALSA PCM name) or parec (pulse:SOURCE); repeatable.")
    var cpuSources: [String] = []

    @Option(help: "Frames per period for --cpu (480: 10 ms at 48 kHz).")
    var cpuPeriod: Int = 480

    func run() throws {
        let sizes = periods.split(separator: ",").compactMap { Int($0) }
        guard !sizes.isEmpty else { throw ValidationError("--periods takes frame counts, e.g. 128,256,1024") }
        if bus {
            ringThroughput()
            for size in sizes { periodCost(frames: size) }
            print("(checksum \(sink.value))")
        }
        if resampler { try ResamplerBenchmark.run(seconds: resamplerSeconds, rounds: 5) }
        for source in cpuSources {
            let benchmark = AudioCaptureCPUBenchmark(source: source, periodFrames: cpuPeriod, workDirectory: NSTemporaryDirectory() + "mediadevices-audio-benchmark")
            let rows = try benchmark.run { FileHandle.standardError.write(Data("audio-benchmark: \($0)\n".utf8)) }
            print(benchmark.table(rows))
        }
        if latency {
            for size in sizes {
                do { try roundTrip(period: size) } catch {
                    print("round trip at \(size)-frame periods: not measured: \(error)")
                }
            }
        }
    }

    // MARK: Ring and bus against memcpy


    private func seconds(_ body: () -> Void) -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        body()
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    }

    private func ringThroughput() {
        let chunk = 4096, total = megabytes << 20
        let source = UnsafeMutableRawPointer.allocate(byteCount: chunk, alignment: 64)
        let destination = UnsafeMutableRawPointer.allocate(byteCount: chunk, alignment: 64)
        let area = UnsafeMutableRawPointer.allocate(byteCount: 1 << 16, alignment: 64)
        defer { source.deallocate(); destination.deallocate(); area.deallocate() }
        source.initializeMemory(as: UInt8.self, repeating: 1, count: chunk)
        area.initializeMemory(as: UInt8.self, repeating: 0, count: 1 << 16)
        let ring = AudioRingBuffer(minimumCapacity: 1 << 16)
        // The reference: memcpy into a 64 KiB area (the ring's size), at a moving offset, with
        // the bytes consumed afterwards so the copies cannot be optimized away.
        let memcpyTime = seconds {
            for index in 0..<(total / chunk) {
                source.storeBytes(of: UInt8(truncatingIfNeeded: index), as: UInt8.self)
                memcpy(area + (index * chunk) & 0xffff, source, chunk)
            }
            sink.consume(area, 1 << 16)
        }
        let ringTime = seconds {
            for index in 0..<(total / chunk) {
                source.storeBytes(of: UInt8(truncatingIfNeeded: index), as: UInt8.self)
                ring.write(source, count: chunk)
                ring.read(into: destination, count: chunk)
                sink.consume(destination, 1)
            }
        }
        // Two threads: producer and consumer on their own cores, as in use.
        let threadedTime = seconds {
            let done = DispatchSemaphore(value: 0)
            let address = UInt(bitPattern: source)
            let producer = Thread {
                let source = UnsafeRawPointer(bitPattern: address)!
                var sent = 0
                while sent < total { sent += ring.write(source, count: chunk) }
                done.signal()
            }
            producer.start()
            var received = 0
            while received < total { received += ring.read(into: destination, count: chunk) }
            done.wait()
        }
        let rate = { (time: Double) in Double(total) / time / 1e9 }
        print(String(format: "ring, one thread (write+read of 4 KiB chunks): %.2f GB/s; memcpy of the same bytes: %.2f GB/s; ratio %.2f (the ring copies twice)",
                     rate(ringTime), rate(memcpyTime), ringTime / memcpyTime))
        print(String(format: "ring, producer and consumer threads: %.2f GB/s; ratio to one memcpy %.2f", rate(threadedTime), threadedTime / memcpyTime))
    }

    private func periodCost(frames: Int) {
        let device = AudioFormat(sampleRate: 48000, channels: 2, sampleFormat: .s16LE)
        let bus = AudioBus(capacityBytes: 1 << 16)
        bus.setCaptureFormat(device)
        bus.setRenderFormat(device)
        let samples = frames * device.channels
        let bytes = frames * device.bytesPerFrame
        let rounds = max(1000, (megabytes << 20) / bytes / 8)
        let raw = UnsafeMutableRawPointer.allocate(byteCount: bytes, alignment: 64)
        let copy = UnsafeMutableRawPointer.allocate(byteCount: bytes, alignment: 64)
        let ints = UnsafeMutableBufferPointer<Int16>.allocate(capacity: samples)
        let floats = UnsafeMutableBufferPointer<Float>.allocate(capacity: samples)
        defer { raw.deallocate(); copy.deallocate(); ints.deallocate(); floats.deallocate() }
        raw.initializeMemory(as: UInt8.self, repeating: 3, count: bytes)
        floats.initialize(repeating: 0.25)
        ints.initialize(repeating: 100)
        let area = UnsafeMutableRawPointer.allocate(byteCount: 1 << 16, alignment: 64)
        defer { area.deallocate() }
        let slots = max(1, (1 << 16) / bytes)
        let memcpyTime = seconds {
            for index in 0..<rounds {
                raw.storeBytes(of: UInt8(truncatingIfNeeded: index), as: UInt8.self)
                memcpy(area + (index % slots) * bytes, raw, bytes)
            }
            sink.consume(area, slots * bytes)
        }
        // Capture: the device thread's write (S16) and the application's read as Float.
        let captureTime = seconds {
            for _ in 0..<rounds {
                bus.captureRing.write(raw, count: bytes, granularity: device.bytesPerFrame)
                bus.readCaptureData(into: floats)
                sink.consume(UnsafeRawPointer(floats.baseAddress!), 4)
            }
        }
        // Render: the application's Float write and the device thread's read (S16).
        let renderTime = seconds {
            for _ in 0..<rounds {
                bus.writeRenderData(UnsafeBufferPointer(floats))
                bus.renderRing.read(into: copy, count: bytes, granularity: device.bytesPerFrame)
                sink.consume(copy, 1)
            }
        }
        // Same format both ends (Int16): the ring alone.
        let sameTime = seconds {
            for _ in 0..<rounds {
                bus.captureRing.write(raw, count: bytes, granularity: device.bytesPerFrame)
                bus.captureRing.read(into: copy, count: bytes, granularity: device.bytesPerFrame)
                sink.consume(copy, 1)
            }
        }
        let per = { (time: Double) in time / Double(rounds) * 1e9 }
        print(String(format: "period %d frames (48 kHz stereo S16, %d bytes): memcpy %.0f ns; capture bus S16→Float %.0f ns (ratio %.1f); render bus Float→S16 %.0f ns (ratio %.1f); S16 through the ring %.0f ns (ratio %.1f); period lasts %.0f µs",
                     frames, bytes, per(memcpyTime), per(captureTime), captureTime / memcpyTime, per(renderTime), renderTime / memcpyTime,
                     per(sameTime), sameTime / memcpyTime, Double(frames) / 48000 * 1e6))
    }

    // MARK: Round trip through snd-aloop

    /// Generator (render hw:Loopback,0,0) → forwarder (capture hw:Loopback,1,0 → render
    /// hw:Loopback,0,1) → measurer (capture hw:Loopback,1,1). The forwarder is ours or
    /// `arecord | aplay` with the same period and buffer.
    private func roundTrip(period: Int) throws {
        let format = AudioFormat(sampleRate: 48000, channels: 2, sampleFormat: .s16LE)
        let options = AudioStreamOptions(periodFrames: period, periods: 4)
        let ours = try chainLatency(format: format, options: options) {
            let forwarder = AudioDriver()
            try forwarder.initializeCapture(device: .alsa("hw:Loopback,1,0", direction: .input), format: format, options: options)
            try forwarder.initializeRendering(device: .alsa("hw:Loopback,0,1", direction: .output), format: format, options: options)
            let running = ForwardFlag()
            try forwarder.startRendering()
            try forwarder.startCapture()
            let thread = Thread {
                let buffer = UnsafeMutableBufferPointer<Int16>.allocate(capacity: 8192)
                defer { buffer.deallocate() }
                while running.value {
                    let got = forwarder.bus.readCaptureData(into: buffer)
                    if got > 0 { forwarder.bus.writeRenderData(UnsafeBufferPointer(rebasing: buffer[0..<got])) } else { usleep(250) }
                }
            }
            thread.start()
            return { running.value = false; usleep(10_000); forwarder.render.terminate(); forwarder.capture.terminate() }
        }
        let reference = try chainLatency(format: format, options: options) {
            let common = ["-q", "-f", "S16_LE", "-r", "48000", "-c", "2", "--period-size=\(period)", "--buffer-size=\(period * 4)", "-t", "raw"]
            let record = Process(), play = Process(), pipe = Pipe()
            record.executableURL = URL(fileURLWithPath: "/usr/bin/arecord")
            record.arguments = ["-D", "hw:Loopback,1,0"] + common
            record.standardOutput = pipe
            play.executableURL = URL(fileURLWithPath: "/usr/bin/aplay")
            play.arguments = ["-D", "hw:Loopback,0,1"] + common
            play.standardInput = pipe
            try play.run()
            try record.run()
            usleep(500_000)
            return { record.terminate(); play.terminate(); record.waitUntilExit(); play.waitUntilExit() }
        }
        print(String(format: "round trip at %d-frame periods (buffer %d), render→aloop→forward→aloop→capture: ours %.1f ms, arecord | aplay %.1f ms, ratio %.2f",
                     period, period * 4, ours * 1000, reference * 1000, ours / reference))
    }

    /// Median latency of `trips` tone bursts from the generator to the measurer while the
    /// forwarder that `startForwarder` starts (and whose returned closure stops) runs.
    private func chainLatency(format: AudioFormat, options: AudioStreamOptions, startForwarder: () throws -> () -> Void) throws -> Double {
        let ends = AudioDriver()
        try ends.initializeRendering(device: .alsa("hw:Loopback,0,0", direction: .output), format: format, options: options)
        try ends.initializeCapture(device: .alsa("hw:Loopback,1,1", direction: .input), format: format, options: options)
        defer { ends.render.terminate(); ends.capture.terminate() }
        try ends.startRendering()
        let stopForwarder = try startForwarder()
        defer { stopForwarder() }
        try ends.startCapture()
        var sine = SineGenerator(frequency: 1000, amplitude: 0.5, sampleRate: format.sampleRate)
        let burst = sine.samples(frames: format.sampleRate / 10, channels: format.channels)
        var incoming = [Float](repeating: 0, count: 16384)
        var results: [Double] = []
        func drain(until deadline: Date, onset: Date?) -> Double? {
            while Date() < deadline {
                let got = incoming.withUnsafeMutableBufferPointer { ends.bus.readCaptureData(into: $0) }
                if let onset, incoming[0..<got].contains(where: { abs($0) > 0.2 }) { return Date().timeIntervalSince(onset) }
                usleep(250)
            }
            return nil
        }
        for _ in 0..<trips {
            _ = drain(until: Date().addingTimeInterval(0.4), onset: nil)  // silence settles, queues empty
            let onset = Date()
            _ = burst.withUnsafeBufferPointer { ends.bus.writeRenderData($0) }
            guard let latency = drain(until: Date().addingTimeInterval(3), onset: onset) else {
                throw MediaDevicesError(.timeout, device: "hw:Loopback", operation: "round trip",
                                        detail: "The burst did not come back within 3 s; is snd-aloop loaded and are Loopback subdevices 0 and 1 free?")
            }
            results.append(latency)
        }
        results.sort()
        return results[results.count / 2]
    }
}

/// Where the benchmark's copies end up.
private let sink = Checksum()

/// Consumes bytes so the optimizer keeps the copies that produced them.
// @unchecked Sendable: the benchmark calls `consume` from its one measuring thread and reads `value` after it.
final class Checksum: @unchecked Sendable {
    private(set) var value: UInt64 = 0
    @inline(never)
    func consume(_ bytes: UnsafeRawPointer, _ count: Int) {
        var sum = value
        for index in stride(from: 0, to: count, by: 64) { sum &+= UInt64(bytes.load(fromByteOffset: index, as: UInt8.self)) }
        value = sum
    }
}

/// A flag the forwarding thread polls.
final class ForwardFlag: Sendable {
    private let stored = Atomic<Bool>(true)
    var value: Bool {
        get { stored.load(ordering: .acquiring) }
        set { stored.store(newValue, ordering: .releasing) }
    }
}
