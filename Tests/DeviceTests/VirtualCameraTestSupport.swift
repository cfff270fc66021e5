import Foundation
import MediaDevices
import XCTest

/// What the virtual camera tests share: their events collected, a reader of a PipeWire node,
/// waiting on a condition.
extension XCTestCase {
    /// Waits up to `seconds` for `condition`, checking every `every` microseconds.
    func waitUntil(seconds: Double, every: UInt32 = 5_000, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if condition() { return true }
            usleep(every)
        }
        return condition()
    }
}

extension CameraSession {
    /// `gst-launch-1.0 pipewiresrc path=ID ! videoconvert ! video/x-raw,format=I420 ! fakesink`
    /// in this session, not started yet: a reader that streams until it is killed.
    func pipewiresrc(node id: UInt32) -> Process {
        let gst = Process()
        gst.executableURL = URL(fileURLWithPath: "/usr/bin/gst-launch-1.0")
        gst.arguments = ["-q", "pipewiresrc", "path=\(id)", "!", "videoconvert", "!", "video/x-raw,format=I420", "!", "fakesink"]
        gst.environment = ProcessInfo.processInfo.environment.merging(["XDG_RUNTIME_DIR": directory, "PIPEWIRE_REMOTE": remote]) { $1 }
        gst.standardOutput = FileHandle.nullDevice
        gst.standardError = FileHandle.nullDevice
        return gst
    }
}

/// Collects a virtual camera's events until their sequence ends.
final class EventLog: @unchecked Sendable {  // `events` written by the task, read after `done`
    private var events: [VirtualCameraEvent] = []
    private let done = DispatchSemaphore(value: 0)

    init(_ sequence: some AsyncSequence<VirtualCameraEvent, Never> & Sendable) {
        Task { [self] in
            for await event in sequence { events.append(event) }
            done.signal()
        }
    }

    /// The events, once the sequence ended (within 10 s).
    func wait() -> [VirtualCameraEvent] {
        _ = done.wait(timeout: .now() + 10)
        return events
    }
}

/// A flag one thread sets and another reads.
final class SeenFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var seen = false
    func set() { lock.withLock { seen = true } }
    var value: Bool { lock.withLock { seen } }
}

extension VirtualCameraEvent {
    /// `+command`, `-command`, `started`, `stopped`, `failed`: events as the tests compare them.
    var kind: String {
        switch self {
        case .consumerConnected(let consumer): "+\(consumer.command)"
        case .consumerLeft(let consumer): "-\(consumer.command)"
        case .sourceStarted: "started"
        case .sourceStopped: "stopped"
        case .sourceFailed: "failed"
        }
    }
}
