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
///
/// The device events and each camera's events are shared by all their pages (`EventFanOut`):
/// one library subscription however many pages follow them.
enum LiveEvents {
    /// A device that came, went or changed.
    struct DeviceChange: Encodable, Sendable {
        let action: String, kind: String, uniqueID: String, devnode: String?
    }

    /// A control's new state.
    struct ControlEcho: Encodable, Sendable {
        let key: String, value: ControlValue, isWritable: Bool, minimum: Int64, maximum: Int64
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
    static let deviceEvents = EventFanOut(name: "device events")

    /// `GET /api/events`.
    static func devices() async throws -> Response {
        try await deviceEvents.subscribe { feed in
            let monitor = try library { try DeviceMonitor() }
            let reader = Task {
                for await event in monitor.events {
                    await feed.send("devices", DeviceChange(action: event.action.rawValue, kind: event.kind.rawValue,
                                                            uniqueID: event.uniqueID, devnode: event.devnode))
                }
                await feed.ended()
            }
            return {
                reader.cancel()
                monitor.stop()
            }
        }
    }

    /// `GET /api/cameras/{id}/events`: one fan-out per camera, so all the pages of a camera
    /// share one `controlChanges()` (its descriptor and thread) and one statistics poll.
    static let cameraEvents = CameraEventFanOuts()

    /// The camera events' fan-outs by camera id (one for each camera that has had a page; ids
    /// are checked against the devices first, so they are as few as the cameras).
    actor CameraEventFanOuts {
        private var fanOuts: [String: EventFanOut] = [:]

        /// The fan-out of camera `id`.
        func fanOut(_ id: String) -> EventFanOut {
            if let fanOut = fanOuts[id] { return fanOut }
            let fanOut = EventFanOut(name: "the events of \(id)")
            fanOuts[id] = fanOut
            return fanOut
        }

        /// The pages following each camera's events now (cameras without pages left out).
        func pages() async -> [String: Int] {
            var pages: [String: Int] = [:]
            for (id, fanOut) in fanOuts {
                let count = await fanOut.pages
                if count > 0 { pages[id] = count }
            }
            return pages
        }
    }

    /// `GET /api/cameras/{id}/events`: a page joins the camera's fan-out; the first one starts
    /// its sources (`controlChanges()` on a device; the test pattern has no controls).
    static func camera(_ id: String, _ camera: DeviceCatalog.Camera, hub: StreamHub) async throws -> Response {
        try await cameraEvents.fanOut(id).subscribe { feed in
            let watching: Task<Void, Never>?
            switch camera {
            case .device(let device):
                let changes = try library { try device.controlChanges() }
                watching = Task {
                    for await change in changes {
                        await feed.send("control", ControlEcho(key: change.key, value: change.value, isWritable: change.isWritable,
                                                               minimum: change.minimum, maximum: change.maximum))
                    }
                    await feed.ended()   // the camera went (after a stop, this start is no longer the feed's)
                }
            case .testPattern: watching = nil
            }
            let counting = Task {
                while !Task.isCancelled {
                    try? await Task.sleep(for: .seconds(1))
                    if let (statistics, viewers) = await hub.statistics(camera: id) {
                        await feed.send("stats", Stats(delivered: statistics.deliveredFrames, dropped: statistics.droppedFrames,
                                                       corrupt: statistics.corruptFrames, fps: statistics.measuredFrameRate,
                                                       meanDelayMilliseconds: milliseconds(statistics.meanCaptureDelay),
                                                       maxDelayMilliseconds: milliseconds(statistics.maxCaptureDelay), viewers: viewers))
                    }
                }
            }
            return {
                watching?.cancel()   // ends the control watch (its thread and descriptor)
                counting.cancel()
            }
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
