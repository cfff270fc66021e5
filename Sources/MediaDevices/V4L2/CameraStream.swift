import CV4L2
import Glibc
import Synchronization

/// One running capture: the buffers, the wake-up event and the dedicated thread that polls the
/// device, dequeues, delivers and requeues. The thread owns the teardown of the buffers; on a
/// fatal error it also closes the device and ends the delivery with the error.
final class CameraStream: Sendable {
    private let wake: WakeUpEvent
    private final class Flag: Sendable { let value = Atomic<Bool>(true) }
    private let running = Flag()
    private let thread: Mutex<CaptureThread?> = Mutex(nil)

    /// Maps `bufferCount` buffers, starts streaming and starts the thread.
    init(session: CameraSession, bufferCount: Int, delivery: FrameDelivery) throws {
        let buffers = try V4L2Buffers(device: session.device, format: session.negotiation.format, count: bufferCount)
        do {
            try buffers.streamOn()
        } catch {
            buffers.release()
            throw error
        }
        let wake = try WakeUpEvent()
        self.wake = wake
        let running = self.running
        let orientation = session.orientation
        let device = session.device
        let captureThread = try CaptureThread(name: "mediadevices-capture") {
            let failure = CameraStream.loop(buffers: buffers, wake: wake, orientation: orientation, delivery: delivery)
            buffers.release()
            running.value.store(false, ordering: .releasing)
            if let failure {
                device.file.close()
                delivery.finish(error: failure)
            }
        }
        thread.withLock { $0 = captureThread }
    }

    /// Whether the thread is still delivering.
    var isRunning: Bool { running.value.load(ordering: .acquiring) }

    /// Wakes the thread, waits for it to release the buffers and end.
    func stop() {
        wake.signal()
        thread.withLock { $0?.join() }
    }

    /// Polls and delivers until woken (returns nil) or until the device fails (returns the error).
    private static func loop(buffers: V4L2Buffers, wake: WakeUpEvent, orientation: VideoOrientation,
                             delivery: FrameDelivery) -> MediaDevicesError? {
        let file = buffers.device.file
        var fds = [pollfd(fd: file.rawValue, events: Int16(POLLIN), revents: 0),
                   pollfd(fd: wake.descriptor, events: Int16(POLLIN), revents: 0)]
        let deliver: (VideoFrame) -> Void = { delivery.deliver($0) }
        while true {
            fds[0].revents = 0
            fds[1].revents = 0
            let ready = fds.withUnsafeMutableBufferPointer { poll($0.baseAddress, 2, 500) }
            if ready < 0 {
                if errno == EINTR { continue }
                return MediaDevicesError.fromErrno(errno, device: file.path, operation: "poll")
            }
            if fds[1].revents != 0 { return nil }
            if ready == 0 {
                // No frame for a while: make sure the device is still there.
                var cap = v4l2_capability()
                let error = file.ioctlErrno(cv4l2_VIDIOC_QUERYCAP, &cap)
                if error == ENODEV || error == ENXIO {
                    return MediaDevicesError.fromErrno(error, device: file.path, operation: "VIDIOC_QUERYCAP")
                }
                continue
            }
            do {
                // POLLERR/POLLHUP: the DQBUF below reports the driver's error (EIO, ENODEV).
                while try buffers.withNextFrame(orientation: orientation, deliver) {}
                if fds[0].revents & Int16(POLLERR | POLLHUP | POLLNVAL) != 0 {
                    var cap = v4l2_capability()
                    let error = file.ioctlErrno(cv4l2_VIDIOC_QUERYCAP, &cap)
                    return MediaDevicesError.fromErrno(error == 0 ? EIO : error, device: file.path,
                                                       operation: error == 0 ? "VIDIOC_DQBUF" : "VIDIOC_QUERYCAP")
                }
            } catch let error as MediaDevicesError {
                return error
            } catch {
                return MediaDevicesError(.io, device: file.path, operation: "VIDIOC_DQBUF", detail: "\(error)")
            }
        }
    }
}
