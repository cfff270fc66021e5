import MediaDevicesCore
import Glibc

/// On demand: the watcher thread's work. It wakes every `scanInterval` (and at once when a
/// PipeWire node's status changes: its stream's state, its negotiated format, the links from
/// it), and scans the loopback devices' openers in `/proc` when one was opened or closed.
extension VirtualCamera {
    /// What the watcher thread carries from one scan to the next.
    struct Watch {
        /// The loopback outputs, by canonical node path.
        let loopbacks: [(String, Output)]
        var tracker = ConsumerTracker()
        /// The PipeWire consumers seen, by output and link id.
        var links: [LinkKey: VirtualCameraConsumer] = [:]
        /// Whether a node's consumer was streaming at the last scan.
        var streaming = false

        struct LinkKey: Hashable {
            var output: Output
            var link: UInt32
        }

        init(loopbacks: [(String, Output)]) { self.loopbacks = loopbacks }
    }

    /// One scan of the watcher thread: publishes the consumers and starts or stops the source.
    /// The loopback devices' openers are scanned only with `scanOpeners`. Returns false once the
    /// camera is stopping.
    func scan(_ watch: inout Watch, scanOpeners: Bool) -> Bool {
        if state.withLock({ $0.phase == .stopping }) { return false }
        var connected: [VirtualCameraConsumer] = []
        var left: [VirtualCameraConsumer] = []
        let loopbacks = watch.loopbacks
        func consumer(_ opener: NodeOpeners.Opener) -> VirtualCameraConsumer {
            VirtualCameraConsumer(pid: opener.pid, command: opener.command,
                                  output: loopbacks.first { $0.0 == opener.node }?.1 ?? .v4l2Loopback(path: opener.node))
        }
        if scanOpeners && !loopbacks.isEmpty {
            let (came, went) = watch.tracker.update(NodeOpeners().scan(loopbacks.map(\.0)))
            connected += came.map(consumer)
            left += went.map(consumer)
        }
        let streaming = scanNodes(&watch, connected: &connected, left: &left)
        let newStream = streaming && !watch.streaming
        watch.streaming = streaming
        let all = watch.tracker.consumers.map(consumer)
            + watch.links.sorted { ($0.key.output.description, $0.key.link) < ($1.key.output.description, $1.key.link) }.map(\.value)
        state.withLock { $0.consumers = all }
        for consumer in left {
            events_.send(.consumerLeft(consumer))
            logger?.info("virtual camera consumer left: \(consumer)", metadata: metadata)
        }
        for consumer in connected {
            events_.send(.consumerConnected(consumer))
            logger?.info("virtual camera consumer connected: \(consumer)", metadata: metadata)
        }
        reconcile(hasConsumers: !watch.tracker.consumers.isEmpty || streaming, newConsumer: !connected.isEmpty || newStream)
        do {
            try updatePumps()
        } catch {
            logger?.error("virtual camera could not feed an output: \(error)", metadata: metadata)
        }
        return true
    }

    /// The PipeWire nodes' consumers (links from them) into `watch.links`, what changed into
    /// `connected` and `left`; whether a node's stream is streaming.
    private func scanNodes(_ watch: inout Watch, connected: inout [VirtualCameraConsumer],
                           left: inout [VirtualCameraConsumer]) -> Bool {
        #if PipeWire
        var streaming = false
        var current: [Watch.LinkKey: VirtualCameraConsumer] = [:]
        for (output, node) in state.withLock({ $0.nodes }) {
            let status = node.status
            if status.isStreaming { streaming = true }
            for link in status.consumers {
                let key = Watch.LinkKey(output: output, link: link.linkID)
                if let known = watch.links[key] {
                    current[key] = known
                    continue
                }
                let command = link.pid > 0 ? NodeOpeners.command(of: "/proc/\(link.pid)/comm") : ""
                current[key] = VirtualCameraConsumer(pid: link.pid, command: command.isEmpty ? link.nodeName : command, output: output)
            }
        }
        for (key, consumer) in watch.links.sorted(by: { $0.key.link < $1.key.link }) where current[key] == nil { left.append(consumer) }
        for (key, consumer) in current.sorted(by: { $0.key.link < $1.key.link }) where watch.links[key] == nil { connected.append(consumer) }
        watch.links = current
        return streaming
        #else
        return false
        #endif
    }

    /// Starts or stops the source for the consumers there are.
    private func reconcile(hasConsumers: Bool, newConsumer: Bool) {
        let want = !onDemand || hasConsumers
        let (running, failed) = state.withLock { ($0.running, $0.failed) }
        if running && !source.isCapturing {
            // It ended by itself (failed; a pump sent why): end the nodes' streams, and restart
            // only for a new consumer.
            stopSource()
            state.withLock { $0.failed = true }
            republishNodes()
            if want && newConsumer { startSource() }
            return
        }
        if want && !running && (!failed || newConsumer) {
            startSource()
        } else if !want && running {
            stopSource()
        }
        if !want { state.withLock { $0.failed = false } }
    }

    /// Removes each PipeWire node and publishes it again, idle: a consumer of a node whose
    /// source failed gets the end of its stream, not a picture that stays. A node's name is free
    /// again once PipeWire has handled the old node's removal: tried for up to 5 s (a busy
    /// machine takes its time).
    private func republishNodes() {
        #if PipeWire
        let (nodes, offers, changes) = state.withLock { ($0.nodes, $0.offers, $0.changes) }
        guard !nodes.isEmpty, let changes else { return }
        var published: [(output: Output, node: PipeWireCameraOutput)] = []
        for (output, node) in nodes {
            node.close()
            var lastError: MediaDevicesError?
            for _ in 0..<50 {
                do {
                    published.append((output, try VirtualCamera.publishNode(name: node.name, offers: offers, changes: changes)))
                    lastError = nil
                    break
                } catch {
                    lastError = error
                    guard error.code == .busy else { break }
                    usleep(100_000)
                }
            }
            if let lastError {
                events_.send(.sourceFailed(lastError))
                logger?.error("virtual camera could not publish \(output) again: \(lastError)", metadata: metadata)
            } else {
                logger?.info("virtual camera ended \(output)'s streams (the source failed) and published it again", metadata: metadata)
            }
        }
        state.withLock { $0.nodes = published }
        #endif
    }
}
