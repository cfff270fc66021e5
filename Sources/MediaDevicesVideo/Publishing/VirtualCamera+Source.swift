import MediaDevicesCore
import Glibc

/// The source's side of a ``VirtualCamera``: starting and stopping it, and the pumps that write
/// its frames to the outputs (one per distinct format, see ``PumpPlan``).
extension VirtualCamera {
    /// Starts the source and the pumps that write its frames; returns the failure, if any (also
    /// sent as an event). Called by `start()` before the watcher runs, then only by the watcher.
    @discardableResult
    func startSource() -> MediaDevicesError? {
        guard state.withLock({ $0.chosen != nil }) else { return nil }
        do {
            try source.start()
            figures.failureSent.store(false, ordering: .relaxed)
            state.withLock { state in
                state.running = true
                state.failed = false
            }
            try updatePumps()
            events_.send(.sourceStarted)
            logger?.info("virtual camera's source started", metadata: metadata)
            return nil
        } catch {
            stopPumps()
            source.stop()
            state.withLock { state in
                state.running = false
                state.failed = true
            }
            events_.send(.sourceFailed(error))
            logger?.error("virtual camera's source could not start: \(error)", metadata: metadata)
            return error
        }
    }

    /// Stops the source if it runs for us; whether it did.
    @discardableResult
    func stopSource() -> Bool {
        guard state.withLock({ state -> Bool in
            guard state.running else { return false }
            state.running = false
            return true
        }) else { return false }
        source.stop()  // ends the frame sequences: the pumps' loops end
        stopPumps()
        events_.send(.sourceStopped)
        logger?.info("virtual camera's source stopped", metadata: metadata)
        return true
    }

    /// Cancels the pumps and forgets their plans.
    private func stopPumps() {
        let pumps = state.withLock { state in
            defer {
                state.pumps.removeAll()
                state.plans.removeAll()
            }
            return state.pumps
        }
        for pump in pumps { pump.cancel() }
    }

    /// The plans the outputs want now: every loopback device in the published format; each
    /// PipeWire node whose consumer streams, in the format its link fixed.
    private func wantedPlans() -> [PumpPlan] {
        let (chosen, writers) = state.withLock { ($0.chosen, $0.writers) }
        guard let chosen else { return [] }
        let published = VideoFormat(pixelFormat: chosen.pixelFormat, width: chosen.size.width, height: chosen.size.height)
        var wanted: [(format: VideoFormat, sink: FrameSink)] = writers.map { (published, .loopback($0)) }
        #if PipeWire
        for (_, node) in state.withLock({ $0.nodes }) {
            let status = node.status
            if status.isStreaming, let offer = status.format { wanted.append((offer.format, .pipeWire(node))) }
        }
        #endif
        return PumpPlan.grouping(wanted)
    }

    /// Makes the pumps match what the outputs want, while the source runs: a plan that changed
    /// (a node's consumer came, left or fixed another format) gets a new sequence and task.
    func updatePumps() throws(MediaDevicesError) {
        guard state.withLock({ $0.running }) else { return }
        let wanted = wantedPlans()
        let (current, pumps) = state.withLock { ($0.plans, $0.pumps) }
        guard wanted != current else { return }
        var kept: [Task<Void, Never>] = []
        var made: [PumpPlan] = []
        // Plans unchanged keep their task; the others are cancelled and made again.
        for (index, plan) in current.enumerated() {
            if wanted.contains(plan) {
                kept.append(pumps[index])
                made.append(plan)
            } else {
                pumps[index].cancel()
            }
        }
        for plan in wanted where !made.contains(plan) {
            let frames: VideoFrames
            if let conversion = plan.conversion {
                frames = try source.frameSequence(bufferSize: 2, output: conversion)
            } else {
                frames = source.frameSequence(bufferSize: 2)
            }
            kept.append(VirtualCamera.pump(frames, to: plan.sinks, executor: source.captureExecutor, figures: figures,
                                           events: events_, device: label))
            made.append(plan)
        }
        state.withLock { state in
            state.pumps = kept
            state.plans = made
        }
        logger?.debug("virtual camera's pumps: \(made.map { "\($0.pixelFormat.fourCC) \($0.size) to \($0.sinks.count) outputs" })",
                      metadata: metadata)
    }

    /// The task that writes each frame of `frames` to `sinks`, on `executor` (the source's
    /// capture thread: one wake-up per frame, no allocation), counting in `figures`; a failure of
    /// the source is sent to `events` by the first pump that sees it (once per run).
    static func pump(_ frames: VideoFrames, to sinks: [FrameSink], executor: CaptureExecutor, figures: WriteFigures,
                     events: VirtualCameraEvents, device: String) -> Task<Void, Never> {
        Task(executorPreference: executor) {
            do {
                for try await buffer in frames {
                    buffer.withFrame { frame in
                        var index = 0
                        var failure: Int32 = 0
                        while index < sinks.count {
                            let result = sinks[index].write(frame)
                            if result != 0 { failure = result }
                            index += 1
                        }
                        if failure == 0 {
                            figures.written.add(1, ordering: .relaxed)
                        } else {
                            figures.failed.add(1, ordering: .relaxed)
                            figures.lastErrno.store(failure, ordering: .relaxed)
                        }
                    }
                }
            } catch {
                guard !figures.failureSent.exchange(true, ordering: .relaxed) else { return }
                events.send(.sourceFailed(MediaDevicesError.converting(error, device: device, operation: "capture")))
            }
        }
    }
}
