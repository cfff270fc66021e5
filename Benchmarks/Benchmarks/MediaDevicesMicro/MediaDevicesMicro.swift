import Benchmark
import MediaDevices

/// The microbenchmarks: one iteration is one frame converted or decoded, or one 10 ms audio
/// period resampled. Each measures CPU time and wall clock (this machine's kernel gives no
/// hardware instruction counter: `perf stat -e instructions` says "not supported"; where it does,
/// `instructions` is measured as well) and heap allocations per iteration.
let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.instructions, .cpuTotal, .wallClock, .mallocCountTotal],
        timeUnits: .microseconds,
        warmupIterations: 5,
        scalingFactor: .one,
        maxDuration: .seconds(2),
        maxIterations: 300,
        thresholds: Thresholds.perMetric
    )
    registerConversionBenchmarks()
    registerMJPEGBenchmarks()
    registerResamplerBenchmarks()
}

/// The regressions that fail `scripts/microbenchmarks`.
enum Thresholds {
    /// 10 % more instructions (or, without the counter, CPU time) at the median, or any allocation
    /// more than the baseline at any percentile.
    static var perMetric: [BenchmarkMetric: BenchmarkThresholds] { [
        .instructions: .init(relative: [.p50: 10.0]),
        .cpuTotal: .init(relative: [.p50: 10.0]),
        .mallocCountTotal: .init(absolute: [.p0: 0, .p50: 0, .p100: 0]),
    ] }
}
