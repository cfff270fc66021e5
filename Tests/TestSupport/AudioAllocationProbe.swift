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

    /// Allocations on the audio thread over the measured periods; valid after `done`. With
    /// `workObserver` installed as well: only those made within the backend's own work for a
    /// period (not the library dispatch the thread runs between periods).
    public var allocations: UInt64 { bracketed.load(ordering: .acquiring) ? inWork.load(ordering: .acquiring) : count.load(ordering: .acquiring) }

    private let bracketed = Atomic<Bool>(false)
    private let seen = Atomic<Int>(0)
    private let workStart = Atomic<UInt64>(0)
    private let inWork = Atomic<UInt64>(0)

    /// To install as `AudioDriverSide.periodWorkObserver` beside `observer`, where the thread that
    /// moves the periods also runs a library's own dispatch (PulseAudio's loop thread): counts,
    /// and traces, only the allocations made within our work for the measured periods.
    public var workObserver: @Sendable (Bool) -> Void {
        { [self] begins in
            bracketed.store(true, ordering: .relaxed)
            let now = allocation_counter_this_thread()
            if begins {
                let periods = seen.load(ordering: .relaxed)
                let measuring = periods >= warmUp && periods < warmUp + measured
                workStart.store(measuring ? now : 0, ordering: .relaxed)
                if measuring { allocation_counter_trace(1) }
            } else {
                // Tracing ends with the work whatever period it reached (the library's dispatch
                // between periods is not ours, and tracing there slows the thread down).
                allocation_counter_trace(0)
                let start = workStart.load(ordering: .relaxed)
                guard start != 0 else { return }
                let made = now &- start
                if made > 0 && firstAllocating.load(ordering: .relaxed) < 0 { firstAllocating.store(seen.load(ordering: .relaxed), ordering: .relaxed) }
                inWork.add(made, ordering: .releasing)
            }
        }
    }

    /// The first measured period during which the thread allocated (-1: none), for diagnosis.
    public var firstAllocatingPeriod: Int { firstAllocating.load(ordering: .acquiring) }

    /// The observer to install.
    public var observer: AudioPeriodObserver {
        { [self] periods in
            seen.store(periods, ordering: .relaxed)
            if bracketed.load(ordering: .relaxed) {
                if periods == warmUp + measured { done.signal() }
                return
            }
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
