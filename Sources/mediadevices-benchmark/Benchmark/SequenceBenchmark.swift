import Foundation
import Glibc
import MediaDevices
import MediaDevicesCommandLine
import Synchronization

/// A source's `frames()` sequence read on its capture executor (as the quick start reads it)
/// against a consumer callback on the same source, in the same process, one after the other
/// (issue "API 1.0": within 1.1× of the callback): the process's CPU (user + system, all threads)
/// and its threads' wake-ups (voluntary context switches) per frame, over `frames` frames after
/// `warmUp` frames of each run, the least CPU of `repeats` runs of each path, the paths
/// alternating. Both paths do nothing with a frame but count it; the main thread sleeps until
/// the count reaches the window's start and its end (two wake-ups a run, in both paths). In the
/// rig with `--icount` the CPU figures count guest instructions (1 ns each); elsewhere they are
/// native time.
struct SequenceBenchmark {
    var source: VideoSource
    /// The source's name in errors.
    var name: String
    var frames: Int
    var warmUp = 10
    var repeats = 3

    /// One path's figures.
    struct Path: Encodable {
        var cpuPerFrameMicroseconds: Double
        var wakeUpsPerFrame: Double
        var frames: Int
    }

    struct Figures: Encodable {
        var callback: Path
        var sequence: Path
        /// The sequence's CPU per frame over the callback's.
        var ratio: Double
        /// Frames the sequence runs read on lease and copied (a lease refused or not lendable).
        var leasedFrames: Int
        var copiedFrames: Int
    }

    /// Counts frames; signals `reached` when the count gets to `target`.
    // @unchecked Sendable: atomics and a semaphore.
    private final class Counter: VideoFrameConsumer, @unchecked Sendable {
        let count = Atomic<Int>(0)
        let target = Atomic<Int>(.max)
        let reached = DispatchSemaphore(value: 0)
        func consumeFrame(_ frame: VideoFrame) { add() }
        func add() {
            let now = count.add(1, ordering: .relaxed).newValue
            if now == target.load(ordering: .relaxed) { reached.signal() }
        }
    }

    func run() throws -> Figures {
        var callback = Path(cpuPerFrameMicroseconds: .infinity, wakeUpsPerFrame: 0, frames: 0)
        var sequence = callback
        var leased = 0, copied = 0
        for _ in 0..<repeats {
            let byCallback = try measure(sequence: false)
            if byCallback.path.cpuPerFrameMicroseconds < callback.cpuPerFrameMicroseconds { callback = byCallback.path }
            let bySequence = try measure(sequence: true)
            if bySequence.path.cpuPerFrameMicroseconds < sequence.cpuPerFrameMicroseconds { sequence = bySequence.path }
            leased += bySequence.leased
            copied += bySequence.copied
        }
        return Figures(callback: callback, sequence: sequence, ratio: sequence.cpuPerFrameMicroseconds / callback.cpuPerFrameMicroseconds,
                       leasedFrames: leased, copiedFrames: copied)
    }

    /// One run of the callback or of the sequence on the capture executor.
    private func measure(sequence: Bool) throws -> (path: Path, leased: Int, copied: Int) {
        let counter = Counter()
        counter.target.store(warmUp, ordering: .relaxed)
        let frames = sequence ? source.frameSequence(bufferSize: 4) : nil
        if !sequence { source.consumer = counter }
        try source.start()
        var reader: Task<Void, any Error>?
        defer {
            source.stop()
            source.consumer = nil
            reader?.cancel()
        }
        if let frames {
            reader = Task(executorPreference: source.captureExecutor) {
                for try await frame in frames {
                    counter.add()
                    frame.release()
                }
            }
        }
        let limit = 30 + Double(warmUp + self.frames) / 5   // at 5 fps or more
        guard counter.reached.wait(timeout: .now() + limit) == .success else {
            throw BenchmarkError("fewer than \(warmUp) frames from \(name) in \(Int(limit)) s (is the screen changing?)")
        }
        let pid = getpid()
        let before = ThreadCPU.sample(of: pid)
        let start = counter.count.load(ordering: .relaxed)
        counter.target.store(start + self.frames, ordering: .relaxed)
        if counter.count.load(ordering: .relaxed) < start + self.frames,
           counter.reached.wait(timeout: .now() + limit) == .timedOut {
            throw BenchmarkError("fewer than \(self.frames) frames from \(name) in \(Int(limit)) s (is the screen changing?)")
        }
        let after = ThreadCPU.sample(of: pid)
        let count = counter.count.load(ordering: .relaxed) - start
        let cpu = (ProcessCPU.cpuNanoseconds(of: pid, threads: after) ?? 0) - (ProcessCPU.cpuNanoseconds(of: pid, threads: before) ?? 0)
        let wakeUps = ProcessCPU.wakeUps(of: after) - ProcessCPU.wakeUps(of: before)
        return (Path(cpuPerFrameMicroseconds: cpu / 1e3 / Double(count), wakeUpsPerFrame: wakeUps / Double(count), frames: count),
                frames?.leasedFrames ?? 0, frames?.copiedFrames ?? 0)
    }

    /// The figures as the benchmark prints them: one line a path, then the ratio.
    static func lines(_ figures: Figures, timing: String) -> [String] {
        func line(_ what: String, _ path: Path) -> String {
            String(format: "%@ %8.1f µs CPU/frame  %5.2f wake-ups/frame  (%d frames)", what.padding(toLength: 44, withPad: " ", startingAt: 0),
                   path.cpuPerFrameMicroseconds, path.wakeUpsPerFrame, path.frames)
        }
        return [line("callback (consumer)", figures.callback),
                line("frames() on the capture executor", figures.sequence),
                String(format: "sequence = %.2f x callback (%@; same process; %d frames on lease, %d copied)",
                       figures.ratio, timing, figures.leasedFrames, figures.copiedFrames)]
    }
}
