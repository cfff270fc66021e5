import MediaDevicesCore
import CV4L2
import Dispatch
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
                      tracker: (any OrientationTracker)? = nil) throws(MediaDevicesError) -> CaptureRun {
        do {
            return try startRun(session: session, buffers: plan, delivery: delivery, tracker: tracker)
        } catch {
            throw DisconnectProbe.classify(error, file: session.device.file)
        }
    }

    private static func startRun(session: CameraSession, buffers plan: BufferPlan, delivery: FrameDelivery,
                                 tracker: (any OrientationTracker)?) throws(MediaDevicesError) -> CaptureRun {
        let buffers = try V4L2Buffers(device: session.device, format: session.negotiation.format, count: plan.count,
                                      minimumQueued: plan.minimumQueued, exportingDMABuf: plan.exportsDMABuf)
        let device = session.device
        let orientation = FrameOrientation(mount: session.orientation, tracker: tracker, facesUser: session.info.position == .front)
        do {
            try buffers.streamOn()
            // `start()` returns once the thread runs the executor's jobs: a task made then with
            // `captureExecutor` as its preference starts on the capture thread, not on Swift's
            // global executor (whose first use starts libdispatch's manager thread, which then
            // wakes every second to watch its worker pool).
            let attached = DispatchSemaphore(value: 0)
            let run = try CaptureRun(name: "md-capture", delivery: delivery, loop: { wake, shouldStop in
                loop(buffers: buffers, wake: wake, shouldStop: shouldStop, orientation: orientation, delivery: delivery,
                     attached: { attached.signal() })
            }, cleanup: { failure in
                buffers.release()
                if failure != nil { device.file.close() }
            })
            attached.wait()
            return run
        } catch {
            buffers.release()
            throw error
        }
    }

    /// Polls and delivers until asked to stop (returns nil) or until the device fails (returns
    /// the error), running the executor's jobs (readers that prefer it) after each step.
    /// `attached` is called once the executor's jobs come to this thread.
    private static func loop(buffers: V4L2Buffers, wake: WakeUpEvent, shouldStop: @escaping @Sendable () -> Bool,
                             orientation: FrameOrientation, delivery: FrameDelivery, attached: () -> Void) -> MediaDevicesError? {
        let pump = CameraPump(buffers: buffers, wake: wake, shouldStop: shouldStop, orientation: orientation, delivery: delivery)
        let executor = delivery.executor
        executor.attach(wake: wake, loop: pump)
        attached()
        defer { executor.detach() }
        while pump.step() == .stepped { executor.runPending() }
        return pump.failure
    }
}
