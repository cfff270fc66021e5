import AllocationCounter
import Dispatch
import Glibc
import MediaDevices

/// A consumer that counts the heap allocations made on the capture thread between frame
/// `warmUp` and frame `warmUp + measured`: everything the source does per frame (poll, dequeue,
/// deliver, requeue, queue copies) happens on that thread. It allocates nothing itself.
public final class AllocationProbe: VideoFrameConsumer, @unchecked Sendable {
    private let warmUp: Int
    private let measured: Int
    private var seen = 0
    private var start: UInt64 = 0
    /// Allocations on the capture thread over the measured frames; valid after `done`.
    public private(set) var allocations: UInt64 = 0
    /// With `ALLOCATION_TRACE` set, each allocation measured prints its call stack to stderr.
    private let traces = getenv("ALLOCATION_TRACE") != nil
    /// The capture thread (set at the first frame).
    public private(set) var captureThread: pthread_t?
    /// Signalled once the measured frames have passed.
    public let done = DispatchSemaphore(value: 0)

    /// Measures `measured` frames after `warmUp` frames.
    public init(warmUp: Int, measured: Int) {
        self.warmUp = warmUp
        self.measured = measured
    }

    /// Whether malloc is interposed in this process (if not, the probe measures nothing).
    public static var isActive: Bool { allocation_counter_is_active() != 0 }

    /// Why the probe cannot count in this binary: the sanitizer it was built with
    /// (scripts/sanitize.sh), which owns malloc; `nil` in a normal build, where it always counts.
    public static var unavailableReason: String? {
        allocation_counter_sanitizer().map {
            "built with \(String(cString: $0)), which owns malloc: allocation counting is off (scripts/sanitize.sh)"
        }
    }

    /// The process's heap in use, in kilobytes (glibc's `mallinfo2`: handed out and not freed,
    /// all arenas; not the free memory arenas keep); `nil` under a sanitizer.
    public static var heapInUseKilobytes: Int? {
        let bytes = allocation_counter_heap_in_use()
        return bytes < 0 ? nil : Int(bytes / 1024)
    }

    /// Counts.
    public func consumeFrame(_ frame: VideoFrame) {
        if seen == 0 { captureThread = pthread_self() }
        seen += 1
        if seen == warmUp {
            start = allocation_counter_this_thread()
            if traces { allocation_counter_trace(1) }
        } else if seen == warmUp + measured {
            allocation_counter_trace(0)
            allocations = allocation_counter_this_thread() - start
            done.signal()
        }
    }
}
