/// `Duration` as the plain numbers the C APIs and reports below the public API need.
package extension Duration {
    /// Whole nanoseconds, saturated at `Int64`'s range.
    var nanosecondCount: Int64 {
        let (seconds, attoseconds) = components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return seconds < 0 ? .min : .max }
        let (sum, overflowSum) = whole.addingReportingOverflow(attoseconds / 1_000_000_000)
        return overflowSum ? (seconds < 0 ? .min : .max) : sum
    }

    /// Whole milliseconds, saturated at `Int32`'s range (for `poll` and friends).
    var millisecondCount: Int32 { Int32(clamping: nanosecondCount / 1_000_000) }

    /// Seconds as a `Double`.
    var inSeconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }

    /// Milliseconds as a `Double`.
    var inMilliseconds: Double { inSeconds * 1e3 }

    /// Microseconds as a `Double`.
    var inMicroseconds: Double { inSeconds * 1e6 }
}
