import CV4L2
import Glibc

/// Starts one capture run on an open camera: maps the buffers, starts streaming, and runs the
/// loop that polls the device, dequeues, delivers and requeues on the run's dedicated thread.
/// The thread releases the buffers when it ends (STREAMOFF → munmap → REQBUFS(0)); after a
/// failure it also closes the device, so an unplugged camera leaves nothing open.
enum CameraStream {
    /// How many buffers to ask for, how many stay queued whatever is leased, and whether to
    /// export them as DMA-BUF.
    struct BufferPlan {
        var count = 4
        var minimumQueued = 2
        var exportsDMABuf = false
    }

    /// Starts capturing from `session` into `delivery`.
    /// A failure while the camera is being unplugged is `.disconnected` (`DisconnectProbe`).
    static func start(session: CameraSession, buffers plan: BufferPlan, delivery: FrameDelivery,
                      tracker: (any OrientationTracker)? = nil) throws -> CaptureRun {
        do {
            return try startRun(session: session, buffers: plan, delivery: delivery, tracker: tracker)
        } catch let error as MediaDevicesError {
            throw DisconnectProbe.classify(error, file: session.device.file)
        }
    }

    private static func startRun(session: CameraSession, buffers plan: BufferPlan, delivery: FrameDelivery,
                                 tracker: (any OrientationTracker)?) throws -> CaptureRun {
        let buffers = try V4L2Buffers(device: session.device, format: session.negotiation.format, count: plan.count,
                                      minimumQueued: plan.minimumQueued, exportingDMABuf: plan.exportsDMABuf)
        let device = session.device
        let orientation = FrameOrientation(mount: session.orientation, tracker: tracker, facesUser: session.info.position == .front)
        do {
            try buffers.streamOn()
            return try CaptureRun(name: "md-capture", delivery: delivery, loop: { wake, shouldStop in
                loop(buffers: buffers, wake: wake, shouldStop: shouldStop, orientation: orientation, delivery: delivery)
            }, cleanup: { failure in
                buffers.release()
                if failure != nil { device.file.close() }
            })
        } catch {
            buffers.release()
            throw error
        }
    }

    /// Polls and delivers until woken or asked to stop (returns nil) or until the device fails
    /// (returns the error).
    private static func loop(buffers: V4L2Buffers, wake: WakeUpEvent, shouldStop: () -> Bool,
                             orientation: FrameOrientation, delivery: FrameDelivery) -> MediaDevicesError? {
        // Readers that prefer the delivery's executor run here, after each frame.
        let executor = delivery.executor
        executor.attach(wake: wake)
        defer { executor.detach() }
        return streamLoop(buffers: buffers, wake: wake, shouldStop: shouldStop, orientation: orientation,
                    delivery: delivery, executor: executor)
    }

    private static func streamLoop(buffers: V4L2Buffers, wake: WakeUpEvent, shouldStop: () -> Bool, orientation: FrameOrientation,
                             delivery: FrameDelivery, executor: CaptureExecutor) -> MediaDevicesError? {
        let file = buffers.device.file
        var fds = [pollfd(fd: file.rawValue, events: Int16(POLLIN), revents: 0),
                   pollfd(fd: wake.descriptor, events: Int16(POLLIN), revents: 0)]
        let deliver: (VideoFrame) -> Void = { delivery.deliver($0) }
        while !shouldStop() {
            fds[0].revents = 0
            fds[1].revents = 0
            let ready = fds.withUnsafeMutableBufferPointer { poll($0.baseAddress, 2, 500) }
            if ready < 0 {
                if errno == EINTR { continue }
                return MediaDevicesError.fromErrno(errno, device: file.path, operation: "poll")
            }
            if fds[1].revents != 0 {
                // Asked to stop, or woken for a job of the executor.
                wake.reset()
                if shouldStop() { return nil }
                executor.runPending()
                if ready == 1 { continue }
            }
            if ready == 0 {
                // No frame for a while: make sure the device is still there.
                if let gone = DisconnectProbe.now(file, after: "poll") { return gone }
                continue
            }
            do {
                while !shouldStop(), try buffers.withNextFrame(orientation: orientation.current, deliver) {
                    executor.runPending()
                }
            } catch let error as MediaDevicesError {
                // After an unplug, DQBUF fails with ENODEV, or with EINVAL/EIO when it races
                // the driver's teardown (seen with uvcvideo): ask the node.
                return DisconnectProbe.classify(error, file: file)
            } catch {
                return MediaDevicesError(.io, device: file.path, operation: "VIDIOC_DQBUF",
                                         detail: "Unexpected failure while dequeuing (\(error)); restart capture")
            }
            if fds[0].revents & Int16(POLLERR | POLLHUP | POLLNVAL) != 0 {
                // The queue is in error and DQBUF had nothing: the driver stopped streaming.
                return DisconnectProbe.classify(MediaDevicesError(
                    .io, device: file.path, operation: "poll",
                    detail: "The driver put the capture queue in an error state (a fatal streaming error); restart capture, and see `dmesg`"),
                    file: file)
            }
        }
        return nil
    }
}
