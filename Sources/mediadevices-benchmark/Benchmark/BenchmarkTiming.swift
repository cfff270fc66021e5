import Glibc

/// Wall-clock timing for the benchmarks: `CLOCK_MONOTONIC`, the clock the drivers stamp frames with.
enum BenchmarkClock {
    /// Now, in nanoseconds of `CLOCK_MONOTONIC`.
    static func nanoseconds() -> UInt64 { read(CLOCK_MONOTONIC) }

    /// CPU time this thread has used, in nanoseconds (`CLOCK_THREAD_CPUTIME_ID`): unlike wall
    /// time, it does not count the time other processes had the core, so timings stay stable on
    /// a shared machine.
    static func threadCPUNanoseconds() -> UInt64 { read(CLOCK_THREAD_CPUTIME_ID) }

    private static func read(_ clock: clockid_t) -> UInt64 {
        var now = timespec()
        clock_gettime(clock, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }
}

/// The time one call of a measured body took, over the rounds of a measurement.
struct Timing: Encodable {
    /// The median over the rounds, in nanoseconds per call.
    var medianNanoseconds: Double
    /// The fastest round, in nanoseconds per call.
    var minimumNanoseconds: Double
    /// Calls per round.
    var callsPerRound: Int
    /// Rounds measured.
    var rounds: Int
}

/// Measures several bodies that do comparable work (a pipeline call, the same library call made
/// directly, a memcpy), interleaved: every round times a batch of each, in an order that rotates
/// from round to round, so that a noisy moment (caches shared with other processes, frequency
/// changes) hits all of them alike. Time is this thread's CPU time, so time the core spent on
/// other processes is not counted. Each batch lasts about `batchNanoseconds`.
func measureInterleaved(_ bodies: [() -> Void], rounds: Int, batchNanoseconds: UInt64) -> [Timing] {
    // Warm up (first calls grow buffers, fault pages in) and calibrate the batch size.
    let calls: [Int] = bodies.map { body in
        body(); body()
        var count = 1
        while true {
            let start = BenchmarkClock.threadCPUNanoseconds()
            for _ in 0..<count { body() }
            let elapsed = BenchmarkClock.threadCPUNanoseconds() - start
            if elapsed >= batchNanoseconds / 4 || count >= 1 << 20 {
                return max(1, Int(Double(count) * Double(batchNanoseconds) / Double(max(elapsed, 1))))
            }
            count *= 4
        }
    }
    var samples = [[Double]](repeating: [], count: bodies.count)
    for round in 0..<rounds {
        for step in 0..<bodies.count {
            let index = (round + step) % bodies.count
            let body = bodies[index]
            let start = BenchmarkClock.threadCPUNanoseconds()
            for _ in 0..<calls[index] { body() }
            let elapsed = BenchmarkClock.threadCPUNanoseconds() - start
            samples[index].append(Double(elapsed) / Double(calls[index]))
        }
    }
    return samples.indices.map { index in
        let sorted = samples[index].sorted()
        return Timing(medianNanoseconds: median(sorted), minimumNanoseconds: sorted.first ?? 0,
                      callsPerRound: calls[index], rounds: rounds)
    }
}

/// The median of already sorted values.
func median(_ sorted: [Double]) -> Double {
    guard !sorted.isEmpty else { return 0 }
    let middle = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

/// The `p`-th percentile (0...100) of already sorted values, nearest rank.
func percentile(_ sorted: [Double], _ p: Double) -> Double {
    guard !sorted.isEmpty else { return 0 }
    let rank = Int((p / 100 * Double(sorted.count)).rounded(.up)) - 1
    return sorted[min(max(rank, 0), sorted.count - 1)]
}
