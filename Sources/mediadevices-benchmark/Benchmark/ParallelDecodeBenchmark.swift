import CTurboJPEG
import Dispatch
import Foundation
import Glibc
import MediaDevices
import Synchronization

/// Issue 39's threaded decode: how many MJPEG frames a second one thread converts
/// (`ConvertingConsumer`, on the thread that offers them, as on a capture thread) against
/// `ParallelConvertingConsumer` on N threads, in the same process; with the CPU each frame costs
/// (the process's, all threads: the parallel consumer's copy and hand-off included). The
/// offering thread keeps N frames in flight: it sleeps until a converted frame comes out (as a
/// capture thread sleeps until the next frame), then offers the next; an offer that finds the
/// thread that just handed its frame on not yet free again is retried after a `sched_yield`.
/// Beside each N, N independent converters, each converting on a thread of its own with no
/// hand-off (`DispatchQueue.concurrentPerform`): what N threads can give on this machine (its
/// cores, their shared caches), against which the parallel consumer's own cost shows.
struct ParallelDecodeBenchmark {
    struct Row: Encodable {
        var size: String
        var output: String
        var threads: Int
        /// `parallel` (ParallelConvertingConsumer), `independent` (N converters, no hand-off) or
        /// `one thread` (ConvertingConsumer).
        var how: String
        var framesPerSecond: Double
        var cpuPerFrameNanoseconds: Double
        /// Frames a second over the one-thread row's.
        var speedUp: Double
        /// CPU per frame over the one-thread row's.
        var cpuRatio: Double
        /// Offers refused because every thread was still busy (each retried after a yield).
        var busyOffers: Int
    }

    var width: Int
    var height: Int
    var quality: Int32
    var threadCounts: [Int]
    var seconds: Double
    var output: OutputFormat

    /// Counts frames and gives the offering thread a permit for each.
    // @unchecked Sendable: its state is an atomic and a semaphore, both thread-safe.
    final class Counter: VideoFrameConsumer, @unchecked Sendable {
        let count = Atomic<Int>(0)
        let permits: DispatchSemaphore
        init(permits: Int) { self.permits = DispatchSemaphore(value: permits) }
        func consumeFrame(_ frame: VideoFrame) {
            count.add(1, ordering: .relaxed)
            permits.signal()
        }
    }

    func run(progress: (String) -> Void) throws -> [Row] {
        let jpeg = try MJPEGBenchmark.encodeTestPattern(width: width, height: height, subsampling: TJSAMP_420, quality: quality)
        defer { jpeg.deallocate() }
        let format = VideoFormat(pixelFormat: .mjpeg, width: width, height: height, bytesPerRow: [0], bufferSizes: [jpeg.count])
        var sequence: UInt32 = 0
        func frame() -> VideoFrame {
            sequence &+= 1
            return VideoFrame(format: format, timestamp: MonotonicInstant.now, sequence: sequence, orientation: .up, captureDelay: .zero,
                              planeCount: 1, bytesUsed: jpeg.count, plane0: FramePlane(bytes: jpeg, bytesPerRow: 0))
        }
        var rows: [Row] = []
        let runs = [(1, "one thread")] + threadCounts.filter { $0 > 1 }.flatMap { [($0, "parallel"), ($0, "independent")] }
        for (threads, how) in runs {
            progress("\(width)x\(height) MJPEG → \(output.pixelFormat.name) on \(threads) thread(s), \(how), for \(seconds) s")
            let counter = Counter(permits: threads)
            var busyOffers = 0
            let cpuBefore = Self.processCPU(), began = DispatchTime.now().uptimeNanoseconds
            let until = began + UInt64(seconds * 1e9)
            if threads == 1 {
                let consumer = try ConvertingConsumer(output: output, consumer: counter)
                while DispatchTime.now().uptimeNanoseconds < until { consumer.consumeFrame(frame()) }
            } else if how == "independent" {
                let consumers = try (0..<threads).map { _ in try ConvertingConsumer(output: output, consumer: counter) }
                nonisolated(unsafe) let picture = jpeg  // read only, by every thread
                DispatchQueue.concurrentPerform(iterations: threads) { index in
                    let one = VideoFrame(format: format, timestamp: MonotonicInstant.now, sequence: UInt32(index), orientation: .up,
                                         captureDelay: .zero, planeCount: 1, bytesUsed: picture.count, plane0: FramePlane(bytes: picture, bytesPerRow: 0))
                    while DispatchTime.now().uptimeNanoseconds < until { consumers[index].consumeFrame(one) }
                }
            } else {
                let consumer = try ParallelConvertingConsumer(output: output, threads: threads, consumer: counter)
                while DispatchTime.now().uptimeNanoseconds < until {
                    counter.permits.wait()
                    let next = frame()
                    var refused = consumer.busyFrames
                    consumer.consumeFrame(next)
                    while consumer.busyFrames > refused {
                        busyOffers += 1
                        sched_yield()
                        refused = consumer.busyFrames
                        consumer.consumeFrame(next)
                    }
                }
                consumer.captureDidStop(error: nil)
            }
            let wall = Double(DispatchTime.now().uptimeNanoseconds - began), cpu = Self.processCPU() - cpuBefore
            let frames = counter.count.load(ordering: .relaxed)
            guard frames > 0 else { throw BenchmarkError("no frame was converted on \(threads) thread(s)") }
            let fps = Double(frames) / (wall / 1e9), perFrame = cpu / Double(frames)
            let first = rows.first
            rows.append(Row(size: "\(width)x\(height)", output: output.pixelFormat.name, threads: threads, how: how, framesPerSecond: fps,
                            cpuPerFrameNanoseconds: perFrame, speedUp: first.map { fps / $0.framesPerSecond } ?? 1,
                            cpuRatio: first.map { perFrame / $0.cpuPerFrameNanoseconds } ?? 1, busyOffers: busyOffers))
        }
        return rows
    }

    /// This process's CPU time so far (user + system, all threads, those that ended too: the
    /// parallel consumer's end with it), in nanoseconds.
    static func processCPU() -> Double {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)  // ended threads included
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1e9 + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1e3
    }

    static func table(_ rows: [Row], cores: Int) -> String {
        var table = BenchmarkTable("size", "output", "threads", "how", "frames/s", "÷ 1 thread", "CPU/frame", "÷ 1 thread", "busy offers")
        for row in rows {
            table.add(row.size, row.output, "\(row.threads)", row.how, String(format: "%.1f", row.framesPerSecond), formatRatio(row.speedUp),
                      formatDuration(row.cpuPerFrameNanoseconds), formatRatio(row.cpuRatio), "\(row.busyOffers)")
        }
        return table.text + "\n(\(cores) CPUs online; one thread: ConvertingConsumer on the offering thread; parallel: ParallelConvertingConsumer; independent: N ConvertingConsumers on N threads, no hand-off)"
    }
}
