import ArgumentParser
import Foundation

/// `--count` and `--timeout` for commands that print things as they happen (`monitor`,
/// `orientation --watch`), so scripts and tests can bound them.
struct StreamingOptions: ParsableArguments {
    @Option(help: "Stop after this many events.")
    var count: Int?

    @Option(help: "Stop after this many seconds (exit status 0).")
    var timeout: Double?

    /// Calls `handle` for each element of `sequence` (on a task) until `count` elements, the
    /// end of the sequence or `timeout`, whichever comes first; blocks the caller meanwhile.
    func forEach<S: AsyncSequence & Sendable>(_ sequence: S, _ handle: @escaping @Sendable (S.Element) -> Void) where S.Element: Sendable {
        let done = DispatchSemaphore(value: 0)
        let limit = count
        let task = Task {
            var seen = 0
            do {
                for try await element in sequence {
                    handle(element)
                    fflush(nil)
                    seen += 1
                    if let limit, seen >= limit { break }
                }
            } catch {}
            done.signal()
        }
        if let timeout { _ = done.wait(timeout: .now() + timeout) } else { done.wait() }
        task.cancel()
    }
}
