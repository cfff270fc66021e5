import AllocationCounter
import Dispatch
import MediaDevices
import Synchronization

/// Counts the heap allocations an audio thread makes between period `warmUp` and period
/// `warmUp + measured`, through `AudioDriverSide.periodObserver` (called on that thread after
/// each period). It allocates nothing itself. Over the measured periods each allocation of the
/// thread prints its call stack to standard error (`allocation_counter_trace`), so a failing run
/// says what allocated.
public final class AudioAllocationProbe: Sendable {
    private let warmUp: Int
    private let measured: Int
    private let start = Atomic<UInt64>(0)
    private let count = Atomic<UInt64>(0)
    private let last = Atomic<UInt64>(0)
    private let firstAllocating = Atomic<Int>(-1)
    /// Signalled once the measured periods have passed.
    public let done = DispatchSemaphore(value: 0)

    /// Measures `measured` periods after `warmUp` periods.
    public init(warmUp: Int, measured: Int) {
        self.warmUp = warmUp
        self.measured = measured
    }

    /// Allocations on the audio thread over the measured periods; valid after `done`.
    public var allocations: UInt64 { count.load(ordering: .acquiring) }

    /// The first measured period during which the thread allocated (-1: none), for diagnosis.
    public var firstAllocatingPeriod: Int { firstAllocating.load(ordering: .acquiring) }

    /// The observer to install.
    public var observer: AudioPeriodObserver {
        { [self] periods in
            let now = allocation_counter_this_thread()
            if periods > warmUp && periods <= warmUp + measured && now != last.load(ordering: .relaxed) && firstAllocating.load(ordering: .relaxed) < 0 {
                firstAllocating.store(periods, ordering: .relaxed)
            }
            last.store(now, ordering: .relaxed)
            if periods == warmUp {
                start.store(now, ordering: .relaxed)
                allocation_counter_trace(1)
            } else if periods == warmUp + measured {
                allocation_counter_trace(0)
                count.store(allocation_counter_this_thread() - start.load(ordering: .relaxed), ordering: .releasing)
                done.signal()
            }
        }
    }
}
