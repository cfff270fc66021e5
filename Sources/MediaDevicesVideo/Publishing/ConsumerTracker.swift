/// Turns successive scans of a node's openers (``NodeOpeners``) into consumers that come and go.
/// Internal; unit-tested.
///
/// A process counts as a consumer once it has held the node in `confirmations` scans in a row:
/// programs that only look (a browser listing cameras, `v4l2-ctl --all`) open the node for
/// milliseconds, and should not start a camera. It has left at the first scan without it.
struct ConsumerTracker {
    /// Scans in a row a process must be seen in before it counts.
    let confirmations: Int
    /// The consumers now, sorted by pid, then node.
    private(set) var consumers: [NodeOpeners.Opener] = []
    /// Openers not confirmed yet, with the scans in a row they were seen in.
    private var pending: [Key: Int] = [:]

    private struct Key: Hashable {
        var pid: Int32
        var node: String
    }

    init(confirmations: Int = 2) { self.confirmations = max(1, confirmations) }

    /// Whether an opener waits for another scan to be confirmed.
    var hasPending: Bool { !pending.isEmpty }

    /// Takes one scan; returns the consumers it confirmed and those that left.
    mutating func update(_ openers: [NodeOpeners.Opener]) -> (connected: [NodeOpeners.Opener], left: [NodeOpeners.Opener]) {
        let seen = Set(openers.map { Key(pid: $0.pid, node: $0.node) })
        let left = consumers.filter { !seen.contains(Key(pid: $0.pid, node: $0.node)) }
        consumers.removeAll { !seen.contains(Key(pid: $0.pid, node: $0.node)) }
        let known = Set(consumers.map { Key(pid: $0.pid, node: $0.node) })
        var connected: [NodeOpeners.Opener] = []
        var stillPending: [Key: Int] = [:]
        for opener in openers {
            let key = Key(pid: opener.pid, node: opener.node)
            guard !known.contains(key) else { continue }
            let count = (pending[key] ?? 0) + 1
            if count >= confirmations {
                connected.append(opener)
            } else {
                stillPending[key] = count
            }
        }
        pending = stillPending
        consumers = (consumers + connected).sorted { ($0.pid, $0.node) < ($1.pid, $1.node) }
        return (connected, left)
    }
}
