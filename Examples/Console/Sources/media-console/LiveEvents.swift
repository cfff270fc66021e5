import Foundation
import Hummingbird
import MediaDevices

/// The page's live updates, as server-sent events:
/// - `GET /api/events`: `devices` when a camera, screen or sound card comes or goes
///   (`DeviceMonitor`), so the page's lists follow hotplug without a reload;
/// - `GET /api/cameras/{id}/events`: `control` for every change of the camera's controls, also
///   those another program makes (`controlChanges()`), and `stats` once a second while the
///   console streams that camera (its capture statistics);
/// - `GET /api/audio/level?device=UNIQUEID`: `level` ten times a second, the microphone's peak
///   and RMS per channel (`AudioDriver.capturedChunks`), captured only while a page listens.
enum LiveEvents {
    /// A device that came, went or changed.
    struct DeviceChange: Encodable, Sendable {
        let action: String, kind: String, uniqueID: String, devnode: String?
    }

    /// A control's new state.
    struct ControlEcho: Encodable, Sendable {
        let key: String, value: ControlValue, flags: ControlFlags, minimum: Int64, maximum: Int64
    }

    /// A running capture's figures.
    struct Stats: Encodable, Sendable {
        let delivered: Int, dropped: Int, corrupt: Int, fps: Double, meanDelayMilliseconds: Double, maxDelayMilliseconds: Double, viewers: Int
    }

    /// A microphone's level, in dBFS per channel.
    struct Level: Encodable, Sendable {
        let peak: [Double], rms: [Double]
    }

    /// `GET /api/events`: every page shares one `DeviceMonitor` (its thread and descriptors),
    /// started by the first page and stopped when the last one goes.
    static let deviceEvents = DeviceEvents()

    actor DeviceEvents {
        private var streams: [UInt64: EventStream] = [:]
        private var next: UInt64 = 0
        private var monitor: DeviceMonitor?
        private var reader: Task<Void, Never>?

        /// The pages following the events now.
        var pages: Int { streams.count }

        func subscribe() throws -> Response {
            if monitor == nil {
                let started = try library { try DeviceMonitor() }
                monitor = started
                reader = Task { [weak self] in
                    for await event in started {
                        await self?.send(DeviceChange(action: event.action.rawValue, kind: event.kind.rawValue,
                                                      uniqueID: event.uniqueID, devnode: event.device.devnode))
                    }
                }
            }
            next += 1
            let id = next
            let events = EventStream()
            streams[id] = events
            return events.response { Task { await self.leave(id) } }
        }

        private func send(_ change: DeviceChange) {
            for events in streams.values { events.send("devices", change) }
        }

        private func leave(_ id: UInt64) {
            streams[id] = nil
            guard streams.isEmpty, let monitor else { return }
            monitor.stop()
            reader?.cancel()
            self.monitor = nil
            reader = nil
            say("stopped device events (a page left)")
        }
    }

    /// `GET /api/cameras/{id}/events`.
    static func camera(_ id: String, _ camera: DeviceCatalog.Camera, hub: StreamHub) throws -> Response {
        let events = EventStream()
        var changes: ControlChanges?
        if case .device(let device) = camera {
            changes = try library { try device.controlChanges() }
        }
        let watching = changes.map { changes in
            Task {
                for await change in changes {
                    events.send("control", ControlEcho(key: change.key, value: change.value, flags: change.flags,
                                                       minimum: change.minimum, maximum: change.maximum))
                }
            }
        }
        let counting = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(1))
                if let (statistics, viewers) = await hub.statistics(camera: id) {
                    events.send("stats", Stats(delivered: statistics.deliveredFrames, dropped: statistics.droppedFrames,
                                               corrupt: statistics.corruptFrames, fps: statistics.measuredFrameRate,
                                               meanDelayMilliseconds: milliseconds(statistics.meanCaptureDelay),
                                               maxDelayMilliseconds: milliseconds(statistics.maxCaptureDelay), viewers: viewers))
                }
            }
        }
        return events.response { [changes] in
            changes?.stop()
            watching?.cancel()
            counting.cancel()
            say("stopped the events of \(id) (a page left)")
        }
    }

    /// `GET /api/audio/level?device=UNIQUEID`.
    static func level(device uniqueID: String) async throws -> Response {
        let found = await AudioDevice.discover(pulseTimeout: .seconds(1))
        guard let device = found.inputs.first(where: { $0.uniqueID == uniqueID }) else {
            throw HTTPError(.notFound, message: "No microphone \(uniqueID); GET /api/devices lists them (audio, direction input)")
        }
        let driver = AudioDriver()
        try await library {
            try await driver.initializeCapture(device: device, format: AudioFormat(sampleRate: 48000, channels: 1, sampleFormat: .floatLE))
            try driver.startCapture()
        }
        let events = EventStream()
        let chunks = driver.capturedChunks(frames: 4800)   // 100 ms
        let reader = Task {
            do {
                for try await chunk in chunks {
                    events.send("level", Level(peak: chunk.level.peakDecibels, rms: chunk.level.rmsDecibels))
                }
            } catch {
                events.send("problem", ["message": String(describing: error)])
            }
            events.finish()
        }
        say("metering \(uniqueID)")
        return events.response {
            driver.stopCapture()
            driver.capture.terminate()
            reader.cancel()
            say("stopped metering \(uniqueID) (a page left)")
        }
    }

    private static func milliseconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
    }
}
