/// One thing the microbenchmarks measure, shared by the two ways they are measured: the
/// package-benchmark target (wall clock, allocations) and `InstructionCounts` (instructions,
/// counted under valgrind by `scripts/microbenchmarks.sh instructions`).
public struct Workload: Sendable {
    /// The benchmark's name, as its baselines record it.
    public let name: String
    /// Makes the input and the state (outside any measurement) and returns one iteration: one
    /// frame converted or decoded, one 10 ms audio period resampled or processed. The first call
    /// of an iteration may size buffers; the measurements leave it out, as a stream would.
    public let prepare: @Sendable () throws -> () throws -> Void

    /// A workload named `name` whose iterations `prepare` makes.
    public init(_ name: String, prepare: @escaping @Sendable () throws -> () throws -> Void) {
        self.name = name
        self.prepare = prepare
    }

    /// Every workload, in the order the benchmarks run them.
    public static var all: [Workload] {
        conversionWorkloads + mjpegWorkloads + resamplerWorkloads + voiceProcessingWorkloads
    }
}

/// Keeps `value` alive and used, so that the optimiser cannot drop the work that made it.
@inline(never) @_optimize(none)
public func sink<T>(_ value: T) {}
