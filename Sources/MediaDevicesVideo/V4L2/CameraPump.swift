import MediaDevicesCore
import CV4L2
import Glibc

/// One camera run's capture loop, a step at a time: poll the device and the run's wake-up
/// event, dequeue one frame, deliver it. The capture thread steps it in a loop (running the
/// ``CaptureExecutor``'s jobs between steps); a reader on that executor whose sequence is empty
/// steps it too, instead of suspending (`CaptureExecutor.stepForReader`). Used only on the
/// capture thread; allocates nothing per step.
// @unchecked Sendable: made before the capture thread starts, then used by that thread alone.
final class CameraPump: CaptureExecutor.Loop, @unchecked Sendable {
    private let buffers: V4L2Buffers
    private let wake: WakeUpEvent
    private let shouldStop: @Sendable () -> Bool
    private let orientation: FrameOrientation
    private let delivery: FrameDelivery
    /// The device, then the wake-up event.
    private let fds: UnsafeMutablePointer<pollfd>
    /// The failure that ended the loop; `nil` while it runs, and when it was asked to stop.
    private(set) var failure: MediaDevicesError?

    init(buffers: V4L2Buffers, wake: WakeUpEvent, shouldStop: @escaping @Sendable () -> Bool,
         orientation: FrameOrientation, delivery: FrameDelivery) {
        self.buffers = buffers
        self.wake = wake
        self.shouldStop = shouldStop
        self.orientation = orientation
        self.delivery = delivery
        fds = .allocate(capacity: 2)
        fds[0] = pollfd(fd: buffers.device.file.rawValue, events: Int16(POLLIN), revents: 0)
        fds[1] = pollfd(fd: wake.descriptor, events: Int16(POLLIN), revents: 0)
    }

    deinit { fds.deallocate() }

    /// Waits for the device (or a wake-up) and delivers at most one frame. `.leave` once asked
    /// to stop or after a failure (`failure` then says which), and from then on.
    func step() -> CaptureExecutor.Step {
        if failure != nil || shouldStop() { return .leave }
        let file = buffers.device.file
        fds[0].revents = 0
        fds[1].revents = 0
        let ready = poll(fds, 2, 500)
        if ready < 0 {
            if errno == EINTR { return .stepped }
            return leave(MediaDevicesError.fromErrno(errno, device: file.path, operation: "poll"))
        }
        if fds[1].revents != 0 {
            // Asked to stop, or woken for a job of the executor (run by whoever steps next:
            // the capture loop runs it, a reader suspends for it).
            wake.reset()
            if shouldStop() { return .leave }
        }
        if ready == 0 {
            // No frame for a while: make sure the device is still there, and still sending.
            if let gone = DisconnectProbe.now(file, after: "poll") { return leave(gone) }
            if let stalled = delivery.stall(device: file.path) { return leave(stalled) }
            return .stepped
        }
        if fds[0].revents == 0 {
            if let stalled = delivery.stall(device: file.path) { return leave(stalled) }
            return .stepped
        }
        let dequeued: Bool
        do {
            dequeued = try buffers.withNextFrame(orientation: orientation.current) { delivery.deliver($0) }
        } catch {
            // After an unplug, DQBUF fails with ENODEV, or with EINVAL/EIO when it races the
            // driver's teardown (seen with uvcvideo): ask the node.
            return leave(DisconnectProbe.classify(error, file: file))
        }
        if !dequeued, fds[0].revents & Int16(POLLERR | POLLHUP | POLLNVAL) != 0 {
            // The queue is in error and DQBUF had nothing: the driver stopped streaming.
            return leave(DisconnectProbe.classify(MediaDevicesError(
                .io, device: file.path, operation: "poll",
                detail: "The driver put the capture queue in an error state (a fatal streaming error); restart capture, and see `dmesg`"),
                file: file))
        }
        return .stepped
    }

    private func leave(_ error: MediaDevicesError) -> CaptureExecutor.Step {
        failure = error
        return .leave
    }
}
