import Dispatch
import Foundation
import MediaDevices
import MediaDevicesCommandLine
import Synchronization

/// Part 4: how long frames wait. For each frame: the capture delay the library measured
/// (dequeue time minus the driver's timestamp), and the delivery latency from the driver's
/// timestamp to the callback consumer and to readers of the `frames` sequences (leased frames
/// read on Swift's global executor and on the source's capture executor, and frames converted
/// to NV12 on the capture thread).
struct LatencyBenchmark {
    struct Row: Encodable {
        var measure: String
        var frames: Int
        var p50Microseconds: Double
        var p99Microseconds: Double
        var maxMicroseconds: Double
    }

    var device: String
    var width: Int
    var height: Int
    var fps: Int
    var frames: Int
    var warmUpFrames: Int

    func run(progress: (String) -> Void) throws -> [Row] {
        guard case .camera(let camera) = try DeviceSelection.resolve(device) else {
            throw BenchmarkError("latency needs a camera (a /dev/video node), not the test pattern")
        }
        var rows: [Row] = []
        enum Reader: CaseIterable { case plain, executor, converted }
        for kind in Reader.allCases {
            let converted = kind == .converted
            progress("streaming \(frames) frames from \(camera.path)\(converted ? " with an NV12 sequence" : kind == .executor ? " read on the capture executor" : "")")
            let source = CameraSource(device: camera, request: FormatRequest(pixelFormat: .yuyv, size: Size(width: width, height: height),
                                                                             frameRate: FrameRate(fps)))
            defer { source.release() }
            try source.initialize()
            let total = frames + warmUpFrames
            let callback = CallbackRecorder(capacity: total)
            source.consumer = callback
            let sequence = converted ? try source.frameSequence(bufferSize: 8, output: OutputFormat(.nv12)) : source.frameSequence(bufferSize: 8)
            let reader = SequenceRecorder(capacity: total)
            try source.start()
            reader.drain(sequence, executor: kind == .executor ? source.captureExecutor : nil)
            let deadline = Date().addingTimeInterval(10 + 3 * Double(total) / Double(fps))
            while (callback.count < total || reader.count < total) && Date() < deadline { usleep(20_000) }
            source.stop()
            reader.finished.wait()
            guard callback.count >= total, reader.count >= total else {
                throw BenchmarkError("only \(callback.count) callbacks and \(reader.count) sequence frames of \(total) arrived from \(camera.path)")
            }
            let name = converted ? "sequence NV12 (timestamp → next())"
                : kind == .executor ? "sequence on the capture executor (timestamp → next())" : "sequence (timestamp → next())"
            if kind == .plain {
                rows.append(row("capture delay (dequeue − timestamp)", callback.delays))
                rows.append(row("callback (timestamp → consumeFrame)", callback.latencies))
                rows.append(row("callback after dequeue", zip(callback.latencies, callback.delays).map { $0 - $1 }))
            } else if converted {
                rows.append(row("callback with NV12 sequence", callback.latencies))
            }
            rows.append(row(name, reader.latencies))
        }
        return rows
    }

    private func row(_ name: String, _ values: [Int64]) -> Row {
        let sorted = values.dropFirst(warmUpFrames).prefix(frames).map { Double($0) / 1_000 }.sorted()
        return Row(measure: name, frames: sorted.count, p50Microseconds: percentile(sorted, 50),
                   p99Microseconds: percentile(sorted, 99), maxMicroseconds: sorted.last ?? 0)
    }

    static func table(_ rows: [Row]) -> String {
        var table = BenchmarkTable("measure", "frames", "p50", "p99", "max")
        for row in rows {
            table.add(row.measure, "\(row.frames)", formatDuration(row.p50Microseconds * 1_000),
                      formatDuration(row.p99Microseconds * 1_000), formatDuration(row.maxMicroseconds * 1_000))
        }
        return table.text
    }
}

/// Records, on the capture thread and without allocating, each frame's capture delay and the
/// time from its driver timestamp to the callback.
// @unchecked Sendable: the stores are written by the capture thread at the index `recorded` (an atomic) hands out, read after capture stopped.
final class CallbackRecorder: VideoFrameConsumer, @unchecked Sendable {
    private let capacity: Int
    private let delayStore: UnsafeMutablePointer<Int64>
    private let latencyStore: UnsafeMutablePointer<Int64>
    private let recorded = Atomic<Int>(0)

    init(capacity: Int) {
        self.capacity = capacity
        delayStore = .allocate(capacity: capacity)
        latencyStore = .allocate(capacity: capacity)
    }

    deinit { delayStore.deallocate(); latencyStore.deallocate() }

    var count: Int { recorded.load(ordering: .acquiring) }
    var delays: [Int64] { Array(UnsafeBufferPointer(start: delayStore, count: count)) }
    var latencies: [Int64] { Array(UnsafeBufferPointer(start: latencyStore, count: count)) }

    func consumeFrame(_ frame: VideoFrame) {
        let now = BenchmarkClock.nanoseconds()
        let index = recorded.load(ordering: .relaxed)
        guard index < capacity else { return }
        delayStore[index] = frame.captureDelay.nanosecondCount
        latencyStore[index] = Int64(bitPattern: now) - Int64(bitPattern: frame.timestamp.nanoseconds)
        recorded.store(index + 1, ordering: .releasing)
    }
}

/// Reads a `frames` sequence on a task of its own and records the time from each frame's driver
/// timestamp to its arrival.
// @unchecked Sendable: the store is written by the one reading task at the index `recorded` (an atomic) hands out, read after `finished`.
final class SequenceRecorder: @unchecked Sendable {
    private let capacity: Int
    private let store: UnsafeMutablePointer<Int64>
    private let recorded = Atomic<Int>(0)
    let finished = DispatchSemaphore(value: 0)
    /// Signalled when `capacity` frames are recorded.
    let full = DispatchSemaphore(value: 0)

    init(capacity: Int) {
        self.capacity = capacity
        store = .allocate(capacity: capacity)
    }

    deinit { store.deallocate() }

    var count: Int { recorded.load(ordering: .acquiring) }
    var latencies: [Int64] { Array(UnsafeBufferPointer(start: store, count: count)) }

    /// Records from `frames` on a task of its own, made with `executor` as its preference when
    /// given. Call it after the source's `start()`: the task's first job then goes straight to
    /// the capture thread, and Swift's global executor is never used (its first use starts
    /// libdispatch's manager thread, which wakes every second and would be counted as the
    /// reader's CPU). Without `timing` it only
    /// counts (a clock read costs tens of µs under emulation, where the clocksource is the HPET:
    /// the CPU benchmark's readers must not pay what its callback does not).
    func drain(_ frames: VideoFrames, executor: (any TaskExecutor)? = nil, timing: Bool = true) {
        Task.detached(executorPreference: executor) { [self] in
            do {
                for try await buffer in frames {
                    let now = timing ? BenchmarkClock.nanoseconds() : buffer.timestamp.nanoseconds
                    let index = recorded.load(ordering: .relaxed)
                    if index < capacity {
                        store[index] = Int64(bitPattern: now) - Int64(bitPattern: buffer.timestamp.nanoseconds)
                        recorded.store(index + 1, ordering: .releasing)
                        if index + 1 == capacity { full.signal() }
                    }
                }
            } catch {}
            finished.signal()
        }
    }
}
