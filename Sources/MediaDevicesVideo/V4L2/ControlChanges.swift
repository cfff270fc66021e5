import MediaDevicesCore
import CV4L2
import Glibc

/// A control changed (`V4L2_EVENT_CTRL`): its value, its range, its flags, or several.
public struct ControlChange: Sendable, Hashable, CustomStringConvertible {
    /// What changed (see ``valueChanged``, ``flagsChanged``, ``rangeChanged``).
    package struct Changes: OptionSet, Sendable, Hashable {
        /// The kernel's `V4L2_EVENT_CTRL_CH_*` bits.
        package let rawValue: UInt32
        /// Changes from the kernel's bits.
        package init(rawValue: UInt32) { self.rawValue = rawValue }
        /// `V4L2_EVENT_CTRL_CH_VALUE`.
        package static let value = Changes(rawValue: 1)
        /// `V4L2_EVENT_CTRL_CH_FLAGS` (e.g. inactive when an auto mode turns on).
        package static let flags = Changes(rawValue: 2)
        /// `V4L2_EVENT_CTRL_CH_RANGE`.
        package static let range = Changes(rawValue: 4)
    }

    /// The control's id.
    public let id: UInt32
    /// The control's key (`exposure_time_absolute`).
    public let key: String
    /// What changed.
    package let changes: Changes
    /// The value changed (`V4L2_EVENT_CTRL_CH_VALUE`).
    public var valueChanged: Bool { changes.contains(.value) }
    /// The flags changed (`V4L2_EVENT_CTRL_CH_FLAGS`): the control became inactive when an
    /// automatic mode turned on, or active again (``isInactive``, ``isWritable``).
    public var flagsChanged: Bool { changes.contains(.flags) }
    /// The range, step or default changed (`V4L2_EVENT_CTRL_CH_RANGE`).
    public var rangeChanged: Bool { changes.contains(.range) }
    /// The value after the change (integer controls; `.none` for strings and arrays, which
    /// events do not carry).
    public let value: ControlValue
    /// The flags after the change.
    package let flags: ControlFlags
    /// Whether a value can be set now (after the change), as ``CameraControl/isWritable`` says.
    public var isWritable: Bool { flags.isDisjoint(with: [.readOnly, .inactive, .disabled, .grabbed]) }
    /// Whether an automatic mode governs the control now (after the change), as
    /// ``CameraControl/isInactive`` says.
    public var isInactive: Bool { flags.contains(.inactive) }
    /// The range after the change.
    public let minimum: Int64
    /// The range after the change.
    public let maximum: Int64
    /// The step after the change.
    public let step: UInt64
    /// The default after the change.
    public let defaultValue: Int64

    /// `brightness: value 10` / `exposure_time_absolute: flags inactive`.
    public var description: String {
        var parts: [String] = []
        if changes.contains(.value) { parts.append("value \(value)") }
        if changes.contains(.flags) { parts.append("flags \(flags.names.isEmpty ? "none" : flags.description)") }
        if changes.contains(.range) { parts.append("range \(minimum)...\(maximum) step \(step) default \(defaultValue)") }
        return "\(key): " + parts.joined(separator: ", ")
    }
}

/// Control changes on one camera as they happen, from any process: the sequence
/// ``CaptureDevice/controlChanges()`` returns. It has its own file descriptor and thread,
/// subscribed to every control; `stop()`, cancelling the reading task, or dropping the sequence
/// and its iterator ends it. Package-internal (the command-line tool and the tests stop it).
package final class ControlChanges: AsyncSequence, Sendable {
    /// One change.
    package typealias Element = ControlChange
    private let stream: AsyncStream<ControlChange>
    private let continuation: AsyncStream<ControlChange>.Continuation
    private let wake: WakeUpEvent
    private let thread: CaptureThread

    /// Watches every control of the V4L2 device at `path`, reported by its own id and key.
    convenience init(path: String) throws(MediaDevicesError) {
        try self.init(path: path) { controls in Dictionary(controls.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first }) }
    }

    /// Watches the controls of the V4L2 device at `path` that `relabel` (given the device's
    /// controls) maps by V4L2 id to a control, reported by that control's id and key (a
    /// PipeWire node's names for the same controls); the others are not subscribed.
    init(path: String, relabel: ([CameraControl]) -> [UInt32: CameraControl]) throws(MediaDevicesError) {
        let device = try V4L2Device(path: path)
        let all = try device.queryControls().filter { $0.type != .controlClass }
        let names = relabel(all)
        var watched: [UInt32: (id: UInt32, key: String)] = [:]
        for control in all {
            guard let reported = names[control.id], watched[control.id] == nil else { continue }
            var subscription = v4l2_event_subscription()
            subscription.type = UInt32(V4L2_EVENT_CTRL)
            subscription.id = control.id
            try device.file.ioctl(cv4l2_VIDIOC_SUBSCRIBE_EVENT, &subscription, "VIDIOC_SUBSCRIBE_EVENT")
            watched[control.id] = (reported.id, reported.key)
        }
        let keys = watched
        (stream, continuation) = AsyncStream<ControlChange>.makeStream(bufferingPolicy: .bufferingNewest(1024))
        let wake = try WakeUpEvent()
        self.wake = wake
        let continuation = self.continuation
        // A reader that is cancelled, or an iterator dropped, ends the watch: the thread leaves
        // its poll (joined when the sequence goes).
        continuation.onTermination = { _ in wake.signal() }
        thread = try CaptureThread(name: "md-controls") {
            ControlChanges.run(device, keys: keys, wake: wake, continuation: continuation)
        }
    }

    deinit { stop() }

    /// Stops watching and ends the sequence. Safe to call more than once.
    package func stop() {
        wake.signal()
        thread.join()
        continuation.finish()
    }

    /// The sequence's iterator (one consumer); it keeps the watch alive while it is read.
    package func makeAsyncIterator() -> Iterator { Iterator(owner: self, base: stream.makeAsyncIterator()) }

    /// The iterator: the stream's, holding the watch (its thread and descriptor).
    package struct Iterator: AsyncIteratorProtocol {
        let owner: ControlChanges
        var base: AsyncStream<ControlChange>.Iterator

        /// The next change; `nil` once the watch stopped or the reading task was cancelled.
        package mutating func next() async -> ControlChange? { await base.next() }

        /// The next change, on the caller's isolation.
        package mutating func next(isolation actor: isolated (any Actor)?) async -> ControlChange? {
            await base.next(isolation: actor)
        }
    }

    private static func run(_ device: V4L2Device, keys: [UInt32: (id: UInt32, key: String)], wake: WakeUpEvent,
                            continuation: AsyncStream<ControlChange>.Continuation) {
        var fds = [pollfd(fd: device.file.rawValue, events: Int16(POLLPRI), revents: 0),
                   pollfd(fd: wake.descriptor, events: Int16(POLLIN), revents: 0)]
        while true {
            fds[0].revents = 0
            fds[1].revents = 0
            let ready = fds.withUnsafeMutableBufferPointer { poll($0.baseAddress, 2, -1) }
            if ready < 0 && errno == EINTR { continue }
            if ready < 0 || fds[1].revents != 0 { break }
            if fds[0].revents & Int16(POLLERR | POLLHUP | POLLNVAL) != 0 && fds[0].revents & Int16(POLLPRI) == 0 { break }
            var event = cv4l2_control_event()
            while true {
                let result = cv4l2_dequeue_control_event(device.file.rawValue, &event)
                if result < 0 { break }
                if result == 0 { continue }
                let type = ControlType(rawValue: event.type)
                let reported = keys[event.id] ?? (event.id, "0x" + String(event.id, radix: 16))
                continuation.yield(ControlChange(
                    id: reported.id, key: reported.key,
                    changes: ControlChange.Changes(rawValue: event.changes),
                    value: type.isInteger ? .integer(type.integerValue(event.value)) : .none, flags: ControlFlags(rawValue: event.flags),
                    minimum: event.minimum, maximum: event.maximum, step: UInt64(bitPattern: event.step),
                    defaultValue: event.default_value))
            }
        }
        continuation.finish()
    }
}
